// Push consumers with the real client: js.subscribe (durable, queue group), ordered push consumers,
// heartbeats, flow control and headers_only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AckPolicy,
  consumerOpts,
  createInbox,
  headers,
  nanos,
  type JetStreamClient,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
} from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-push-');
  ({ nc, jsm, js } = fixture);
});

afterAll(() => fixture?.stop());

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

describe('push consumers', () => {
  it('a durable push subscription receives every message with its subject and headers', async () => {
    await jsm.streams.add({ name: 'U1', subjects: ['u1.>'] });
    const h = headers();
    h.set('Foo', 'bar');
    await js.publish('u1.a', 'one');
    await js.publish('u1.b', 'two', { headers: h });
    const opts = consumerOpts().durable('dur').deliverTo(createInbox()).ackExplicit();
    const sub = await js.subscribe('u1.>', opts);
    const got: Array<[string, string, string | undefined]> = [];
    for await (const m of sub) {
      got.push([m.subject, m.string(), m.headers?.get('Foo')]);
      m.ack();
      if (got.length === 2) break;
    }
    expect(got).toEqual([
      ['u1.a', 'one', undefined],
      ['u1.b', 'two', 'bar'],
    ]);
    const ci = await jsm.consumers.info('U1', 'dur');
    expect(ci.config.deliver_subject).toMatch(/^_INBOX\./);
  });

  it('shares messages across a queue group', async () => {
    await jsm.streams.add({ name: 'U2', subjects: ['u2.>'] });
    const deliver = createInbox();
    const counts = [0, 0];
    const subs = [];
    for (let i = 0; i < 2; i++) {
      const opts = consumerOpts().durable('q').deliverTo(deliver).queue('workers').ackExplicit();
      opts.callback((_err, m) => {
        if (m) {
          counts[i]!++;
          m.ack();
        }
      });
      subs.push(await js.subscribe('u2.>', opts));
    }
    for (let i = 0; i < 40; i++) await js.publish('u2.x', String(i));
    await until(() => counts[0]! + counts[1]! === 40);
    expect(counts[0]! + counts[1]!).toBe(40);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
    for (const s of subs) s.unsubscribe();
  });

  it('an ordered push consumer delivers in order and keeps working across idle time', async () => {
    await jsm.streams.add({ name: 'U3', subjects: ['u3.>'] });
    for (let i = 1; i <= 50; i++) await js.publish('u3.x', String(i));
    const opts = consumerOpts().orderedConsumer().idleHeartbeat(500);
    const sub = await js.subscribe('u3.>', opts);
    const seen: number[] = [];
    const done = (async () => {
      for await (const m of sub) {
        seen.push(m.seq);
        if (seen.length === 51) break;
      }
    })();
    await until(() => seen.length === 50);
    // idle for a few heartbeats: the consumer must not be reset by missed or wrong heartbeats
    await new Promise((r) => setTimeout(r, 1200));
    await js.publish('u3.x', '51');
    await done;
    expect(seen).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
  });

  it('sends idle heartbeats and flow control requests on the deliver subject', async () => {
    await jsm.streams.add({ name: 'U4', subjects: ['u4.>'] });
    const chunk = 'x'.repeat(100_000);
    for (let i = 0; i < 15; i++) await js.publish('u4.x', chunk);
    const deliver = createInbox();
    const got: Msg[] = [];
    const sub = nc.subscribe(deliver, {
      callback: (_e, m) => {
        got.push(m);
        // answer flow control like the client does
        if (m.headers?.code === 100 && m.reply) m.respond();
      },
    });
    await jsm.consumers.add('U4', { deliver_subject: deliver, ack_policy: AckPolicy.None, flow_control: true, idle_heartbeat: nanos(300) });
    await until(() => got.filter((m) => m.data.length > 0).length === 15);
    await new Promise((r) => setTimeout(r, 800));
    sub.unsubscribe();
    expect(got.filter((m) => m.data.length > 0)).toHaveLength(15);
    const fc = got.filter((m) => m.headers?.description === 'FlowControl Request');
    expect(fc.length).toBeGreaterThanOrEqual(1);
    expect(fc[0]!.reply).toMatch(/^\$JS\.FC\.U4\./);
    const hb = got.filter((m) => m.headers?.description === 'Idle Heartbeat');
    expect(hb.length).toBeGreaterThanOrEqual(1);
    expect(hb[hb.length - 1]!.headers?.get('Nats-Last-Consumer')).toBe('15');
    expect(hb[hb.length - 1]!.headers?.get('Nats-Last-Stream')).toBe('15');
  });

  it('headers_only delivers headers and Nats-Msg-Size with an empty body', async () => {
    await jsm.streams.add({ name: 'U5', subjects: ['u5.>'] });
    await js.publish('u5.x', 'hello');
    const deliver = createInbox();
    const got: Msg[] = [];
    const sub = nc.subscribe(deliver, { callback: (_e, m) => got.push(m) });
    await jsm.consumers.add('U5', { deliver_subject: deliver, ack_policy: AckPolicy.None, headers_only: true });
    await until(() => got.length === 1);
    sub.unsubscribe();
    expect(got[0]!.subject).toBe('u5.x');
    expect(got[0]!.data.length).toBe(0);
    expect(got[0]!.headers?.get('Nats-Msg-Size')).toBe('5');
  });

  it('reports push_bound while the deliver subject has a subscriber', async () => {
    await jsm.streams.add({ name: 'U6', subjects: ['u6.>'] });
    const deliver = createInbox();
    await jsm.consumers.add('U6', { durable_name: 'pb', deliver_subject: deliver, ack_policy: AckPolicy.Explicit });
    expect((await jsm.consumers.info('U6', 'pb')).push_bound).toBeFalsy();
    const sub = nc.subscribe(deliver);
    await nc.flush();
    expect((await jsm.consumers.info('U6', 'pb')).push_bound).toBe(true);
    sub.unsubscribe();
  });
});
