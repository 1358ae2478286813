// Interest and workqueue retention driven by consumer acknowledgements, with the real client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, RetentionPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let jsm: JetStreamManager;
let js: JetStreamClient;

beforeAll(async () => {
  fixture = await startJetStreamServer('js-retention-');
  ({ jsm, js } = fixture);
});

afterAll(() => fixture?.stop());

async function fetchAll(stream: string, consumer: string, max: number): Promise<JsMsg[]> {
  const c = await js.consumers.get(stream, consumer);
  const got: JsMsg[] = [];
  for await (const m of await c.fetch({ max_messages: max, expires: 1000 })) {
    got.push(m);
    if (got.length === max) break;
  }
  return got;
}

async function messages(stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.messages;
}

describe('retention', () => {
  it('workqueue: acknowledged messages are removed, others stay', async () => {
    await jsm.streams.add({ name: 'WQ1', subjects: ['wq1.>'], retention: RetentionPolicy.Workqueue });
    for (let i = 0; i < 4; i++) await js.publish('wq1.job', String(i));
    await jsm.consumers.add('WQ1', { durable_name: 'w', ack_policy: AckPolicy.Explicit });
    const got = await fetchAll('WQ1', 'w', 4);
    await got[0]!.ackAck();
    await got[1]!.ackAck();
    expect(await messages('WQ1')).toBe(2);
    const si = await jsm.streams.info('WQ1');
    expect(si.state.first_seq).toBe(3);
  });

  it('workqueue: refuses a second unfiltered consumer and overlapping filters', async () => {
    await jsm.streams.add({ name: 'WQ2', subjects: ['wq2.>'], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add('WQ2', { durable_name: 'a', ack_policy: AckPolicy.Explicit, filter_subject: 'wq2.a.>' });
    const unfiltered = await jsm.consumers
      .add('WQ2', { durable_name: 'b', ack_policy: AckPolicy.Explicit })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(unfiltered).toEqual({ code: 400, err_code: 10099, description: 'multiple non-filtered consumers not allowed on workqueue stream' });
    const overlap = await jsm.consumers
      .add('WQ2', { durable_name: 'c', ack_policy: AckPolicy.Explicit, filter_subject: 'wq2.a.x' })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(overlap).toEqual({ code: 400, err_code: 10100, description: 'filtered consumer not unique on workqueue stream' });
    const ok = await jsm.consumers.add('WQ2', { durable_name: 'd', ack_policy: AckPolicy.Explicit, filter_subject: 'wq2.b' });
    expect(ok.name).toBe('d');
  });

  it('interest: a message stays until every consumer with a matching filter acknowledged it', async () => {
    await jsm.streams.add({ name: 'IN1', subjects: ['in1.>'], retention: RetentionPolicy.Interest });
    await jsm.consumers.add('IN1', { durable_name: 'all', ack_policy: AckPolicy.Explicit });
    await jsm.consumers.add('IN1', { durable_name: 'onlyb', ack_policy: AckPolicy.Explicit, filter_subject: 'in1.b' });
    await js.publish('in1.a', 'a');
    await js.publish('in1.b', 'b');
    expect(await messages('IN1')).toBe(2);
    for (const m of await fetchAll('IN1', 'all', 2)) await m.ackAck();
    // in1.a was only of interest to "all"; in1.b still waits for "onlyb"
    expect(await messages('IN1')).toBe(1);
    for (const m of await fetchAll('IN1', 'onlyb', 1)) await m.ackAck();
    expect(await messages('IN1')).toBe(0);
  });

  it('interest: deleting the last interested consumer removes what it had not acknowledged', async () => {
    await jsm.streams.add({ name: 'IN2', subjects: ['in2.>'], retention: RetentionPolicy.Interest });
    await jsm.consumers.add('IN2', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    for (let i = 0; i < 3; i++) await js.publish('in2.x', String(i));
    expect(await messages('IN2')).toBe(3);
    await jsm.consumers.delete('IN2', 'c');
    let left = await messages('IN2');
    for (let i = 0; i < 20 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = await messages('IN2');
    }
    expect(left).toBe(0);
  });

  it('interest: with no consumer interested, a published message is acknowledged but not kept', async () => {
    await jsm.streams.add({ name: 'IN3', subjects: ['in3.>'], retention: RetentionPolicy.Interest });
    await jsm.consumers.add('IN3', { durable_name: 'b', ack_policy: AckPolicy.Explicit, filter_subject: 'in3.b' });
    const ack = await js.publish('in3.a', 'nobody wants this');
    expect(ack.seq).toBe(1);
    const st = (await jsm.streams.info('IN3')).state;
    // observed on nats-server 2.9.10: the sequence is consumed, nothing is stored
    expect([st.messages, st.first_seq, st.last_seq]).toEqual([0, 2, 1]);
  });

  it('interest: with no consumers at all, publishes are acknowledged in sequence and nothing is kept', async () => {
    await jsm.streams.add({ name: 'IN4', subjects: ['in4.>'], retention: RetentionPolicy.Interest });
    const acks = [await js.publish('in4.a', 'one'), await js.publish('in4.b', 'two', { msgID: 'm-2' })];
    expect(acks.map((a) => a.seq)).toEqual([1, 2]);
    // The skipped message's id still de-duplicates.
    expect((await js.publish('in4.b', 'two', { msgID: 'm-2' })).duplicate).toBe(true);
    const st = (await jsm.streams.info('IN4')).state;
    expect([st.messages, st.first_seq, st.last_seq]).toEqual([0, 3, 2]);
  });
});
