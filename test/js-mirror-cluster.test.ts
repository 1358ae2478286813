// An R3 mirror and an R3 sourcing stream of an R3 origin on three real nodes (issue 19 item 3), through
// kill -9 of the mirror's leader, the sourcing stream's leader and the origin's leader under acknowledged
// publishing: the mirror ends up holding exactly the origin's messages at the origin's sequences, and the
// sourcing stream every origin message exactly once, in origin order. The origin position is part of what
// each stream stores (its Raft log), so a new leader resumes where the last committed message left off.
// Runs against nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect } from 'vitest';
import type { JetStreamManager } from 'nats';
import { JsCluster, useJsCluster, addStream, readStream } from './helpers/js-cluster.js';
import { AckedPublisher } from './helpers/js-cluster-publisher.js';
import { until } from './helpers/until.js';

let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'MIRRORS' }, (c) => (cluster = c));

async function leaderOf(jsm: JetStreamManager, stream: string): Promise<string> {
  return cluster.waitForStreamLeader(jsm, stream, { timeoutMs: 20_000 });
}

describe('R3 mirror and source through leader kills', () => {
  it('every origin message exactly once, in order, in the mirror (at its sequence) and the source', async () => {
    const admin = await cluster.connect('n1');
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: 'ORIG', subjects: ['orig.>'], num_replicas: 3 });
    await addStream(jsm, { name: 'MIR', mirror: { name: 'ORIG' }, num_replicas: 3 });
    await addStream(jsm, { name: 'SRC', sources: [{ name: 'ORIG' }], num_replicas: 3 });
    await cluster.waitForReplicasCurrent(jsm, 'ORIG', 3);
    const pubNode = cluster.nodes.map((n) => n.name).find((n) => n !== 'n1')!;
    const publisher = new AckedPublisher((await cluster.connect(pubNode, { reconnect: true, maxReconnectAttempts: -1 })).jetstream(), {
      subject: 'orig.a',
      prefix: 'o',
      maxMessages: 5_000,
      attemptTimeoutMs: 500,
      paceMs: 5,
    }).start();
    const watch = async (): Promise<JetStreamManager> => {
      // Any node that is up answers the API; reconnecting keeps the manager usable across kills.
      const up = cluster.running().map((n) => n.name);
      const nc = await cluster.connect(up[up.length - 1]!, { reconnect: true, maxReconnectAttempts: -1 });
      return nc.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    };
    try {
      await publisher.waitForMoreAcks(100, 20_000);
      for (const stream of ['MIR', 'SRC', 'ORIG']) {
        const w = await watch();
        const leader = await leaderOf(w, stream);
        await cluster.kill(leader);
        const w2 = await watch();
        await cluster.waitForStreamLeader(w2, stream, { not: leader, timeoutMs: 30_000 });
        await publisher.waitForMoreAcks(80, 30_000);
        await cluster.restart(leader);
        await publisher.waitForMoreAcks(40, 30_000);
      }
    } finally {
      await publisher.stop();
    }
    expect(publisher.giveUpError).toBeNull();
    const w = await watch();
    const origin = await until(
      async () => {
        const o = await w.streams.info('ORIG');
        const m = await w.streams.info('MIR');
        const s = await w.streams.info('SRC');
        return m.state.last_seq === o.state.last_seq && s.state.messages === o.state.messages ? o : null;
      },
      30_000,
      'mirror and source caught up',
      200,
    );
    const originContent = await readStream(w, 'ORIG', origin);
    const mirrorContent = await readStream(w, 'MIR');
    const sourceContent = await readStream(w, 'SRC');
    expect(originContent.size).toBeGreaterThanOrEqual(publisher.acks.length);
    for (const a of publisher.acks) expect(originContent.get(a.seq)).toBe(a.payload);
    expect([...mirrorContent]).toEqual([...originContent]);
    expect([...sourceContent.values()]).toEqual([...originContent.values()]);
    const mi = await w.streams.info('MIR');
    expect(mi.mirror?.name).toBe('ORIG');
    const si = await w.streams.info('SRC');
    expect(si.sources?.map((s) => s.name)).toEqual(['ORIG']);
    // The origin lists itself and its mirror as alternates (nats-server: clustered only).
    const alternates = ((await w.streams.info('ORIG')) as unknown as { alternates?: Array<{ name: string; cluster: string }> }).alternates ?? [];
    expect([...alternates].sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'MIR', cluster: 'MIRRORS' },
      { name: 'ORIG', cluster: 'MIRRORS' },
    ]);
    expect(((await w.streams.info('SRC')) as unknown as { alternates?: unknown }).alternates).toBeUndefined();
    console.log(`origin ${originContent.size} messages (${publisher.acks.length} acked); mirror ${mirrorContent.size}; source ${sourceContent.size}`);
  }, 180_000);
});
