// Consumer reset (2.14, ADR-60) on one node through the stock @nats-io/jetstream 3.4.0 client
// (`jsm.consumers.reset`): back to the ack floor, to a chosen sequence, the deliver policies that refuse it,
// the 412 of a reset or a pull needing a newer API level, and no answer for a consumer that does not exist (2.14's consumer subscribes its own reset subject, as its
// pull subject). nats-server 2.9.10 predates it: Flotilla only; expected values are nats-server 2.14.5's
// (consumer.go processResetReq / resetStartingSeqLocked / resetLocalStartingSeq, jetstream_api.go
// JSApiConsumerResetResponse, errors.json 10204). nats.js gates reset on 2.14.0; Flotilla reports 2.11.0
// (docs/compatibility.md), so the connection is told the feature level.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { JetStreamV3Server, jsApiFailure as apiFailure } from './helpers/jetstream-v3-server.js';

const srv = new JetStreamV3Server('flotilla-reset-', '2.14.0');
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const dec = new TextDecoder();

beforeAll(async () => {
  ({ nc, js, jsm } = await srv.start());
  await jsm.streams.add({ name: 'R', subjects: ['r.>'] });
  for (let i = 1; i <= 10; i++) await js.publish('r.a', `r-${i}`);
});
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

async function fetchAll(name: string, n: number): Promise<JsMsg[]> {
  const c = await js.consumers.get('R', name);
  const out: JsMsg[] = [];
  for await (const m of await c.fetch({ max_messages: n, expires: 1000 })) out.push(m);
  return out;
}

describe('consumer reset', () => {
  it('without a sequence goes back to the ack floor: unacknowledged deliveries come again, consumer sequences from 1', async () => {
    await jsm.consumers.add('R', { durable_name: 'BACK', ack_policy: AckPolicy.Explicit });
    const first = await fetchAll('BACK', 10);
    expect(first).toHaveLength(10);
    for (const m of first.slice(0, 4)) await m.ackAck();
    const r = (await jsm.consumers.reset('R', 'BACK')) as unknown as Record<string, unknown>;
    expect(r['type']).toBe('io.nats.jetstream.api.v1.consumer_reset_response');
    expect(r['reset_seq']).toBe(5);
    expect(r['name']).toBe('BACK');
    expect(r['delivered']).toEqual({ consumer_seq: 0, stream_seq: 4 });
    expect(r['ack_floor']).toEqual({ consumer_seq: 0, stream_seq: 4 });
    expect(r['num_ack_pending']).toBe(0);
    expect(r['num_pending']).toBe(6);
    const again = await fetchAll('BACK', 10);
    expect(again.map((m) => dec.decode(m.data))).toEqual(['r-5', 'r-6', 'r-7', 'r-8', 'r-9', 'r-10']);
    expect(again.map((m) => m.info.deliverySequence)).toEqual([1, 2, 3, 4, 5, 6]);
    // The reset forgets redelivery counts too: each is a first delivery again.
    expect(again.map((m) => m.info.deliveryCount)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('to a sequence: deliver all takes any; by_start_sequence not below its start; other policies refuse', async () => {
    await jsm.consumers.add('R', { durable_name: 'SEQ', ack_policy: AckPolicy.Explicit });
    expect(((await jsm.consumers.reset('R', 'SEQ', 8)) as unknown as { reset_seq: number }).reset_seq).toBe(8);
    expect((await fetchAll('SEQ', 10)).map((m) => dec.decode(m.data))).toEqual(['r-8', 'r-9', 'r-10']);

    await jsm.consumers.add('R', { durable_name: 'FROM5', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 5 });
    expect(await apiFailure(jsm.consumers.reset('R', 'FROM5', 3))).toEqual({ code: 400, err_code: 10204, description: 'invalid reset: below start seq' });
    expect(((await jsm.consumers.reset('R', 'FROM5', 6)) as unknown as { reset_seq: number }).reset_seq).toBe(6);

    await jsm.consumers.add('R', { durable_name: 'NEW', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New });
    expect(await apiFailure(jsm.consumers.reset('R', 'NEW', 3))).toEqual({ code: 400, err_code: 10204, description: 'invalid reset: not allowed' });
    // Seq 0 (or none) is the ack floor, allowed for every policy.
    expect(((await jsm.consumers.reset('R', 'NEW', 0)) as unknown as { reset_seq: number }).reset_seq).toBe(11);
  });

  it('on an interest stream, a reset forward removes what no consumer needs any more', async () => {
    await jsm.streams.add({ name: 'RI', subjects: ['ri.>'], retention: 'interest' as never });
    await jsm.consumers.add('RI', { durable_name: 'ONLY', ack_policy: AckPolicy.Explicit });
    for (let i = 1; i <= 5; i++) await js.publish('ri.a', `i-${i}`);
    expect((await jsm.streams.info('RI')).state.messages).toBe(5);
    expect(((await jsm.consumers.reset('RI', 'ONLY', 4)) as unknown as { reset_seq: number }).reset_seq).toBe(4);
    const state = (await jsm.streams.info('RI')).state;
    expect([state.messages, state.first_seq]).toEqual([2, 4]);
  });

  it('a reset or a pull needing a newer API level is refused (412), as 2.14 checks it outside its API handlers', async () => {
    const h = headers();
    h.set('Nats-Required-Api-Level', '999');
    const reset = await nc.request('$JS.API.CONSUMER.RESET.R.BACK', '', { timeout: 2000, headers: h });
    expect(JSON.parse(dec.decode(reset.data))).toEqual({
      type: 'io.nats.jetstream.api.v1.consumer_reset_response',
      error: { code: 412, err_code: 10185, description: 'JetStream minimum api level required' },
    });
    const pull = await nc.request('$JS.API.CONSUMER.MSG.NEXT.R.BACK', '{"batch":1,"expires":1000000000}', { timeout: 2000, headers: h });
    expect([pull.headers?.code, pull.headers?.description]).toEqual([412, 'Required Api Level']);
    expect(pull.data.length).toBe(0);
    // The consumer still has all its messages: the refused pull was not queued.
    expect((await jsm.consumers.info('R', 'BACK')).num_waiting).toBe(0);
  });

  it('a missing consumer gets no answer, as a pull to it', async () => {
    await expect(nc.request('$JS.API.CONSUMER.RESET.R.NOPE', '', { timeout: 500 })).rejects.toThrow(/timeout/i);
  });
});
