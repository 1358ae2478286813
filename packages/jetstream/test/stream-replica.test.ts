import { afterEach, describe, expect, it } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { existsSync } from 'node:fs';
import { LevelRaftLogStore, setFsyncObserver } from '@flotilla/store';
import { MemoryLogStore, type RaftLogStore, type RaftNode } from '@flotilla/raft';
import { ReplicaCluster, contentOf, waitFor } from './stream-replica-harness.js';

const msgId = (id: string) => encodeHeaders({ entries: [['Nats-Msg-Id', id]] });

let cluster: ReplicaCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

describe('StreamReplica: publishing through the stream group', () => {
  it('acks after commit and every replica stores the same messages at the same sequences', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    expect(c.live().filter((r) => r.isLeader())).toHaveLength(1);
    const replies: string[] = [];
    for (let i = 0; i < 200; i++) replies.push(c.publish(`s.${i % 7}`, `m${i}`, i % 3 === 0 ? msgId(`id${i}`) : null));
    const acks = await c.waitForAcks(replies);
    expect(acks.map((a) => a['seq'])).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(acks.every((a) => a['stream'] === 'S' && a['error'] === undefined)).toBe(true);
    const content = await c.waitConverged();
    expect(content).toHaveLength(200);
    expect(Buffer.from(content[41]!.data).toString()).toBe('m41');
    expect(content[41]!.subject).toBe('s.6');
    // Only the leader subscribes the stream's subjects.
    expect(leader.stream.isServing).toBe(true);
    expect(c.live().filter((r) => r.stream.isServing)).toHaveLength(1);
  });

  it('de-duplicates Nats-Msg-Id within a tick, and checks expected-last-sequence against in-flight proposals', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    await c.waitForLeader();
    const a = c.publish('s.a', 'x', msgId('one'));
    const b = c.publish('s.a', 'x', msgId('one'));
    const d = c.publish('s.b', 'y', encodeHeaders({ entries: [['Nats-Expected-Last-Sequence', '1']] }));
    const e = c.publish('s.b', 'z', encodeHeaders({ entries: [['Nats-Expected-Last-Sequence', '1']] }));
    const [ackA, ackB, ackD, ackE] = await c.waitForAcks([a, b, d, e]);
    expect(ackA).toEqual({ stream: 'S', seq: 1 });
    expect(ackB).toEqual({ stream: 'S', seq: 1, duplicate: true });
    expect(ackD).toEqual({ stream: 'S', seq: 2 });
    expect((ackE!['error'] as { err_code: number; description: string }).description).toBe('wrong last sequence: 2');
    const content = await c.waitConverged();
    expect(content.map((m) => m.seq)).toEqual([1, 2]);
  });

  it('loses no acknowledged message across a leader crash, and de-duplicates across the change', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const first = await c.waitForLeader();
    const firstId = c.nodes.values().next().value!.id;
    const acked: string[] = [];
    const replies: string[] = [];
    for (let i = 0; i < 50; i++) replies.push(c.publish('s.x', `a${i}`, msgId(`a${i}`)));
    await c.waitForAcks(replies);
    acked.push(...replies);
    // Crash the leader with publishes in flight.
    const inFlight: string[] = [];
    for (let i = 0; i < 20; i++) inFlight.push(c.publish('s.x', `b${i}`, msgId(`b${i}`)));
    const leaderSlot = [...c.nodes.values()].find((n) => n.replica === first)!;
    expect(leaderSlot.id).toBeGreaterThanOrEqual(firstId);
    await c.crash(leaderSlot.id);
    const second = await c.waitForLeader();
    expect(second).not.toBe(first);
    // Republish everything (a client retrying): committed ids come back as duplicates, the rest are stored.
    const retries: string[] = [];
    for (let i = 0; i < 50; i++) retries.push(c.publish('s.x', `a${i}`, msgId(`a${i}`)));
    for (let i = 0; i < 20; i++) retries.push(c.publish('s.x', `b${i}`, msgId(`b${i}`)));
    const acks = await c.waitForAcks(retries);
    for (let i = 0; i < 50; i++) expect(acks[i]).toEqual({ stream: 'S', seq: i + 1, duplicate: true });
    // Every in-flight ack that did arrive before the crash names the sequence the retry reports.
    for (let i = 0; i < 20; i++) {
      const early = c.ack(inFlight[i]!);
      if (early !== undefined && early['error'] === undefined) expect(acks[50 + i]!['seq']).toBe(early['seq']);
    }
    const content = await c.waitConverged();
    expect(content).toHaveLength(70);
    expect(new Set(content.map((m) => Buffer.from(m.data).toString())).size).toBe(70);
    expect(content.map((m) => m.seq)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
    // The old leader rejoins and catches up.
    await c.restart(leaderSlot.id);
    const after = await c.waitConverged();
    expect(after).toHaveLength(70);
  });

  it('a partitioned leader acknowledges nothing; the majority continues; the healed side converges', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const old = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'before')]);
    const oldId = old.leaderId();
    c.network.isolate(oldId, [1, 2, 3]);
    // Reaches only the old leader, which cannot commit it.
    const lost = [c.publish('s.x', 'lost1'), c.publish('s.x', 'lost2')];
    await waitFor(() => c.live().some((r) => r !== old && r.isLeader()), 3000, 'majority leader');
    await waitFor(() => !old.isLeader(), 3000, 'old leader stepping down (check-quorum)');
    const after = c.publish('s.x', 'after');
    expect((await c.waitForAcks([after]))[0]).toEqual({ stream: 'S', seq: 2 });
    c.network.heal();
    const content = await c.waitConverged();
    expect(content.map((m) => Buffer.from(m.data).toString())).toEqual(['before', 'after']);
    expect(lost.map((r) => c.ack(r))).toEqual([undefined, undefined]);
    expect(old.stream.store.state().last_seq).toBe(2);
  });

  it('purges with a sequence bound and deletes through the group', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    const replies: string[] = [];
    for (let i = 0; i < 10; i++) replies.push(c.publish(i % 2 === 0 ? 's.even' : 's.odd', `m${i}`));
    await c.waitForAcks(replies);
    expect(await leader.stream.propose({ op: 'purge', filter: 's.even' })).toBe(5);
    expect(await leader.stream.propose({ op: 'delete', seq: 2, erase: false })).toBe(true);
    expect(await leader.stream.propose({ op: 'delete', seq: 2, erase: false })).toBe(false);
    const content = await c.waitConverged();
    expect(content.map((m) => m.seq)).toEqual([4, 6, 8, 10]);
    expect(await leader.stream.propose({ op: 'purge' })).toBe(4);
    const more = c.publish('s.odd', 'after');
    expect((await c.waitForAcks([more]))[0]).toEqual({ stream: 'S', seq: 11 });
    expect((await c.waitConverged()).map((m) => m.seq)).toEqual([11]);
  });

  it('numbers messages proposed behind a purge past the end from where the purge moves the sequence', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    const a = c.publish('s.x', 'a');
    const purged = leader.stream.propose({ op: 'purge', seq: 100 });
    const b = c.publish('s.x', 'b');
    expect(await purged).toBe(2);
    const [ackA, ackB] = await c.waitForAcks([a, b]);
    expect(ackA).toEqual({ stream: 'S', seq: 2 });
    expect(ackB).toEqual({ stream: 'S', seq: 100 });
    const content = await c.waitConverged();
    expect(content.map((m) => [m.seq, Buffer.from(m.data).toString()])).toEqual([[100, 'b']]);
  });

  it('replicates consumer entries to every replica in log order', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    await leader.proposeConsumerEntry(Buffer.from('c1'));
    await leader.proposeConsumerEntry(Buffer.from('c2'));
    await waitFor(() => [...c.nodes.values()].every((n) => n.consumerEntries.join() === 'c1,c2'), 3000, 'consumer entries');
    const follower = c.live().find((r) => r !== leader)!;
    await expect(follower.proposeConsumerEntry(Buffer.from('x'))).rejects.toThrow('temporarily unavailable');
  });
});

