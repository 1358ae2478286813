import { InMemoryNetwork, MemoryLogStore, MessageType, NotLeaderError, RaftNode } from '@flotilla/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { GROUP, ListMachine, StandInMachine, cluster as clusterOf, dec, enc, startNode, stopAllNodes, trackNode, until } from './raft-node-fixtures.js';

afterEach(stopAllNodes);

const cluster = (ids: number[], opts: { snapshotEveryEntries?: number; snapshotEveryBytes?: number } = {}) => clusterOf(ids, () => new ListMachine(), opts);

/**
 * Three StandInMachine nodes compacting every 10 entries; one follower is cut off while 40 entries commit and
 * the leader compacts past them, then the network heals: only a snapshot can catch it up.
 */
async function followerBehindCompaction(machine: () => StandInMachine, net?: InMemoryNetwork) {
  const c = await clusterOf([1, 2, 3], machine, { snapshotEveryEntries: 10, net });
  const lagging = c.ids.find((id) => id !== c.leader.id)!;
  c.net.isolate(lagging, c.ids);
  const others = c.ids.filter((id) => id !== lagging).map((id) => c.nodes.get(id)!);
  let leader = c.leader;
  for (let i = 0; i < 40; i++) leader = await proposeOnLeader(others, enc.encode(`v${i}`));
  expect(leader.core.log.snapshotIndex).toBeGreaterThan(10);
  c.net.heal();
  return { ...c, leader, lagging };
}

/**
 * Proposes on whichever of `nodes` leads; again on the next leader when a node refused it outright because it
 * no longer led (5 ms ticks: a loaded machine can stall a leader past its election timeout). A proposal that
 * was appended and then lost is not retried: its outcome is unknown.
 */
async function proposeOnLeader(nodes: RaftNode[], data: Uint8Array): Promise<RaftNode> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const leader = await until(() => nodes.find((n) => n.isLeader()), 5000, 'a leader');
    try {
      await leader.propose(data);
      return leader;
    } catch (error) {
      if (!(error instanceof NotLeaderError) || !error.message.startsWith('not leader')) throw error;
    }
  }
  throw new Error('no leader took the proposal');
}

