// Consumer pause on one node, through the stock @nats-io/jetstream 3.4.0 client: `pause_until` at create,
// `jsm.consumers.pause` / `resume` ($JS.API.CONSUMER.PAUSE), ConsumerInfo's `paused` / `pause_remaining`,
// nothing delivered while paused (a waiting pull gets its messages once resumed; a push consumer likewise),
// resuming on its own at the deadline, and the `consumer_pause` advisory. nats-server 2.9.10 predates pause
// (2.11), so this runs against Flotilla only; the expected shapes and errors are nats-server 2.14.5's, read
// from its source: jetstream_api.go (jsConsumerPauseRequest, JSApiConsumerPauseResponse), consumer.go
// (ConsumerInfo, updatePauseState, sendPauseAdvisoryLocked, loopAndGatherMsgs' pause check),
// jetstream_events.go (JSConsumerPauseAdvisory) and errors.json (10014, 10025, 10059).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { AckPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { sleep } from './helpers/flotilla-process.js';
import { JetStreamV3Server, jsApiFailure as apiFailure } from './helpers/jetstream-v3-server.js';

const srv = new JetStreamV3Server('flotilla-pause-');
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const dec = new TextDecoder();

beforeAll(async () => {
  ({ nc, js, jsm } = await srv.start());
  await jsm.streams.add({ name: 'P', subjects: ['p.>'] });
});
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