describe('StreamReplica: restart and catch-up', () => {
  it('a restarted replica replays its log idempotently over a file store that already holds the messages', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 3 }));
    await c.waitForLeader();
    const replies: string[] = [];
    for (let i = 0; i < 100; i++) replies.push(c.publish('s.x', `m${i}`, i % 10 === 0 ? msgId(`id${i}`) : null));
    await c.waitForAcks(replies);
    await c.waitConverged();
    const follower = [...c.nodes.values()].find((n) => n.replica !== null && !n.replica.isLeader())!;
    await c.crash(follower.id);
    const more: string[] = [];
    for (let i = 100; i < 120; i++) more.push(c.publish('s.x', `m${i}`));
    await c.waitForAcks(more);
    const restarted = await c.restart(follower.id);
    const content = await c.waitConverged();
    expect(content).toHaveLength(120);
    expect(restarted.stream.store.state().last_seq).toBe(120);
    // Its dedupe window was rebuilt: a leader elected there would spot the retry.
    expect(restarted.stream.duplicateOf('id50')).toBe(51);
  });

  it('a lagging replica catches up from a snapshot once the log is compacted', async () => {
    const c = (cluster = await ReplicaCluster.start(
      { name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 3 },
      { options: { snapshotEveryEntries: 8 } },
    ));
    await c.waitForLeader();
    const lagging = [...c.nodes.values()].find((n) => n.replica !== null && !n.replica.isLeader())!;
    await c.crash(lagging.id);
    await c.leader()!.proposeConsumerEntry(Buffer.from('c1'));
    for (let round = 0; round < 30; round++) {
      const replies: string[] = [];
      for (let i = 0; i < 5; i++) replies.push(c.publish(`s.${i}`, `r${round}m${i}`));
      await c.waitForAcks(replies);
    }
    const leader = c.leader()!;
    expect(await leader.stream.propose({ op: 'purge', filter: 's.0' })).toBe(30);
    // The leader compacted past everything the lagging replica has: only a snapshot can catch it up.
    const raftOf = (r: unknown) => (r as { raftNode: RaftNode }).raftNode;
    await waitFor(() => raftOf(leader).core.log.snapshotIndex > 8, 2000, 'leader compaction');
    const restarted = await c.restart(lagging.id);
    const content = await c.waitConverged(8000);
    expect(content).toHaveLength(120);
    expect(restarted.stream.store.state().last_seq).toBe(150);
    expect(content.some((m) => m.subject === 's.0')).toBe(false);
    expect(raftOf(restarted).core.log.snapshotIndex).toBeGreaterThan(8);
    // Consumer state travels in the snapshot (the entry itself was compacted away).
    expect(lagging.consumerEntries).toEqual(['c1']);
  });

  it('a file replica syncs its interval-synced message store before its log compacts', async () => {
    let storeSyncs = 0;
    const previous = setFsyncObserver((kind) => {
      if (kind === 'stream_store') storeSyncs++;
    });
    try {
      const c = (cluster = await ReplicaCluster.start(
        { name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 3 },
        // The stores' own interval never comes round during the test: a sync can only come from compaction.
        { options: { snapshotEveryEntries: 8, storeSyncIntervalMs: 600_000 } },
      ));
      await c.waitForLeader();
      const before = storeSyncs;
      for (let i = 0; i < 12; i++) await c.waitForAcks([c.publish(`s.${i}`, `m${i}`)]);
      const raftOf = (r: unknown) => (r as { raftNode: RaftNode }).raftNode;
      await waitFor(() => raftOf(c.leader()!).core.log.snapshotIndex > 0, 2000, 'leader compaction');
      expect(storeSyncs).toBeGreaterThan(before);
    } finally {
      setFsyncObserver(previous);
    }
  });

  it('a memory stream restarts from its snapshot plus log', async () => {
    const c = (cluster = await ReplicaCluster.start(
      { name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 },
      { options: { snapshotEveryEntries: 4 } },
    ));
    await c.waitForLeader();
    for (let round = 0; round < 10; round++) await c.waitForAcks([c.publish('s.x', `m${round}`)]);
    await c.waitConverged();
    const follower = [...c.nodes.values()].find((n) => n.replica !== null && !n.replica.isLeader())!;
    await c.crash(follower.id);
    const restarted = await c.restart(follower.id);
    await waitFor(async () => (await contentOf(restarted)).length === 10, 3000, 'restored content');
    expect((await c.waitConverged()).map((m) => Buffer.from(m.data).toString())).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
  });
});

