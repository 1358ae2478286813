// A three-node JetStream cluster of real processes with the real `nats` client: it forms, an R3 stream is
// created through one node, published through a second and consumed through the third, step-down moves the
// leader, and the whole cluster survives a full restart with its streams, messages and
// consumer state. E2E_SERVER=nats-server checks the same expectations against nats-server.
import { describe, it, expect } from 'vitest';
import { AckPolicy, type JetStreamManager, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream, apiRequest, readStream } from './helpers/js-cluster.js';
import { publishRetrying } from './helpers/js-cluster-publisher.js';

const dec = new TextDecoder();

let cluster: JsCluster;
const NAMES = ['n1', 'n2', 'n3'];

useJsCluster({ size: 3, clusterName: 'BASICS' }, (c) => (cluster = c));

async function jsmVia(name: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await cluster.connect(name);
  return { nc, jsm: await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 }) };
}

describe('three-node JetStream cluster', () => {
  it('every node answers $JS.API.INFO once the meta group has a leader', async () => {
    for (const name of NAMES) {
      const nc = await cluster.connect(name);
      const info = await apiRequest(nc, '$JS.API.INFO', '');
      expect(info['type']).toBe('io.nats.jetstream.api.v1.account_info_response');
      await nc.close();
    }
  });

  it('R3 stream: created through n1, published through n2, consumed through n3 with a durable pull consumer', async () => {
    const { jsm: jsm1 } = await jsmVia('n1');
    const created = await addStream(jsm1, { name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 });
    expect(created.config.num_replicas).toBe(3);
    expect(created.cluster?.name).toBe('BASICS');
    const info = await cluster.waitForReplicasCurrent(jsm1, 'ORDERS', 3);
    const leader = info.cluster!.leader!;
    expect(NAMES).toContain(leader);
    // The leader is not in `replicas`; the others are, sorted by name.
    expect(info.cluster!.replicas!.map((r) => r.name)).toEqual(NAMES.filter((n) => n !== leader));
    // `active` is nanoseconds since the leader heard from the peer (a duration, not a timestamp).
    for (const r of info.cluster!.replicas!) expect({ name: r.name, current: r.current, recent: r.active >= 0 && r.active < 10_000_000_000 }).toEqual({ name: r.name, current: true, recent: true });

    const nc2 = await cluster.connect('n2');
    const js2 = nc2.jetstream();
    const seqs: number[] = [];
    for (let i = 1; i <= 20; i++) seqs.push(await publishRetrying(js2, `orders.${i % 3}`, `order-${i}`, `o-${i}`));
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));

    const { nc: nc3, jsm: jsm3 } = await jsmVia('n3');
    await jsm3.consumers.add('ORDERS', { durable_name: 'PROC', ack_policy: AckPolicy.Explicit, ack_wait: 30_000_000_000 });
    const consumer = await nc3.jetstream({ timeout: 10_000 }).consumers.get('ORDERS', 'PROC');
    const got: string[] = [];
    // Ack the first 15 with confirmation; leave the rest pending.
    for (let round = 0; round < 5 && got.length < 20; round++) {
      const batch = await consumer.fetch({ max_messages: 20 - got.length, expires: 3000 });
      for await (const m of batch) {
        got.push(dec.decode(m.data));
        if (got.length <= 15) await m.ackAck();
      }
    }
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `order-${i + 1}`));
    const ci = await jsm1.consumers.info('ORDERS', 'PROC');
    expect(ci.ack_floor.stream_seq).toBe(15);
    expect(ci.num_ack_pending).toBe(5);
    expect(ci.delivered.stream_seq).toBe(20);
    expect((await jsm1.streams.info('ORDERS')).state.messages).toBe(20);
  }, 30_000);

  it('R above the cluster size is refused as nats-server refuses it (400/10005)', async () => {
    const { nc } = await jsmVia('n2');
    const err = await apiRequest(nc, '$JS.API.STREAM.CREATE.TOO_BIG', { name: 'TOO_BIG', subjects: ['too.big'], num_replicas: 5, storage: 'file', retention: 'limits' }).catch(
      (e: Error & { api?: { code: number; err_code: number } }) => e,
    );
    expect((err as { api?: unknown }).api).toMatchObject({ code: 400, err_code: 10005 });
  });

  it('STREAM.LEADER.STEPDOWN moves the leader; publishing continues at the next sequence', async () => {
    const { nc, jsm } = await jsmVia('n1');
    await cluster.waitForReplicasCurrent(jsm, 'ORDERS', 3);
    const before = await cluster.streamLeader(jsm, 'ORDERS');
    const answer = await apiRequest(nc, '$JS.API.STREAM.LEADER.STEPDOWN.ORDERS', '', 5000);
    expect(answer).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_leader_stepdown_response', success: true });
    const startedMs = Date.now();
    const after = await cluster.waitForStreamLeader(jsm, 'ORDERS', { not: before, timeoutMs: 15_000 });
    console.log(`step-down: ${before} -> ${after} in ${Date.now() - startedMs} ms`);
    expect(after).not.toBe(before);
    expect(await publishRetrying(nc.jetstream(), 'orders.x', 'after-stepdown', 'o-after')).toBe(21);
    const content = await readStream(jsm, 'ORDERS');
    expect(content.get(21)).toBe('after-stepdown');
    expect(content.size).toBe(21);
  }, 30_000);

  it('survives a full restart: streams, messages and consumer state are still there', async () => {
    const { jsm } = await jsmVia('n3');
    const before = await readStream(jsm, 'ORDERS');
    const consumerBefore = await jsm.consumers.info('ORDERS', 'PROC');
    expect(before.size).toBe(21);
    for (const name of NAMES) await cluster.terminate(name);
    await Promise.all(NAMES.map((n) => cluster.restart(n)));
    await cluster.waitForMetaLeader(30_000);

    const { jsm: jsmAfter } = await jsmVia('n1');
    const info = await cluster.waitForReplicasCurrent(jsmAfter, 'ORDERS', 3, 30_000);
    expect(info.state.messages).toBe(21);
    expect(info.state.last_seq).toBe(21);
    expect(await readStream(jsmAfter, 'ORDERS', info)).toEqual(before);
    const names = (await jsmAfter.streams.names().next()).sort();
    expect(names).toEqual(['ORDERS']);
    const consumerAfter = await jsmAfter.consumers.info('ORDERS', 'PROC');
    expect(consumerAfter.ack_floor.stream_seq).toBe(consumerBefore.ack_floor.stream_seq);
    expect(consumerAfter.delivered.stream_seq).toBe(consumerBefore.delivered.stream_seq);
    expect(consumerAfter.num_ack_pending).toBe(consumerBefore.num_ack_pending);
  }, 90_000);

  it('survives kill -9 of every node at once: every acknowledged message is there after the restart', async () => {
    const { nc, jsm } = await jsmVia('n2');
    const js = nc.jetstream();
    for (let i = 22; i <= 41; i++) expect(await publishRetrying(js, 'orders.k', `order-${i}`, `o-${i}`)).toBe(i);
    const before = await readStream(jsm, 'ORDERS');
    expect(before.size).toBe(41);
    await Promise.all(NAMES.map((n) => cluster.kill(n)));
    await Promise.all(NAMES.map((n) => cluster.restart(n)));
    await cluster.waitForMetaLeader(30_000);

    const { nc: ncAfter, jsm: jsmAfter } = await jsmVia('n3');
    const info = await cluster.waitForReplicasCurrent(jsmAfter, 'ORDERS', 3, 30_000);
    expect(info.state.last_seq).toBe(41);
    expect(await readStream(jsmAfter, 'ORDERS', info)).toEqual(before);
    // The dedupe window survived too: a retried id is answered as a duplicate of its first sequence.
    const dup = await ncAfter.jetstream().publish('orders.k', new TextEncoder().encode('order-41'), { msgID: 'o-41', timeout: 5000 });
    expect(dup).toMatchObject({ seq: 41, duplicate: true });
  }, 90_000);
});
