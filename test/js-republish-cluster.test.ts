// Republish on an R3 stream across three real nodes, through kill -9 of the stream's leader under
// acknowledged publishing: only committed messages are republished (each republished copy matches the
// stored message at its Nats-Sequence), every message the new leader committed and acknowledged is
// republished, and the headers are the stream's. Runs against nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect } from 'vitest';
import type { Msg, StreamConfig } from 'nats';
import { JsCluster, useJsCluster, addStream, readStream } from './helpers/js-cluster.js';
import { AckedPublisher } from './helpers/js-cluster-publisher.js';
import { until } from './helpers/until.js';

const dec = new TextDecoder();
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'REPUBLISH' }, (c) => (cluster = c));

describe('R3 republish through a leader kill', () => {
  it('republishes committed messages only, and every one the new leader acknowledged', async () => {
    const admin = await cluster.connect('n1', { reconnect: true, maxReconnectAttempts: -1 });
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: 'RPC', subjects: ['rpc.in.>'], num_replicas: 3, republish: { src: 'rpc.in.>', dest: 'rpc.out.>' } } as Partial<StreamConfig> & { name: string });
    await cluster.waitForReplicasCurrent(jsm, 'RPC', 3);
    const leader = await cluster.waitForStreamLeader(jsm, 'RPC', { timeoutMs: 20_000 });
    const stay = cluster.nodes.map((n) => n.name).filter((n) => n !== leader);
    // Subscriber and publisher on nodes that stay up; republished copies reach them over the routes.
    const subNc = await cluster.connect(stay[0]!, { reconnect: true, maxReconnectAttempts: -1 });
    const got: Msg[] = [];
    subNc.subscribe('rpc.out.>', { callback: (_e, m) => got.push(m) });
    await subNc.flush();
    const pubNc = await cluster.connect(stay[1]!, { reconnect: true, maxReconnectAttempts: -1 });
    const publisher = new AckedPublisher(pubNc.jetstream(), { subject: 'rpc.in.a', prefix: 'r', maxMessages: 3_000, attemptTimeoutMs: 500, paceMs: 5 }).start();
    let killedAtMs = 0;
    try {
      await publisher.waitForMoreAcks(100, 20_000);
      await cluster.kill(leader);
      killedAtMs = Date.now();
      const w = await (await cluster.connect(stay[0]!, { reconnect: true, maxReconnectAttempts: -1 })).jetstreamManager({ checkAPI: false, timeout: 10_000 });
      await cluster.waitForStreamLeader(w, 'RPC', { not: leader, timeoutMs: 30_000 });
      await publisher.waitForMoreAcks(150, 30_000);
    } finally {
      await publisher.stop();
    }
    expect(publisher.giveUpError).toBeNull();
    const w = await (await cluster.connect(stay[0]!, { reconnect: true, maxReconnectAttempts: -1 })).jetstreamManager({ checkAPI: false, timeout: 10_000 });
    const content = await readStream(w, 'RPC');
    // Acknowledged after the kill and not a duplicate: committed by the new leader, so republished by it.
    const mustHave = publisher.acks.filter((a) => a.atMs > killedAtMs && !a.duplicate);
    expect(mustHave.length).toBeGreaterThan(100);
    const seqs = (): Set<number> => new Set(got.map((m) => Number(m.headers?.get('Nats-Sequence'))));
    await until(() => mustHave.every((a) => seqs().has(a.seq)), 30_000, 'new leader republished its acknowledged messages', 100);
    await subNc.flush();
    for (const m of got) {
      const seq = Number(m.headers?.get('Nats-Sequence'));
      expect(m.headers?.get('Nats-Stream')).toBe('RPC');
      expect(m.subject).toBe('rpc.out.a');
      // Committed: the stream holds exactly this message at that sequence.
      expect(content.get(seq), `republished seq ${seq}`).toBe(dec.decode(m.data));
    }
    const before = publisher.acks.filter((a) => a.atMs <= killedAtMs);
    const republishedBefore = before.filter((a) => seqs().has(a.seq)).length;
    console.log(`republish R3: ${got.length} copies, ${seqs().size} distinct; acked before the kill ${before.length} (republished ${republishedBefore}), after ${mustHave.length} (all republished)`);
  }, 180_000);
});