describe('StreamReplica: destroy', () => {
  it('deletes the stream data and the group from the node\'s LevelDB Raft log', async () => {
    const c = (cluster = await ReplicaCluster.start(
      { name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 3 },
      { logStores: (_id, dir) => LevelRaftLogStore.open({ dir }) },
    ));
    await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one'), c.publish('s.x', 'two')]);
    await c.waitConverged();
    const slot = [...c.nodes.values()].find((n) => n.replica !== null && !n.replica.isLeader())!;
    expect((await slot.logStore.load(c.assignment.group)).entries.length).toBeGreaterThan(0);
    await slot.replica!.destroy();
    slot.replica = null;
    const after = await slot.logStore.load(c.assignment.group);
    expect(after).toEqual({ hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] });
    expect(existsSync(slot.dir)).toBe(false);
  });
});

describe('StreamReplica: leadership and membership', () => {
  it('steps down to another replica, which then serves', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const first = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    await waitFor(() => first.status().replicas.every((r) => r.current), 3000, 'current replicas');
    expect(first.stepDown()).toBeNull();
    // Until the leadership moves the old leader still answers the stream's requests (a request must not fall
    // into a gap between two leaders); only publishing stops at once: publishers get no-responders.
    expect(first.isLeader()).toBe(true);
    const before = c.bus.noResponders;
    c.publish('s.x', 'during the hand-over');
    expect(c.bus.noResponders).toBe(before + 1);
    // A second step-down during the hand-over is answered (success: the hand-over is under way).
    expect(first.stepDown()).toBeNull();
    await waitFor(() => c.leader() !== undefined && c.leader() !== first, 3000, 'a new leader');
    expect(first.isLeader()).toBe(false);
    expect(c.live().filter((r) => r.isLeader())).toHaveLength(1);
    const ack = (await c.waitForAcks([c.publish('s.x', 'two')]))[0];
    expect(ack).toEqual({ stream: 'S', seq: 2 });
  });

  it('leaves no moment in a hand-over when no member would answer STREAM.INFO (slow synced writes)', async () => {
    // Each synced write takes 15 ms, as an fsync on a busy disk: the new leader applies its first entry only
    // after two of them, and meanwhile its followers already follow it.
    const slowStore = async (): Promise<RaftLogStore> => {
      const store = new MemoryLogStore();
      const write = store.write.bind(store);
      store.write = async (update) => {
        if (update.sync) await new Promise((r) => setTimeout(r, 15));
        return write(update);
      };
      return store;
    };
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }, { logStores: slowStore }));
    const first = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    await waitFor(() => first.status().replicas.every((r) => r.current), 3000, 'current replicas');
    // The routing rule: the serving leader answers, and so does a member that sees no leader (its own view).
    const someoneAnswers = (): boolean => c.live().some((r) => r.isLeader() || r.leaderId() === 0);
    // ...and a member that answers as leaderless names no leader (the create path waits for a named one).
    const leaderlessViewsNameNone = (): boolean =>
      c.live().every((r) => r.leaderId() !== 0 || (r.clusterInfo() as { leader?: string }).leader === undefined);
    const samples: boolean[] = [];
    const sampler = setInterval(() => samples.push(someoneAnswers() && leaderlessViewsNameNone()), 1);
    try {
      expect(first.stepDown()).toBeNull();
      await waitFor(() => c.leader() !== undefined && c.leader() !== first, 3000, 'a new leader');
    } finally {
      clearInterval(sampler);
    }
    expect(samples.length).toBeGreaterThan(10);
    expect(samples.filter((answered) => !answered)).toHaveLength(0);
  });

  it('repeated step-downs visit every replica (a random target among equally caught-up members)', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    let leader = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    const led = new Set<number>([leader.leaderId()]);
    // Each step-down picks one of two equally current members: all three have led after 20 with p > 1 - 1e-5.
    for (let i = 0; i < 20 && led.size < 3; i++) {
      const from = leader;
      await waitFor(() => from.status().replicas.every((r) => r.current && r.lag === 0), 3000, 'current replicas');
      expect(from.stepDown()).toBeNull();
      await waitFor(() => c.leader() !== undefined && c.leader() !== from, 3000, 'a new leader');
      leader = c.leader()!;
      led.add(leader.leaderId());
    }
    expect([...led].sort()).toEqual([1, 2, 3]);
  });

  it('keeps leading and publishes again when the hand-over cannot happen', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const first = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    await waitFor(() => first.status().replicas.every((r) => r.current), 3000, 'current replicas');
    const firstId = first.leaderId();
    expect(first.stepDown()).toBeNull();
    // The TimeoutNow (still queued in the network) never reaches the target; the third member keeps the quorum.
    const target = (first as unknown as { raftNode: RaftNode }).raftNode.core.transferee();
    expect(target).not.toBe(0);
    c.network.disconnect(firstId, target);
    const answering: boolean[] = [];
    const sampler = setInterval(() => answering.push(first.isLeader()), 5);
    let acked: Record<string, unknown> | undefined;
    try {
      // Publishers get no-responders until the old leader gives up on the hand-over, then acks again.
      for (let attempt = 0; attempt < 30 && acked === undefined; attempt++) {
        const reply = c.publish('s.x', 'probe');
        await waitFor(() => c.ack(reply) !== undefined, 100, 'an ack').catch(() => undefined);
        acked = c.ack(reply);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(acked).toEqual({ stream: 'S', seq: 2 });
    expect(c.bus.noResponders).toBeGreaterThan(0);
    expect(first.leaderId()).toBe(firstId);
    expect(answering.length).toBeGreaterThan(5);
    expect(answering.every((a) => a)).toBe(true);
  });

  it('reports the cluster block as nats-server does', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    await c.waitForAcks([c.publish('s.x', 'one')]);
    await c.waitConverged();
    await waitFor(() => leader.status().replicas.every((r) => r.current), 2000, 'current replicas');
    const block = leader.clusterInfo() as { name: string; leader: string; replicas: Array<Record<string, unknown>> };
    const leaderName = `n${leader.leaderId()}`;
    expect(block.name).toBe('C1');
    expect(block.leader).toBe(leaderName);
    expect(block.replicas.map((r) => r['name'])).toEqual(['n1', 'n2', 'n3'].filter((n) => n !== leaderName));
    for (const r of block.replicas) {
      expect(Object.keys(r)).toEqual(['name', 'current', 'active', 'peer']);
      expect(r['current']).toBe(true);
      expect(r['active']).toBeLessThan(1e9);
    }
    expect(block.replicas.find((r) => r['name'] === 'n1')?.['peer'] ?? 'fjFyEjc1').toBe('fjFyEjc1');
    // Leaderless: two members gone, the survivor lists everyone (itself too) and no leader.
    const others = [...c.nodes.values()].filter((n) => n.replica !== leader).map((n) => n.id);
    for (const id of others) await c.crash(id);
    await waitFor(() => !leader.isLeader() && leader.leaderId() === 0, 3000, 'quorum loss');
    const lost = leader.clusterInfo() as { leader?: string; replicas: Array<Record<string, unknown>> };
    expect(lost.leader).toBeUndefined();
    expect(lost.replicas.map((r) => r['name'])).toEqual(['n1', 'n2', 'n3']);
    expect(lost.replicas.filter((r) => r['offline'] === true)).toHaveLength(2);
    expect(lost.replicas.every((r) => r['current'] === false)).toBe(true);
  });

  it('runs an R1 stream as a one-voter group and grows it to R3', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 1 }, { nodes: 1 }));
    const only = await c.waitForLeader();
    const { leader_since: since, ...block } = only.clusterInfo();
    expect(block).toEqual({ name: 'C1', raft_group: c.assignment.group, leader: 'n1' });
    // The serving leader says since when (2.11+ ClusterInfo.leader_since).
    expect(Date.parse(since!)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(since!)).toBeGreaterThan(Date.now() - 60_000);
    expect(only.stepDown()).toBeNull();
    for (let i = 0; i < 10; i++) await c.waitForAcks([c.publish('s.x', `m${i}`)]);
    c.assignment = { ...c.assignment, config: { ...c.assignment.config, num_replicas: 3 }, peers: [1, 2, 3] };
    await c.addSlot(2);
    await c.addSlot(3);
    // New members are not the first peer: they wait for the leader's log instead of founding a group.
    await c.open(2);
    await c.open(3);
    await only.update(c.assignment);
    await waitFor(() => only.status().replicas.length === 2 && only.status().replicas.every((r) => r.current), 8000, 'R3');
    expect((await c.waitConverged()).length).toBe(10);
    expect((await c.waitForAcks([c.publish('s.x', 'after')]))[0]).toEqual({ stream: 'S', seq: 11 });
  });

  it('resubscribes on a subject change from the catalogue', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    c.assignment = { ...c.assignment, config: { ...c.assignment.config, subjects: ['t.>'] } };
    for (const r of c.live()) await r.update(c.assignment);
    expect(leader.stream.config.subjects).toEqual(['t.>']);
    const before = c.bus.noResponders;
    c.publish('s.x', 'old subject');
    expect(c.bus.noResponders).toBe(before + 1);
    expect((await c.waitForAcks([c.publish('t.x', 'new subject')]))[0]).toEqual({ stream: 'S', seq: 1 });
  });

  it('moves the group to a new peer set (add a joiner, remove a member)', async () => {
    const c = (cluster = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 }));
    const leader = await c.waitForLeader();
    for (let i = 0; i < 20; i++) await c.waitForAcks([c.publish('s.x', `m${i}`)]);
    const leaderId = leader.leaderId();
    const removed = [1, 2, 3].find((id) => id !== leaderId)!;
    const peers = [1, 2, 3].filter((id) => id !== removed).concat(4);
    c.assignment = { ...c.assignment, peers };
    await c.addSlot(4);
    const joiner = await c.open(4, { joining: true });
    for (const r of c.live()) if (r !== joiner) await r.update(c.assignment);
    await waitFor(() => {
      const cfg = leader.status().replicas.map((r) => r.raftNodeId).sort();
      return JSON.stringify(cfg) === JSON.stringify(peers.filter((p) => p !== leaderId).sort());
    }, 8000, 'membership change');
    await c.nodes.get(removed)!.replica!.destroy();
    c.nodes.get(removed)!.replica = null;
    await waitFor(async () => (await contentOf(joiner)).length === 20, 5000, 'joiner catch-up');
    const ack = (await c.waitForAcks([c.publish('s.x', 'after')]))[0];
    expect(ack).toEqual({ stream: 'S', seq: 21 });
    expect((await c.waitConverged()).length).toBe(21);
  });
});
