// Seeded fault schedule over three in-process replicas: crashes, restarts and leader partitions while a client
// publishes with Nats-Msg-Id and retries until acknowledged. Afterwards: every acknowledged id is stored exactly
// once, at the sequence its ack named, and every replica holds the same messages.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { SeededRandom } from '@flotilla/raft';
import { ReplicaCluster, waitFor } from './stream-replica-harness.js';

let cluster: ReplicaCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

const STEPS = 30;
const BURST = 15;

async function runSchedule(seed: number, storage: 'file' | 'memory'): Promise<void> {
  const rnd = new SeededRandom(seed);
  const c = (cluster = await ReplicaCluster.start(
    { name: 'S', subjects: ['s.>'], storage, num_replicas: 3 },
    { options: { snapshotEveryEntries: 16 } },
  ));
  await c.waitForLeader();
  const ids = [1, 2, 3];
  /** id → reply subject of its latest attempt */
  const pending = new Map<string, string>();
  const acked = new Map<string, number>();
  let nextId = 0;
  const collect = () => {
    for (const [id, reply] of pending) {
      const ack = c.ack(reply);
      if (ack === undefined || ack['error'] !== undefined) continue;
      const seq = ack['seq'] as number;
      const before = acked.get(id);
      if (before !== undefined) expect(seq).toBe(before);
      acked.set(id, seq);
      pending.delete(id);
    }
  };
  const publishAll = () => {
    for (const id of pending.keys()) pending.set(id, c.publish('s.x', id, encodeHeaders({ entries: [['Nats-Msg-Id', id]] })));
  };
  for (let step = 0; step < STEPS; step++) {
    for (let i = 0; i < BURST; i++) pending.set(`m${nextId++}`, '');
    publishAll();
    await new Promise((r) => setTimeout(r, 20 + rnd.int(60)));
    collect();
    const down = ids.filter((id) => c.nodes.get(id)!.replica === null);
    const roll = rnd.int(10);
    if (down.length > 0 && roll < 5) {
      await c.restart(down[rnd.int(down.length)]!);
    } else if (down.length === 0 && roll < 3) {
      // A memory store is lost by any crash; a lost file store is out of scope (its snapshots are stand-ins).
      await c.crash(ids[rnd.int(3)]!, { loseStore: storage === 'memory' && roll === 0 });
    } else if (down.length === 0 && roll < 5) {
      const leader = c.leader();
      if (leader !== undefined) c.network.isolate(leader.leaderId(), ids);
    } else if (roll < 7) {
      c.network.heal();
      for (const id of down) c.network.isolate(id, ids);
    }
  }
  // Heal everything and retry until every publish is acknowledged.
  c.network.heal();
  for (const id of ids) if (c.nodes.get(id)!.replica === null) await c.restart(id);
  await c.waitForLeader();
  for (let round = 0; round < 50 && pending.size > 0; round++) {
    publishAll();
    await waitFor(() => [...pending.values()].every((r) => c.ack(r) !== undefined), 2000, 'acks').catch(() => undefined);
    collect();
  }
  expect(pending.size).toBe(0);
  const content = await c.waitConverged(8000);
  const bySeq = new Map(content.map((m) => [m.seq, Buffer.from(m.data).toString()]));
  expect(new Set(bySeq.values()).size).toBe(content.length); // no id stored twice
  for (const [id, seq] of acked) expect(bySeq.get(seq)).toBe(id);
  expect(content.length).toBe(nextId);
}

describe('StreamReplica under a seeded fault schedule', () => {
  it('file stores, seed 1', () => runSchedule(1, 'file'), 30_000);
  it('memory stores, seed 2', () => runSchedule(2, 'memory'), 30_000);
  it('file stores, seed 3', () => runSchedule(3, 'file'), 30_000);
});
