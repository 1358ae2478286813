// The ingress relay (cluster/api-ingress.ts): a client's request goes out once under $JSC.FWD. with the relay
// inbox as its reply, the first answer reaches the client, later ones are dropped, and the pending table is
// bounded in age and size.
import { describe, expect, it } from 'vitest';
import { ApiIngress, FORWARDED_PREFIX, forwardedOriginal, isForwarded, publishSubjectOf } from '../src/cluster/api-ingress.js';
import { FakeBus } from './support/fake-bus.js';

const empty = Buffer.alloc(0);

function setup(keepMs?: number, maxPending?: number): { bus: FakeBus; ingress: ApiIngress; forwarded: Array<{ subject: string; reply: string }>; client: string[] } {
  const bus = new FakeBus();
  const ingress = new ApiIngress(bus, 'SELF', keepMs, maxPending);
  ingress.start();
  const forwarded: Array<{ subject: string; reply: string }> = [];
  bus.subscribe(`${FORWARDED_PREFIX}>`, (m) => forwarded.push({ subject: m.subject, reply: m.reply! }));
  const client: string[] = [];
  bus.subscribe('_INBOX.>', (m) => client.push(`${m.subject} ${m.data.toString()}`));
  return { bus, ingress, forwarded, client };
}

describe('ApiIngress', () => {
  it('forwards a request once and relays only the first of two answers', () => {
    const { bus, ingress, forwarded, client } = setup();
    ingress.forward({ subject: '$JS.API.STREAM.INFO.S', reply: '_INBOX.c.1', header: null, data: empty });
    expect(forwarded).toEqual([{ subject: '$JSC.FWD.$JS.API.STREAM.INFO.S', reply: '$JSC.RLY.SELF.1' }]);
    bus.publish('$JSC.RLY.SELF.1', null, null, Buffer.from('old leader'));
    bus.publish('$JSC.RLY.SELF.1', null, null, Buffer.from('new leader'));
    expect(client).toEqual(['_INBOX.c.1 old leader']);
    expect(ingress.stats).toEqual({ forwarded: 1, relayed: 1, dropped: 1 });
  });

  it('keeps requests apart and announces its relay inbox', () => {
    const { bus, ingress, client } = setup();
    ingress.forward({ subject: '$JS.API.INFO', reply: '_INBOX.c.1', header: null, data: empty });
    ingress.forward({ subject: '$JS.API.INFO', reply: '_INBOX.c.2', header: null, data: empty });
    bus.publish('$JSC.RLY.SELF.2', null, null, Buffer.from('b'));
    bus.publish('$JSC.RLY.SELF.1', null, null, Buffer.from('a'));
    expect(client).toEqual(['_INBOX.c.2 b', '_INBOX.c.1 a']);
    expect(ingress.relaysFor('SELF')).toBe(true);
    expect(ingress.relaysFor('OTHER')).toBe(false);
    ingress.stop();
    expect(ingress.relaysFor('SELF')).toBe(false);
  });

  it('forgets the oldest request beyond its bound, and answers past keepMs', async () => {
    const bounded = setup(60_000, 2);
    for (let i = 1; i <= 3; i++) bounded.ingress.forward({ subject: '$JS.API.INFO', reply: `_INBOX.c.${i}`, header: null, data: empty });
    for (let i = 1; i <= 3; i++) bounded.bus.publish(`$JSC.RLY.SELF.${i}`, null, null, Buffer.from(String(i)));
    expect(bounded.client).toEqual(['_INBOX.c.2 2', '_INBOX.c.3 3']);
    const aged = setup(20, 100);
    aged.ingress.forward({ subject: '$JS.API.INFO', reply: '_INBOX.c.1', header: null, data: empty });
    await new Promise((r) => setTimeout(r, 40));
    aged.ingress.forward({ subject: '$JS.API.INFO', reply: '_INBOX.c.2', header: null, data: empty });
    aged.bus.publish('$JSC.RLY.SELF.1', null, null, Buffer.from('late'));
    expect(aged.client).toEqual([]);
  });

  it('a forwarded copy reads as the request it carries, and is republished forwarded', () => {
    const plain = { subject: '$JS.API.INFO', reply: 'r', header: null, data: empty };
    expect(forwardedOriginal(plain)).toBeNull();
    const fwd = forwardedOriginal({ ...plain, subject: '$JSC.FWD.$JS.API.INFO' })!;
    expect(fwd.subject).toBe('$JS.API.INFO');
    expect(isForwarded(fwd)).toBe(true);
    expect(publishSubjectOf(fwd)).toBe('$JSC.FWD.$JS.API.INFO');
    expect(publishSubjectOf(plain)).toBe('$JS.API.INFO');
  });
});
