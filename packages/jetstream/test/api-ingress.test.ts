// The ingress relay (cluster/api-ingress.ts): the copy a node decides answers to the relay inbox of the node
// the request entered by; that node relays the first answer to the client and drops later ones; the pending
// table is bounded in age and size.
import { describe, expect, it } from 'vitest';
import { ApiIngress, relayInboxOf } from '../src/cluster/api-ingress.js';
import { FakeBus } from './support/fake-bus.js';

const empty = Buffer.alloc(0);

function setup(keepMs?: number, maxPending?: number): { bus: FakeBus; ingress: ApiIngress; client: string[] } {
  const bus = new FakeBus();
  const ingress = new ApiIngress(bus, 'SELF', keepMs, maxPending);
  ingress.start();
  const client: string[] = [];
  bus.subscribe('_INBOX.>', (m) => client.push(`${m.subject} ${m.data.toString()}`));
  return { bus, ingress, client };
}

function enter(ingress: ApiIngress, reply: string): string {
  return ingress.entered({ subject: '$JS.API.STREAM.INFO.S', reply, header: null, data: empty }).reply!;
}

describe('ApiIngress', () => {
  it('answers go to its relay inbox; only the first of two reaches the client', () => {
    const { bus, ingress, client } = setup();
    const relay = enter(ingress, '_INBOX.c.1');
    expect(relay).toBe('$JSC.RLY.SELF._INBOX.c.1');
    expect(relayInboxOf('OTHER', '_INBOX.c.1')).toBe('$JSC.RLY.OTHER._INBOX.c.1');
    bus.publish(relay, null, null, Buffer.from('old leader'));
    bus.publish(relay, null, null, Buffer.from('new leader'));
    expect(client).toEqual(['_INBOX.c.1 old leader']);
    expect(ingress.stats).toEqual({ entered: 1, relayed: 1, dropped: 1 });
  });

  it('keeps requests apart, and a reply subject asked again after its answer is relayed again', () => {
    const { bus, ingress, client } = setup();
    const a = enter(ingress, '_INBOX.c.1');
    const b = enter(ingress, '_INBOX.c.2');
    bus.publish(b, null, null, Buffer.from('b'));
    bus.publish(a, null, null, Buffer.from('a'));
    enter(ingress, '_INBOX.c.1');
    bus.publish(a, null, null, Buffer.from('again'));
    expect(client).toEqual(['_INBOX.c.2 b', '_INBOX.c.1 a', '_INBOX.c.1 again']);
  });

  it('announces its relay inbox while started', () => {
    const { ingress } = setup();
    expect(ingress.relaysFor('SELF')).toBe(true);
    expect(ingress.relaysFor('OTHER')).toBe(false);
    ingress.stop();
    expect(ingress.relaysFor('SELF')).toBe(false);
  });

  it('forgets the oldest request beyond its bound, and answers past keepMs', async () => {
    const bounded = setup(60_000, 2);
    const relays = [1, 2, 3].map((i) => enter(bounded.ingress, `_INBOX.c.${i}`));
    for (const [i, r] of relays.entries()) bounded.bus.publish(r, null, null, Buffer.from(String(i + 1)));
    expect(bounded.client).toEqual(['_INBOX.c.2 2', '_INBOX.c.3 3']);
    const aged = setup(20, 100);
    const late = enter(aged.ingress, '_INBOX.c.1');
    await new Promise((r) => setTimeout(r, 40));
    enter(aged.ingress, '_INBOX.c.2');
    aged.bus.publish(late, null, null, Buffer.from('late'));
    expect(aged.client).toEqual([]);
  });
});