describe('RaftNode', () => {
  it('elects a leader, commits proposals, applies them everywhere and returns results', async () => {
    const c = await cluster([1, 2, 3]);
    const results = await Promise.all(['a', 'b', 'c'].map((v) => c.leader.propose(enc.encode(v))));
    expect(results.map((r) => r.result)).toEqual([1, 2, 3]);
    await until(() => [...c.machines.values()].every((m) => m.values.length === 3));
    for (const m of c.machines.values()) expect(m.values).toEqual(['a', 'b', 'c']);
    expect(c.leaders).toContain(c.leader.id);
  });

  it('applies a commit without waiting for a write, and writes the commit index alone at a later tick', async () => {
    const synced: boolean[] = [];
    class SlowStore extends MemoryLogStore {
      override async write(update: Parameters<MemoryLogStore['write']>[0]): Promise<void> {
        synced.push(update.sync);
        await new Promise((r) => setTimeout(r, 50));
        return super.write(update);
      }
    }
    const store = new SlowStore();
    const node = await startNode(1, [1], new InMemoryNetwork(), store, new ListMachine());
    await until(() => node.isLeader());
    await until(async () => (await store.load(GROUP)).hardState.commit === node.core.log.committed);
    const before = synced.length;
    const { index } = await node.propose(enc.encode('x'));
    // One synced write (the entry); applying it waited for no second write.
    expect(synced.slice(before)).toEqual([true]);
    expect(node.appliedIndex).toBe(index);
    expect(node.core.log.applied).toBe(index);
    expect((await store.load(GROUP)).hardState.commit).toBeLessThan(index);
    // The commit index alone is written, unsynced, at a following tick.
    await until(async () => (await store.load(GROUP)).hardState.commit === index);
    expect(synced.slice(before)).toEqual([true, false]);
  });

  it('appliedIndex counts an entry applied while a later entry is still being written', async () => {
    class SlowStore extends MemoryLogStore {
      override async write(update: Parameters<MemoryLogStore['write']>[0]): Promise<void> {
        await new Promise((r) => setTimeout(r, 50));
        return super.write(update);
      }
    }
    const node = await startNode(1, [1], new InMemoryNetwork(), new SlowStore(), new ListMachine());
    await until(() => node.isLeader() && node.core.log.applied === node.core.log.lastIndex());
    const first = node.propose(enc.encode('x'));
    // Appended while x's write is in flight: the next Ready applies x and writes y.
    await new Promise((r) => setTimeout(r, 10));
    const second = node.propose(enc.encode('y'));
    const { index } = await first;
    expect(node.appliedIndex).toBe(index);
    expect(node.core.log.applied).toBeLessThan(index);
    await second;
    await until(() => node.core.log.applied === index + 1);
  });

  it('answers a proposal on a follower with the known leader', async () => {
    const c = await cluster([1, 2, 3]);
    const follower = [...c.nodes.values()].find((n) => !n.isLeader())!;
    await until(() => follower.status().leader === c.leader.id);
    const err = await follower.propose(enc.encode('x')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotLeaderError);
    expect((err as NotLeaderError).leader).toBe(c.leader.id);
  });

  it('packs a batch of proposals into one entry and applies each item', async () => {
    const c = await cluster([1, 2, 3]);
    const before = c.leader.writes;
    const items = Array.from({ length: 500 }, (_, i) => enc.encode(`v${i}`));
    const { first, results } = await c.leader.proposeBatch(items);
    expect(results).toHaveLength(500);
    expect(results[499]).toBe((results[0] as number) + 499);
    expect(c.leader.core.log.entry(first)?.type).toBe(2);
    expect(c.leader.core.log.lastIndex()).toBe(first);
    expect(c.leader.writes - before).toBeLessThan(5);
    await until(() => [...c.machines.values()].every((m) => m.values.length === 500));
    for (const m of c.machines.values()) expect(m.values[499]).toBe('v499');
  });

  it('can propose a batch as separate entries in one append', async () => {
    const c = await cluster([1, 2, 3]);
    const items = Array.from({ length: 300 }, (_, i) => enc.encode(`e${i}`));
    const { first, results } = await c.leader.proposeBatch(items, { pack: false });
    expect(results).toHaveLength(300);
    expect(c.leader.core.log.entry(first + 299)?.data).toEqual(items[299]);
  });

  it('elects a new leader after the leader is isolated and keeps committed data', async () => {
    const c = await cluster([1, 2, 3]);
    await c.leader.propose(enc.encode('before'));
    const old = c.leader.id;
    c.net.isolate(old, [1, 2, 3]);
    const next = await until(() => [...c.nodes.values()].find((n) => n.isLeader() && n.id !== old));
    await next.propose(enc.encode('after'));
    c.net.heal();
    await until(() => c.machines.get(old)!.values.includes('after'));
    expect(c.machines.get(old)!.values).toEqual(['before', 'after']);
  });

  it('a re-elected leader settles its overwritten old-term proposals before new ones reuse their indexes', async () => {
    const c = await cluster([1, 2, 3]);
    await c.leader.propose(enc.encode('before'));
    const old = c.leader;
    c.net.isolate(old.id, [1, 2, 3]);
    // Appended on the isolated leader only: they can never commit.
    const lost = [old.propose(enc.encode('lost1')), old.propose(enc.encode('lost2')), old.propose(enc.encode('lost3'))];
    for (const p of lost) p.catch(() => undefined);
    const next = await until(() => [...c.nodes.values()].find((n) => n.isLeader() && n.id !== old.id));
    c.net.heal();
    await until(() => c.nodes.get(old.id)!.core.leader === next.id && old.core.log.lastIndex() <= next.core.log.lastIndex());
    // Hand leadership back: the old leader's new entries reuse the indexes of its lost proposals.
    await until(() => next.transferLeadership(old.id) && false, 300).catch(() => undefined);
    await until(() => old.isLeader() && old.core.log.committed === old.core.log.lastIndex());
    const fresh = await old.propose(enc.encode('fresh'));
    expect(fresh.index).toBeGreaterThan(0);
    await expect(Promise.all(lost)).rejects.toThrow('lost to a leader change');
    await until(() => [...c.machines.values()].every((m) => m.values.includes('fresh')));
    for (const m of c.machines.values()) expect(m.values).toEqual(['before', 'fresh']);
  });

  it('restarts from its store and catches up through a snapshot', async () => {
    const c = await cluster([1, 2, 3], { snapshotEveryEntries: 20 });
    const victim = [...c.nodes.values()].find((n) => !n.isLeader())!;
    await victim.stop();
    for (let i = 0; i < 60; i++) await c.leader.propose(enc.encode(`v${i}`));
    expect(c.leader.core.log.snapshotIndex).toBeGreaterThan(0);
    const sm = new ListMachine();
    const restarted = await startNode(victim.id, [1, 2, 3], c.net, c.stores.get(victim.id)!, sm);
    await until(() => sm.values.length === 60);
    expect(sm.values).toEqual(Array.from({ length: 60 }, (_, i) => `v${i}`));
    expect(restarted.core.log.snapshotIndex).toBeGreaterThan(0);
  });

  it('snapshots after snapshotEveryBytes of applied data even below the entry count', async () => {
    const c = await cluster([1, 2, 3], { snapshotEveryBytes: 4000 });
    const big = 'x'.repeat(1000);
    for (let i = 0; i < 3; i++) await c.leader.propose(enc.encode(big));
    expect(c.leader.core.log.snapshotIndex).toBe(0);
    for (let i = 0; i < 3; i++) await c.leader.propose(enc.encode(big));
    await until(() => c.leader.core.log.snapshotIndex > 0);
    expect(c.leader.core.log.snapshotIndex).toBeLessThanOrEqual(c.leader.core.log.applied);
  });

  it('sends a follower the complete image instead of a stand-in snapshot', async () => {
    const { machines, nodes, leader, lagging } = await followerBehindCompaction(() => new StandInMachine());
    await until(() => machines.get(lagging)!.values.length === 40);
    expect(machines.get(lagging)!.values).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`));
    expect(machines.get(leader.id)!.fullImages).toBeGreaterThan(0);
    expect(nodes.get(lagging)!.core.log.snapshotIndex).toBeGreaterThan(10);
  });

  it('never sends a chunk of the stand-in, also not one a tick queued while the complete image was being made', async () => {
    const net = new InMemoryNetwork();
    const chunksSent: string[] = [];
    const makeTransport = net.transport.bind(net);
    net.transport = () => {
      const t = makeTransport();
      return {
        send: (messages) => {
          for (const m of messages) if (m.type === MessageType.SnapshotChunk) chunksSent.push(dec.decode(m.data));
          t.send(messages);
        },
        listen: (group, id, handler) => t.listen(group, id, handler),
      };
    };
    // dozens of 5 ms ticks pass while the complete image is made
    const { machines, lagging } = await followerBehindCompaction(() => new StandInMachine(300), net);
    await until(() => machines.get(lagging)!.values.length === 40, 10_000);
    expect(chunksSent.length).toBeGreaterThan(0);
    expect(chunksSent.filter((c) => c.startsWith('stand-in'))).toEqual([]);
    expect(machines.get(lagging)!.standInsRestored).toBe(0);
  });

  it('lets a snapshot policy decide when to snapshot', async () => {
    const calls: Array<[number, number]> = [];
    const net = new InMemoryNetwork();
    const node = await RaftNode.start({
      group: 'gp',
      id: 1,
      peers: [1],
      store: new MemoryLogStore(),
      transport: net.transport(),
      stateMachine: new ListMachine(),
      tickMs: 5,
      snapshotPolicy: (entries, bytes) => {
        calls.push([entries, bytes]);
        return bytes >= 30;
      },
    });
    trackNode(node);
    await until(() => node.isLeader());
    for (let i = 0; i < 3; i++) await node.propose(enc.encode('0123456789'));
    await until(() => node.core.log.snapshotIndex > 0);
    expect(calls.some(([, bytes]) => bytes >= 30)).toBe(true);
    expect(calls.every(([entries]) => entries >= 0)).toBe(true);
  });

  it('reports how long ago each peer was heard from', async () => {
    const c = await cluster([1, 2, 3]);
    await c.leader.propose(enc.encode('v'));
    const others = [1, 2, 3].filter((id) => id !== c.leader.id);
    await until(() => others.every((id) => c.leader.peerSilenceMs(id) < 100));
    expect(c.leader.peerSilenceMs(99)).toBe(Infinity);
    expect([...c.leader.peerMatch().keys()].sort()).toEqual([1, 2, 3]);
  });

  it('serves a linearizable read barrier on the leader only', async () => {
    const c = await cluster([1, 2, 3]);
    await c.leader.propose(enc.encode('x'));
    await c.leader.readBarrier();
    const follower = [...c.nodes.values()].find((n) => !n.isLeader())!;
    await expect(follower.readBarrier()).rejects.toBeInstanceOf(NotLeaderError);
  });

  it('adds a fourth node as learner, promotes it and hands leadership over', async () => {
    const c = await cluster([1, 2, 3]);
    await c.leader.propose(enc.encode('x'));
    const sm = new ListMachine();
    const joiner = await startNode(4, [], c.net, new MemoryLogStore(), sm);
    await c.leader.changeMembership({ type: 'addLearner', nodeId: 4 });
    await until(() => c.leader.core.config().voters.includes(4));
    await until(() => sm.values.includes('x'));
    await until(() => joiner.core.log.lastIndex() === c.leader.core.log.lastIndex());
    expect(c.leader.transferLeadership(4)).toBe(true);
    await until(() => joiner.isLeader());
  });
});