/** Advisories on `subject`, parsed, as they arrive. */
function collect(subject: string): { sub: Subscription; got: Array<Record<string, unknown>> } {
  const got: Array<Record<string, unknown>> = [];
  const sub = nc.subscribe(subject, { callback: (_e, m) => got.push(JSON.parse(dec.decode(m.data)) as Record<string, unknown>) });
  return { sub, got };
}

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('consumer pause on one node', () => {
  it('pause_until at create: info says paused; a pull waits and gets its messages once resumed', async () => {
    const until1h = new Date(Date.now() + 3_600_000);
    const ci = await jsm.consumers.add('P', { durable_name: 'AT_CREATE', ack_policy: AckPolicy.Explicit, filter_subject: 'p.create', pause_until: until1h.toISOString() });
    expect(ci.config.pause_until).toBe(until1h.toISOString().replace('.000Z', 'Z').replace(/(\.\d*?)0+Z$/, '$1Z'));
    expect(ci.paused).toBe(true);
    expect(ci.pause_remaining).toBeGreaterThan(3_500_000_000_000);
    expect(ci.pause_remaining).toBeLessThanOrEqual(3_600_000_000_000);
    for (let i = 1; i <= 3; i++) await js.publish('p.create', `c-${i}`);

    const consumer = await js.consumers.get('P', 'AT_CREATE');
    const started = Date.now();
    const batch = await consumer.fetch({ max_messages: 3, expires: 4000 });
    const got: string[] = [];
    const reading = (async () => {
      for await (const m of batch) {
        got.push(dec.decode(m.data));
        m.ack();
      }
    })();
    await sleep(700);
    expect(got).toEqual([]);
    const waiting = await jsm.consumers.info('P', 'AT_CREATE');
    expect(waiting.num_waiting).toBe(1);
    expect(waiting.num_pending).toBe(3);
    expect(waiting.delivered.stream_seq).toBe(0);

    const resumed = await jsm.consumers.resume('P', 'AT_CREATE');
    // nats.js resumes with the epoch, which 2.14 keeps as the (past) deadline.
    expect(resumed).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_pause_response', paused: false, pause_until: '1970-01-01T00:00:00Z' });
    await reading;
    expect(got).toEqual(['c-1', 'c-2', 'c-3']);
    expect(Date.now() - started).toBeLessThan(4000);
    const after = await jsm.consumers.info('P', 'AT_CREATE');
    expect(after.paused).toBeUndefined();
    expect(after.pause_remaining).toBeUndefined();
    expect(after.config.pause_until).toBe('1970-01-01T00:00:00Z');
  });

  it('jsm.consumers.pause: the response, the advisory, nothing delivered, and delivery again at the deadline', async () => {
    await jsm.consumers.add('P', { durable_name: 'TIMED', ack_policy: AckPolicy.Explicit, filter_subject: 'p.timed' });
    const adv = collect('$JS.EVENT.ADVISORY.CONSUMER.PAUSE.P.TIMED');
    const deadline = new Date(Date.now() + 1500);
    const resp = await jsm.consumers.pause('P', 'TIMED', deadline);
    expect(resp.paused).toBe(true);
    expect(Date.parse(resp.pause_until)).toBe(deadline.getTime());
    expect(resp.pause_remaining).toBeGreaterThan(1_000_000_000);
    expect(resp.pause_remaining).toBeLessThanOrEqual(1_500_000_000);
    for (let i = 1; i <= 2; i++) await js.publish('p.timed', `t-${i}`);

    const consumer = await js.consumers.get('P', 'TIMED');
    const batch = await consumer.fetch({ max_messages: 2, expires: 5000 });
    const arrivals: Array<{ data: string; atMs: number }> = [];
    for await (const m of batch) {
      arrivals.push({ data: dec.decode(m.data), atMs: Date.now() });
      m.ack();
    }
    expect(arrivals.map((a) => a.data)).toEqual(['t-1', 't-2']);
    // Nothing before the deadline (the timer may fire a few ms late, never early).
    expect(arrivals[0]!.atMs).toBeGreaterThanOrEqual(deadline.getTime());
    console.log(`paused consumer delivered ${arrivals[0]!.atMs - deadline.getTime()} ms after its pause_until`);

    await until(() => adv.got.length >= 2, 2000);
    adv.sub.unsubscribe();
    const [paused, unpaused] = adv.got;
    expect(paused).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.consumer_pause', stream: 'P', consumer: 'TIMED', paused: true, pause_until: resp.pause_until });
    expect(typeof paused!['id']).toBe('string');
    expect(typeof paused!['timestamp']).toBe('string');
    expect(unpaused).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.consumer_pause', stream: 'P', consumer: 'TIMED', paused: false, pause_until: resp.pause_until });
  });

  it('a push consumer sends nothing while paused and delivers after resume', async () => {
    const inbox = nc.options.inboxPrefix ? `${nc.options.inboxPrefix}.push` : '_INBOX.pausepush';
    const got: string[] = [];
    const sub = nc.subscribe(inbox, { callback: (_e, m) => (m.data.length > 0 ? got.push(dec.decode(m.data)) : undefined) });
    await nc.flush();
    await jsm.consumers.add('P', {
      durable_name: 'PUSHED',
      ack_policy: AckPolicy.None,
      filter_subject: 'p.push',
      deliver_subject: inbox,
      pause_until: new Date(Date.now() + 3_600_000).toISOString(),
    });
    for (let i = 1; i <= 3; i++) await js.publish('p.push', `u-${i}`);
    await sleep(600);
    expect(got).toEqual([]);
    expect((await jsm.consumers.info('P', 'PUSHED')).paused).toBe(true);
    const adv = collect('$JS.EVENT.ADVISORY.CONSUMER.PAUSE.P.PUSHED');
    await jsm.consumers.resume('P', 'PUSHED');
    await until(() => got.length === 3, 3000);
    expect(got).toEqual(['u-1', 'u-2', 'u-3']);
    await until(() => adv.got.length === 1, 2000);
    expect(adv.got[0]).toMatchObject({ paused: false, pause_until: '1970-01-01T00:00:00Z' });
    sub.unsubscribe();
    adv.sub.unsubscribe();
  });

  it('an update carrying pause_until pauses too, and CONSUMER.PAUSE keeps the rest of the config', async () => {
    const ci = await jsm.consumers.add('P', { durable_name: 'UPD', ack_policy: AckPolicy.Explicit, filter_subject: 'p.upd', max_ack_pending: 7, description: 'keep me' });
    await jsm.consumers.pause('P', 'UPD', new Date(Date.now() + 60_000));
    const paused = await jsm.consumers.info('P', 'UPD');
    expect(paused.paused).toBe(true);
    // Everything but pause_until is kept; the stored API level rises to 1 with it (2.14 setStaticConsumerMetadata).
    expect({ ...paused.config, pause_until: undefined, metadata: undefined }).toEqual({ ...ci.config, pause_until: undefined, metadata: undefined });
    expect([ci.config.metadata?.['_nats.req.level'], paused.config.metadata?.['_nats.req.level']]).toEqual(['0', '1']);
    const updated = await jsm.consumers.update('P', 'UPD', { description: 'still paused', pause_until: new Date(Date.now() + 120_000).toISOString() });
    expect(updated.paused).toBe(true);
    expect(updated.pause_remaining).toBeGreaterThan(100_000_000_000);
    // A body that is not a JSON object (or an empty one) resumes, as 2.14 decodes only objects and arrays.
    const raw = await nc.request('$JS.API.CONSUMER.PAUSE.P.UPD', '');
    expect(JSON.parse(dec.decode(raw.data))).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_pause_response', paused: false, pause_until: '0001-01-01T00:00:00Z' });
    const resumed = await jsm.consumers.info('P', 'UPD');
    expect(resumed.paused).toBeUndefined();
    expect(resumed.config.pause_until).toBeUndefined();
  });

  it("answers a missing stream or consumer and a bad body with 2.14's errors", async () => {
    expect(await apiFailure(jsm.consumers.pause('NOPE', 'C', new Date(Date.now() + 1000)))).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
    expect(await apiFailure(jsm.consumers.pause('P', 'NOPE', new Date(Date.now() + 1000)))).toEqual({ code: 404, err_code: 10014, description: 'consumer not found' });
    const bad = await nc.request('$JS.API.CONSUMER.PAUSE.P.UPD', '{"pause_until": 5}');
    const body = JSON.parse(dec.decode(bad.data)) as { error: { code: number; err_code: number; description: string } };
    expect(body.error.code).toBe(400);
    expect(body.error.err_code).toBe(10025);
    expect(body.error.description.startsWith('invalid JSON: ')).toBe(true);
  });
});

