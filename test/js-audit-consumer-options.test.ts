// Audit of issue 5 item 4: consumer options not covered elsewhere, with the real `nats` client —
// ack none, +NXT, by_start_time, last_per_subject, filter_subjects, replay original, rate_limit_bps,
// max_ack_pending, and the num_redelivered / num_waiting numbers of consumer info.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AckPolicy,
  createInbox,
  DeliverPolicy,
  nanos,
  ReplayPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type Msg,
  type NatsConnection,
} from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

// filter_subjects is a 2.10 feature; nats-server 2.9.10 does not know it.
const SERVER_29 = process.env['E2E_SERVER'] === 'nats-server';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-audit-opts-');
  ({ nc, jsm, js } = fixture);
});

afterAll(() => fixture?.stop());

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond() && Date.now() < end) await sleep(20);
}

/**
 * Collects what arrives on a fresh inbox after publishing `body` to `subject` with it as reply, for at most
 * `waitMs`, or until `done` says the answer is complete.
 */
async function requestAll(subject: string, body: string, waitMs: number, done: (got: Msg[]) => boolean = () => false): Promise<Msg[]> {
  const inbox = createInbox();
  const got: Msg[] = [];
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const sub = nc.subscribe(inbox, {
    callback: (_e, m) => {
      got.push(m);
      if (done(got)) finish();
    },
  });
  nc.publish(subject, body, { reply: inbox });
  const timer = setTimeout(finish, waitMs);
  await finished;
  clearTimeout(timer);
  sub.unsubscribe();
  return got;
}

/** Messages (not status messages) of a raw pull. */
function dataOnly(msgs: Msg[]): Msg[] {
  return msgs.filter((m) => m.headers?.code === undefined || m.headers.code === 0);
}

