// Fast batch publish (2.14 `allow_batched`) on an R3 stream of three real processes: every message goes through
// the stream's Raft log as an ordinary message entry, and its flow ack / the commit PubAck is sent only once the
// entry is committed (a quorum has it on disk) and applied on the leader. The stock @nats-io/jetstream v3
// fast-ingest publisher drives it; every replica ends up with the same contents. A leader killed (-9) mid-batch
// takes the batch's state with it: the new leader answers the batch's next message "batch publish ID unknown"
// (10208), and what was flow-acked before the kill is on every surviving replica. nats-server 2.9.10 predates
// fast batches, so this runs against Flotilla only.
import { describe, it, expect } from 'vitest';
import { connect, createInbox, type NatsConnection } from '@nats-io/transport-node';
import { startFastIngest } from '@nats-io/jetstream/internal';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { until } from './helpers/until.js';

const NAMES = ['n1', 'n2', 'n3'];
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'FAST' }, (c) => (cluster = c));

describe('R3 fast batch publish', () => {
  it('a batch of 1000 commits on every replica; a leader kill mid-batch keeps what was flow-acked', async () => {
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'FAST3', subjects: ['fast3.>'], num_replicas: 3, allow_batched: true } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'FAST3', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const nc: NatsConnection = await connect({ servers: cluster.node(survivors[0]!).url, reconnect: false });
    const watch = await cluster.client(survivors[0]!);

    // A: 1000 messages, committed.
    const fi = await startFastIngest(nc, 'fast3.a', 'A-1', { ackInterval: 100 }, 20_000);
    for (let i = 2; i < 1000; i++) await fi.add(`fast3.${i % 3}`, `A-${i}`);
    const ack = await fi.last('fast3.a', 'A-1000');
    expect(ack).toMatchObject({ stream: 'FAST3', seq: 1000, batch: fi.batch, count: 1000 });

    // B: raw, gap mode fail, flow ack every 10; the leader is killed after a flow ack covering 50.
    const prefix = createInbox();
    const replies: Array<Record<string, unknown>> = [];
    const sub = nc.subscribe(`${prefix}.>`, { callback: (_e, m) => replies.push(JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>) });
    const reply = (seq: number, op: number): string => `${prefix}.B.10.fail.${seq}.${op}.$FI`;
    for (let s = 1; s <= 50; s++) nc.publish('fast3.b', `B-${s}`, { reply: reply(s, s === 1 ? 0 : 1) });
    await nc.flush();
    await until(() => replies.some((r) => r['type'] === 'ack' && r['seq'] === 50), 30_000, 'flow ack for 50');
    expect(replies[0]).toEqual({ type: 'ack', seq: 0, msgs: 10 });
    await cluster.kill(leader);
    const newLeader = await cluster.waitForStreamLeader(watch.jsm, 'FAST3', { not: leader });
    expect(survivors).toContain(newLeader);
    // The batch's state was the old leader's.
    const before = replies.length;
    const next = async (): Promise<boolean> => {
      nc.publish('fast3.b', 'B-51', { reply: reply(51, 1) });
      await nc.flush();
      return replies.length > before;
    };
    await until(next, 30_000, 'an answer from the new leader', 500);
    expect(replies[before]).toEqual({ error: { code: 400, err_code: 10208, description: 'batch publish ID unknown' }, stream: 'FAST3', seq: 0 });
    sub.unsubscribe();

    await cluster.restart(leader);
    const contents = await cluster.replicaContents('FAST3', NAMES, { timeoutMs: 60_000 });
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    expect(first.length).toBe(1050);
    expect(first[999]).toEqual([1000, 'A-1000']);
    expect(first[1049]).toEqual([1050, 'B-50']);
    for (const name of NAMES) expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    await Promise.all([admin.nc, watch.nc, nc].map((c) => c.close().catch(() => undefined)));
  }, 180_000);
});
