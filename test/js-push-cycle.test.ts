// Push consumers deliver only to client subscriptions: a stream's own capture is no delivery target, so two
// streams with consumers delivering into each other do not loop; a deliver subject inside the consumer's own
// stream is refused (10081); and a loop a client keeps alive on purpose still leaves the node answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, connect, StorageType, type JetStreamManager, type NatsConnection } from 'nats';
import { startJetStreamServer, rejectionOf, type JetStreamServer } from './helpers/jetstream-server.js';
import { sleep } from './helpers/flotilla-process.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-push-cycle-');
  ({ nc, jsm } = fixture);
});

afterAll(() => fixture?.stop());

/** A hang shows as a timeout here; the bound is generous for a loaded machine. */
const ANSWER_BOUND_MS = 8000;

/** /healthz, a new connection and a JetStream API call each answer within the bound. */
async function nodeAnswers(stream: string): Promise<void> {
  const health = await fetch(`http://127.0.0.1:${fixture.server.httpPort}/healthz`, { signal: AbortSignal.timeout(ANSWER_BOUND_MS) });
  expect(health.status).toBe(200);
  const fresh = await connect({ servers: fixture.server.url, timeout: ANSWER_BOUND_MS, reconnect: false });
  try {
    const freshJsm = await fresh.jetstreamManager({ timeout: ANSWER_BOUND_MS });
    const info = await freshJsm.streams.info(stream);
    expect(info.config.name).toBe(stream);
  } finally {
    await fresh.close();
  }
}

/** Two memory streams whose push consumers deliver into each other's subjects. */
async function crossedStreams(prefix: string, maxMsgs = -1): Promise<void> {
  const a = `${prefix}A`;
  const b = `${prefix}B`;
  const sa = `${prefix.toLowerCase()}a`;
  const sb = `${prefix.toLowerCase()}b`;
  await jsm.streams.add({ name: a, subjects: [`${sa}.>`], storage: StorageType.Memory, max_msgs: maxMsgs });
  await jsm.streams.add({ name: b, subjects: [`${sb}.>`], storage: StorageType.Memory, max_msgs: maxMsgs });
  await jsm.consumers.add(a, { durable_name: 'toB', deliver_subject: `${sb}.in`, ack_policy: AckPolicy.None });
  await jsm.consumers.add(b, { durable_name: 'toA', deliver_subject: `${sa}.in`, ack_policy: AckPolicy.None });
}

describe('push consumer delivery targets', () => {
  it('two streams delivering into each other without a client do not loop, and the node keeps answering', async () => {
    await crossedStreams('L1');
    await nc.jetstream().publish('l1a.start', 'seed');
    await sleep(300);
    await nodeAnswers('L1A');
    // Neither consumer counted the other stream's capture as a subscriber: nothing moved.
    expect((await jsm.streams.info('L1A')).state.messages).toBe(1);
    expect((await jsm.streams.info('L1B')).state.messages).toBe(0);
    expect((await jsm.consumers.info('L1A', 'toB')).push_bound).toBeFalsy();
  });

  it('a deliver subject that forms a cycle with its own stream is refused with 10081', async () => {
    await jsm.streams.add({ name: 'CY', subjects: ['cy.>'] });
    const err = await rejectionOf(jsm.consumers.add('CY', { durable_name: 'self', deliver_subject: 'cy.back', ack_policy: AckPolicy.None }));
    expect(err.api_error?.err_code).toBe(10081);
    expect(err.api_error?.description).toBe('consumer deliver subject forms a cycle');
    // A deliver subject outside the stream's subjects is accepted.
    const ok = await jsm.consumers.add('CY', { durable_name: 'out', deliver_subject: 'cyx.back', ack_policy: AckPolicy.None });
    expect(ok.config.deliver_subject).toBe('cyx.back');
  });

  it('a deliver subject matched only by another stream delivers nothing until a client subscribes', async () => {
    await jsm.streams.add({ name: 'SRC', subjects: ['src.>'] });
    await jsm.streams.add({ name: 'SINK', subjects: ['sink.>'] });
    const js = nc.jetstream();
    await js.publish('src.one', '1');
    await js.publish('src.two', '2');
    await jsm.consumers.add('SRC', { durable_name: 'feed', deliver_subject: 'sink.feed', ack_policy: AckPolicy.None });
    await sleep(300);
    expect((await jsm.streams.info('SINK')).state.messages).toBe(0);
    expect((await jsm.consumers.info('SRC', 'feed')).delivered.stream_seq).toBe(0);

    const client = await connect({ servers: fixture.server.url, reconnect: false });
    try {
      const sub = client.subscribe('sink.feed', { max: 2 });
      const got: string[] = [];
      const done = (async () => {
        for await (const m of sub) got.push(m.string());
      })();
      await Promise.race([done, sleep(ANSWER_BOUND_MS)]);
      expect(got).toEqual(['1', '2']);
      expect((await jsm.consumers.info('SRC', 'feed')).delivered.stream_seq).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('a loop a client keeps alive on purpose still leaves the node answering', async () => {
    await crossedStreams('L2', 1000);
    // A client on both deliver subjects makes each consumer deliver, into the other stream as well.
    const client = await connect({ servers: fixture.server.url, reconnect: false });
    try {
      let seen = 0;
      client.subscribe('l2a.in', { callback: () => seen++ });
      client.subscribe('l2b.in', { callback: () => seen++ });
      await client.flush();
      await nc.jetstream().publish('l2a.start', 'seed');
      await sleep(300);
      const before = (await jsm.streams.info('L2A')).state.last_seq;
      await nodeAnswers('L2A');
      const after = (await jsm.streams.info('L2A')).state.last_seq;
      // The loop ran all along (the streams kept growing) while the node answered.
      expect(before).toBeGreaterThan(10);
      expect(after).toBeGreaterThan(before);
      expect(seen).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    await jsm.consumers.delete('L2A', 'toB');
    await jsm.consumers.delete('L2B', 'toA');
  });
});