/** The data messages of one raw pull (`expiresMs` short: the client's fetch() insists on at least 1 s). */
async function pullMsgs(stream: string, durable: string, batch: number, expiresMs: number): Promise<Msg[]> {
  const body = JSON.stringify({ batch, expires: nanos(expiresMs) });
  // complete when the batch is full or a terminating status (404/408/409) arrives
  const complete = (got: Msg[]): boolean => dataOnly(got).length === batch || got.some((m) => (m.headers?.code ?? 0) >= 400);
  return dataOnly(await requestAll(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`, body, expiresMs + 500, complete));
}

/** The reply $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending> carries the stream sequence. */
function streamSeq(m: Msg): number {
  return Number(m.reply!.split('.')[5]);
}

/** Stream sequences of one raw pull; acknowledges each message (synchronously) when `ack` is set. */
async function pullSeqs(stream: string, durable: string, batch: number, expiresMs: number, ack: boolean): Promise<number[]> {
  const msgs = await pullMsgs(stream, durable, batch, expiresMs);
  if (ack) for (const m of msgs) await nc.request(m.reply!, '+ACK', { timeout: 2000 });
  return msgs.map(streamSeq);
}

describe('consumer options (audit)', () => {
  it('ack_policy none: nothing pending, the ack floor follows delivery', async () => {
    await jsm.streams.add({ name: 'AN', subjects: ['an.>'] });
    for (let i = 0; i < 3; i++) await js.publish('an.x', String(i));
    await jsm.consumers.add('AN', { durable_name: 'd', ack_policy: AckPolicy.None });
    expect(await pullSeqs('AN', 'd', 3, 300, false)).toEqual([1, 2, 3]);
    const ci = await jsm.consumers.info('AN', 'd');
    expect(ci.delivered).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
    expect([ci.num_ack_pending, ci.num_pending, ci.num_redelivered]).toEqual([0, 0, 0]);
  });

  it('+NXT acknowledges and asks for the next batch on the ack reply', async () => {
    await jsm.streams.add({ name: 'NX', subjects: ['nx.>'] });
    for (let i = 1; i <= 4; i++) await js.publish('nx.x', `m${i}`);
    await jsm.consumers.add('NX', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const first = dataOnly(await requestAll('$JS.API.CONSUMER.MSG.NEXT.NX.d', JSON.stringify({ batch: 1 }), 1000, (g) => g.length === 1));
    expect(first.map((m) => m.string())).toEqual(['m1']);
    const next = dataOnly(await requestAll(first[0]!.reply!, '+NXT {"batch":2}', 1000, (g) => g.length === 2));
    expect(next.map((m) => m.string())).toEqual(['m2', 'm3']);
    const plain = dataOnly(await requestAll(next[0]!.reply!, '+NXT', 1000, (g) => g.length === 1));
    expect(plain.map((m) => m.string())).toEqual(['m4']);
    const ci = await jsm.consumers.info('NX', 'd');
    // m1 and m2 acknowledged by +NXT; m3 and m4 delivered only
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect(ci.num_ack_pending).toBe(2);
  });

  it('an unrecognised ack body changes nothing but is still answered', async () => {
    await jsm.streams.add({ name: 'UK', subjects: ['uk.>'] });
    await js.publish('uk.x', 'one');
    await jsm.consumers.add('UK', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const [m] = await pullMsgs('UK', 'd', 1, 300);
    const answer = await nc.request(m!.reply!, '+FOO', { timeout: 2000 });
    expect(answer.data.length).toBe(0);
    const ci = await jsm.consumers.info('UK', 'd');
    expect([ci.num_ack_pending, ci.ack_floor.stream_seq]).toEqual([1, 0]);
  });

  it('deliver_policy all, last, new and by_start_sequence deliver from the right message', async () => {
    await jsm.streams.add({ name: 'DP', subjects: ['dp.>'] });
    for (let i = 1; i <= 4; i++) await js.publish('dp.x', String(i));
    const policies: Array<[string, object]> = [
      ['all', { deliver_policy: DeliverPolicy.All }],
      ['last', { deliver_policy: DeliverPolicy.Last }],
      ['new', { deliver_policy: DeliverPolicy.New }],
      ['seq', { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 3 }],
    ];
    for (const [name, policy] of policies) await jsm.consumers.add('DP', { durable_name: name, ack_policy: AckPolicy.Explicit, ...policy });
    await js.publish('dp.x', '5');
    const got: Record<string, number[]> = {};
    for (const [name] of policies) got[name] = await pullSeqs('DP', name, 10, 250, true);
    expect(got).toEqual({ all: [1, 2, 3, 4, 5], last: [4, 5], new: [5], seq: [3, 4, 5] });
  });

  it('deliver_policy by_start_time starts at the first message at or after the time', async () => {
    await jsm.streams.add({ name: 'ST', subjects: ['st.>'] });
    for (let i = 0; i < 3; i++) await js.publish('st.x', 'old');
    await sleep(50);
    const start = new Date().toISOString();
    await sleep(50);
    for (let i = 0; i < 2; i++) await js.publish('st.x', 'new');
    const ci = await jsm.consumers.add('ST', {
      durable_name: 'd',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: start,
    });
    expect(ci.num_pending).toBe(2);
    expect(await pullSeqs('ST', 'd', 5, 300, true)).toEqual([4, 5]);
  });

  it('deliver_policy last_per_subject delivers the newest message of each subject, then new ones', async () => {
    await jsm.streams.add({ name: 'LP', subjects: ['lp.>'] });
    for (const s of ['lp.a', 'lp.b', 'lp.a', 'lp.c', 'lp.b']) await js.publish(s, s);
    const ci = await jsm.consumers.add('LP', {
      durable_name: 'd',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.LastPerSubject,
      filter_subject: 'lp.>', // required by nats-server (10093 without it)
    });
    expect(ci.num_pending).toBe(3);
    expect(await pullSeqs('LP', 'd', 5, 300, true)).toEqual([3, 4, 5]);
    await js.publish('lp.a', 'again');
    expect(await pullSeqs('LP', 'd', 5, 300, true)).toEqual([6]);
    const after = await jsm.consumers.info('LP', 'd');
    expect([after.num_pending, after.num_ack_pending]).toEqual([0, 0]);
  });

  it('a filtered consumer reports the stream position it scanned to, past messages not for it', async () => {
    await jsm.streams.add({ name: 'FP', subjects: ['fp.>'] });
    for (const s of ['fp.a', 'fp.b', 'fp.a', 'fp.b', 'fp.a']) await js.publish(s, s);
    await jsm.consumers.add('FP', { durable_name: 'd', ack_policy: AckPolicy.None, filter_subject: 'fp.b' });
    expect(await pullSeqs('FP', 'd', 5, 300, false)).toEqual([2, 4]);
    const ci = await jsm.consumers.info('FP', 'd');
    expect(ci.delivered).toMatchObject({ consumer_seq: 2, stream_seq: 5 });
    expect(ci.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 4 });
    expect(ci.num_pending).toBe(0);
  });

  it('filter_subjects (2.10) delivers only the messages matching one of the filters', async () => {
    await jsm.streams.add({ name: 'FS', subjects: ['fs.>'] });
    for (const s of ['fs.a', 'fs.b', 'fs.c', 'fs.a', 'fs.c', 'fs.b']) await js.publish(s, s);
    const add = jsm.consumers.add('FS', { durable_name: 'd', ack_policy: AckPolicy.Explicit, filter_subjects: ['fs.a', 'fs.c'] });
    if (SERVER_29) {
      // the client itself refuses filter_subjects against a 2.9 server
      await expect(add).rejects.toThrow();
      return;
    }
    const ci = await add;
    expect(ci.config.filter_subjects).toEqual(['fs.a', 'fs.c']);
    expect(ci.num_pending).toBe(4);
    expect(await pullSeqs('FS', 'd', 10, 300, true)).toEqual([1, 3, 4, 5]);
  });

  it('replay original keeps the publish spacing; instant does not', async () => {
    await jsm.streams.add({ name: 'RO', subjects: ['ro.>'] });
    await js.publish('ro.x', '1');
    await sleep(400);
    await js.publish('ro.x', '2');
    const arrivals = async (replay: ReplayPolicy): Promise<number[]> => {
      const deliver = createInbox();
      const times: number[] = [];
      const sub = nc.subscribe(deliver, { callback: () => times.push(Date.now()) });
      await nc.flush();
      await jsm.consumers.add('RO', { deliver_subject: deliver, ack_policy: AckPolicy.None, replay_policy: replay });
      await until(() => times.length === 2, 3000);
      sub.unsubscribe();
      return times;
    };
    const original = await arrivals(ReplayPolicy.Original);
    expect(original).toHaveLength(2);
    expect(original[1]! - original[0]!).toBeGreaterThanOrEqual(300);
    const instant = await arrivals(ReplayPolicy.Instant);
    expect(instant).toHaveLength(2);
    expect(instant[1]! - instant[0]!).toBeLessThan(300);
  });

  it('rate_limit_bps paces a push consumer', async () => {
    // max_msg_size bounds nats-server's limiter burst, so the pacing shows after two messages there too
    await jsm.streams.add({ name: 'RL', subjects: ['rl.>'], max_msg_size: 2000 });
    const body = 'x'.repeat(1000);
    for (let i = 0; i < 10; i++) await js.publish('rl.x', body);
    const deliver = createInbox();
    const times: number[] = [];
    const sub = nc.subscribe(deliver, { callback: () => times.push(Date.now()) });
    await nc.flush();
    const started = Date.now();
    // 80,000 bit/s = 10,000 B/s: ten 1 kB messages take about a second
    await jsm.consumers.add('RL', { deliver_subject: deliver, ack_policy: AckPolicy.None, rate_limit_bps: 80_000 });
    await until(() => times.length === 10, 5000);
    sub.unsubscribe();
    expect(times).toHaveLength(10);
    expect(times[9]! - started).toBeGreaterThanOrEqual(500);
  });

  it('max_ack_pending stops delivery until acknowledgements free room', async () => {
    await jsm.streams.add({ name: 'MA', subjects: ['ma.>'] });
    for (let i = 0; i < 5; i++) await js.publish('ma.x', String(i));
    await jsm.consumers.add('MA', { durable_name: 'd', ack_policy: AckPolicy.Explicit, max_ack_pending: 2 });
    const held = await pullMsgs('MA', 'd', 5, 300);
    expect(held.map(streamSeq)).toEqual([1, 2]);
    const ci = await jsm.consumers.info('MA', 'd');
    expect([ci.num_ack_pending, ci.num_pending]).toEqual([2, 3]);
    expect(await pullSeqs('MA', 'd', 5, 200, false)).toEqual([]);
    // acknowledging 1 and 2 frees room for two more
    for (const m of held) await nc.request(m.reply!, '+ACK', { timeout: 2000 });
    expect(await pullSeqs('MA', 'd', 5, 300, false)).toEqual([3, 4]);
  });

  it('with max_ack_pending reached, every expired message is still redelivered', async () => {
    await jsm.streams.add({ name: 'MR', subjects: ['mr.>'] });
    for (let i = 0; i < 4; i++) await js.publish('mr.x', String(i));
    await jsm.consumers.add('MR', { durable_name: 'd', ack_policy: AckPolicy.Explicit, max_ack_pending: 2, ack_wait: nanos(500) });
    expect((await pullMsgs('MR', 'd', 4, 300)).map(streamSeq)).toEqual([1, 2]);
    // both come back after ack_wait, as second deliveries, although no new message may go out
    const again = await pullMsgs('MR', 'd', 2, 3000);
    expect(again.map((m) => [streamSeq(m), Number(m.reply!.split('.')[4])])).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it('consumer info counts redelivered messages and waiting pull requests', async () => {
    await jsm.streams.add({ name: 'NI', subjects: ['ni.>'] });
    await js.publish('ni.x', 'one');
    await jsm.consumers.add('NI', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const c = await js.consumers.get('NI', 'd');
    const first = await c.next({ expires: 1000 });
    first!.nak();
    const second = await c.next({ expires: 1000 });
    expect(second?.info.redeliveryCount).toBe(2);
    const ci = await jsm.consumers.info('NI', 'd');
    expect([ci.num_redelivered, ci.num_ack_pending, ci.num_pending, ci.num_waiting]).toEqual([1, 1, 0, 0]);
    expect(ci.delivered).toMatchObject({ consumer_seq: 2, stream_seq: 1 });
    // a pull request parked on the consumer (nothing to deliver) counts as waiting
    const inbox = createInbox();
    const holder = nc.subscribe(inbox);
    nc.publish('$JS.API.CONSUMER.MSG.NEXT.NI.d', JSON.stringify({ batch: 1, expires: nanos(3000) }), { reply: inbox });
    await nc.flush();
    const waiting = await jsm.consumers.info('NI', 'd');
    expect(waiting.num_waiting).toBe(1);
    holder.unsubscribe();
    await second!.ackAck();
    const done = await jsm.consumers.info('NI', 'd');
    expect([done.num_redelivered, done.num_ack_pending]).toEqual([0, 0]);
    expect(done.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 1 });
  });
});
