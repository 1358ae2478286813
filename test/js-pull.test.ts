// Pull consumers with the real client: js.pull, legacy js.fetch, consumers.get fetch/next/consume,
// ordered pull consumers, and the status messages of CONSUMER.MSG.NEXT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, createInbox, nanos, type JetStreamClient, type JetStreamManager, type Msg, type NatsConnection } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-pull-');
  ({ nc, jsm, js } = fixture);
});

afterAll(() => fixture?.stop());

async function stream(name: string, count: number): Promise<void> {
  const lower = name.toLowerCase();
  await jsm.streams.add({ name, subjects: [`${lower}.>`] });
  for (let i = 1; i <= count; i++) await js.publish(`${lower}.${i % 2 === 0 ? 'even' : 'odd'}`, `m${i}`);
}

/** Publishes a raw pull request and collects what comes back for `waitMs`. */
async function rawPull(subject: string, body: object, waitMs: number): Promise<Msg[]> {
  const inbox = createInbox();
  const got: Msg[] = [];
  const sub = nc.subscribe(inbox, { callback: (_e, m) => got.push(m) });
  nc.publish(subject, JSON.stringify(body), { reply: inbox });
  await new Promise((r) => setTimeout(r, waitMs));
  sub.unsubscribe();
  return got;
}

describe('pull consumers', () => {
  it('js.pull gets one message with its metadata, and acks move the floor', async () => {
    await stream('P1', 3);
    await jsm.consumers.add('P1', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const m = await js.pull('P1', 'd');
    expect(m.subject).toBe('p1.odd');
    expect(m.string()).toBe('m1');
    expect(m.seq).toBe(1);
    expect(m.info).toMatchObject({ stream: 'P1', consumer: 'd', redeliveryCount: 1, streamSequence: 1, deliverySequence: 1, pending: 2 });
    await m.ackAck();
    const ci = await jsm.consumers.info('P1', 'd');
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 1, stream_seq: 1 });
    expect([ci.num_ack_pending, ci.num_pending]).toEqual([0, 2]);
  });

  it('legacy js.fetch returns a batch and ends on expiry', async () => {
    await stream('P2', 5);
    await jsm.consumers.add('P2', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const got: string[] = [];
    for await (const m of js.fetch('P2', 'd', { batch: 10, expires: 500 })) {
      got.push(m.string());
      m.ack();
    }
    expect(got).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  });

  it('consumers.get: fetch, next and consume', async () => {
    await stream('P3', 10);
    await jsm.consumers.add('P3', { durable_name: 'd', ack_policy: AckPolicy.Explicit, filter_subject: 'p3.even' });
    const c = await js.consumers.get('P3', 'd');
    const fetched: number[] = [];
    for await (const m of await c.fetch({ max_messages: 2, expires: 1000 })) {
      fetched.push(m.seq);
      m.ack();
    }
    expect(fetched).toEqual([2, 4]);
    const next = await c.next({ expires: 1000 });
    expect(next?.seq).toBe(6);
    next?.ack();
    const consumed: number[] = [];
    const messages = await c.consume({ max_messages: 3 });
    for await (const m of messages) {
      consumed.push(m.seq);
      m.ack();
      if (consumed.length === 2) break;
    }
    expect(consumed).toEqual([8, 10]);
    const info = await c.info();
    expect(info.num_pending).toBe(0);
  });

  it('an ordered pull consumer reads the whole stream in order', async () => {
    await stream('P4', 20);
    const c = await js.consumers.get('P4');
    const seqs: number[] = [];
    for await (const m of await c.fetch({ max_messages: 20, expires: 2000 })) {
      seqs.push(m.seq);
      if (seqs.length === 20) break;
    }
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('sends the 404, 408 and 409 statuses with their headers', async () => {
    await stream('P5', 2);
    await jsm.consumers.add('P5', { durable_name: 'd', ack_policy: AckPolicy.Explicit, max_waiting: 1 });
    const subject = '$JS.API.CONSUMER.MSG.NEXT.P5.d';
    const partial = await rawPull(subject, { batch: 3, no_wait: true }, 300);
    expect(partial.map((m) => m.string())).toEqual(['m1', 'm2', '']);
    expect(partial[2]!.headers?.code).toBe(408);
    expect(partial[2]!.headers?.get('Nats-Pending-Messages')).toBe('1');
    expect(partial[2]!.headers?.get('Nats-Pending-Bytes')).toBe('0');
    const none = await rawPull(subject, { batch: 1, no_wait: true }, 200);
    expect([none[0]!.headers?.code, none[0]!.headers?.description]).toEqual([404, 'No Messages']);
    const expiring = await rawPull(subject, { batch: 4, expires: nanos(300) }, 700);
    expect([expiring[0]!.headers?.code, expiring[0]!.headers?.description]).toEqual([408, 'Request Timeout']);
    expect(expiring[0]!.headers?.get('Nats-Pending-Messages')).toBe('4');
    // max_waiting 1: a second waiting request is refused
    const inbox = createInbox();
    const holder = nc.subscribe(inbox);
    nc.publish(subject, JSON.stringify({ batch: 1, expires: nanos(5000) }), { reply: inbox });
    await nc.flush();
    const refused = await rawPull(subject, { batch: 1, expires: nanos(5000) }, 200);
    expect([refused[0]!.headers?.code, refused[0]!.headers?.description]).toEqual([409, 'Exceeded MaxWaiting']);
    holder.unsubscribe();
  });

  it('ends a request with 409 when the next message exceeds max_bytes, and heartbeats while waiting', async () => {
    await jsm.streams.add({ name: 'P6', subjects: ['p6.>'] });
    await js.publish('p6.big', 'x'.repeat(1000));
    await jsm.consumers.add('P6', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const subject = '$JS.API.CONSUMER.MSG.NEXT.P6.d';
    const small = await rawPull(subject, { batch: 1, max_bytes: 100, expires: nanos(1000) }, 300);
    expect([small[0]!.headers?.code, small[0]!.headers?.description]).toEqual([409, 'Message Size Exceeds MaxBytes']);
    expect(small[0]!.headers?.get('Nats-Pending-Bytes')).toBe('100');
    const first = await rawPull(subject, { batch: 1 }, 200);
    expect(first[0]!.data.length).toBe(1000);
    const hb = await rawPull(subject, { batch: 1, expires: nanos(1000), idle_heartbeat: nanos(200) }, 700);
    const beat = hb.find((m) => m.headers?.code === 100);
    expect(beat?.headers?.description).toBe('Idle Heartbeat');
    expect(beat?.headers?.get('Nats-Last-Consumer')).toBe('1');
    expect(beat?.headers?.get('Nats-Last-Stream')).toBe('1');
  });
});
