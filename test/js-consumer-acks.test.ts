// Acknowledgements with the real client: ack, ackAck, nak (with delay), working, term, ack_wait
// redelivery with delivery counts, max_deliver with its advisory, backoff, ack_policy all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, nanos, type JetStreamClient, type JetStreamManager, type JsMsg, type NatsConnection } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-acks-');
  ({ nc, jsm, js } = fixture);
});

afterAll(() => fixture?.stop());

async function setup(name: string, count: number, config: object): Promise<void> {
  const lower = name.toLowerCase();
  await jsm.streams.add({ name, subjects: [`${lower}.>`] });
  for (let i = 1; i <= count; i++) await js.publish(`${lower}.x`, `m${i}`);
  await jsm.consumers.add(name, { durable_name: 'd', ack_policy: AckPolicy.Explicit, ...config });
}

/** Pulls until `n` messages arrived or `timeoutMs` passed; `onMsg` decides what to do with each. */
async function pullN(stream: string, n: number, timeoutMs: number, onMsg: (m: JsMsg) => void | Promise<void>): Promise<JsMsg[]> {
  const c = await js.consumers.get(stream, 'd');
  const got: JsMsg[] = [];
  const end = Date.now() + timeoutMs;
  while (got.length < n && Date.now() < end) {
    const m = await c.next({ expires: Math.max(1000, Math.min(3000, end - Date.now())) });
    if (m === null) continue;
    got.push(m);
    await onMsg(m);
  }
  return got;
}

describe('acknowledgements', () => {
  it('redelivers after ack_wait with a higher count and a new consumer sequence', async () => {
    await setup('A1', 1, { ack_wait: nanos(1000) });
    const got = await pullN('A1', 2, 8000, (m) => {
      if (m.info.redeliveryCount === 2) return m.ackAck().then(() => undefined);
    });
    expect(got.map((m) => [m.seq, m.info.redeliveryCount, m.info.deliverySequence, m.info.redelivered])).toEqual([
      [1, 1, 1, false],
      [1, 2, 2, true],
    ]);
    const ci = await jsm.consumers.info('A1', 'd');
    expect(ci.num_ack_pending).toBe(0);
    expect(ci.ack_floor.stream_seq).toBe(1);
    expect(ci.delivered.consumer_seq).toBe(2);
  });

  it('nak redelivers at once, nak with a delay later, working extends the deadline', async () => {
    await setup('A2', 1, { ack_wait: nanos(1500) });
    const started = Date.now();
    const times: number[] = [];
    const got = await pullN('A2', 3, 8000, async (m) => {
      times.push(Date.now() - started);
      const count = m.info.redeliveryCount;
      if (count === 1) m.nak();
      else if (count === 2) m.nak(800);
      else if (count === 3) {
        await new Promise((r) => setTimeout(r, 1000));
        m.working();
        await new Promise((r) => setTimeout(r, 1000));
        await m.ackAck();
      }
    });
    expect(got.map((m) => m.info.redeliveryCount)).toEqual([1, 2, 3]);
    // the delayed nak waited ~800 ms; +WPI kept the message from coming back before the ack at ~2 s
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(700);
  });

  it('term stops redelivery and emits the terminated advisory', async () => {
    await setup('A3', 1, { ack_wait: nanos(800) });
    const advisories: Array<Record<string, unknown>> = [];
    const sub = nc.subscribe('$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.A3.d', {
      callback: (_e, m) => advisories.push(m.json()),
    });
    await nc.flush();
    const got = await pullN('A3', 2, 2000, (m) => m.term());
    expect(got).toHaveLength(1);
    expect(advisories[0]).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.terminated', stream: 'A3', consumer: 'd', stream_seq: 1 });
    sub.unsubscribe();
  });

  it('stops after max_deliver with the MAX_DELIVERIES advisory, paced by backoff', async () => {
    await setup('A4', 1, { max_deliver: 3, backoff: [nanos(300), nanos(600)] });
    const advisories: Array<Record<string, unknown>> = [];
    const sub = nc.subscribe('$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.A4.d', {
      callback: (_e, m) => advisories.push(m.json()),
    });
    await nc.flush();
    const started = Date.now();
    const times: number[] = [];
    const got = await pullN('A4', 4, 2500, () => {
      times.push(Date.now() - started);
    });
    expect(got.map((m) => m.info.redeliveryCount)).toEqual([1, 2, 3]);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(250);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(550);
    expect(advisories[0]).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.max_deliver', stream: 'A4', consumer: 'd', stream_seq: 1, deliveries: 3 });
    sub.unsubscribe();
  });

  it('ack_policy all acknowledges everything before the acked message', async () => {
    await setup('A5', 5, { ack_policy: AckPolicy.All });
    const c = await js.consumers.get('A5', 'd');
    const got: JsMsg[] = [];
    for await (const m of await c.fetch({ max_messages: 5, expires: 1000 })) got.push(m);
    await got[2]!.ackAck();
    const ci = await jsm.consumers.info('A5', 'd');
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
    expect(ci.num_ack_pending).toBe(2);
  });

  it('ackAck is answered, also for a message already acknowledged', async () => {
    await setup('A6', 1, {});
    const m = await js.pull('A6', 'd');
    expect(await m.ackAck()).toBe(true);
    // the client refuses a second ackAck itself; the server still answers a raw re-ack
    const reply = (m as unknown as { msg: { reply: string } }).msg.reply;
    const again = await nc.request(reply, '+ACK', { timeout: 2000 });
    expect(again.data.length).toBe(0);
  });
});
