// A member whose state machine lost the state its own (stand-in) snapshot stands for — a file stream whose
// message files were lost — must not replay the entries after that snapshot onto nothing: RaftNode discards its
// log (never forgetting a vote) so the leader sends a complete image. Alone in its group (R1) it keeps its log.
import { InMemoryNetwork, MemoryLogStore, type NodeId, type RaftNode } from '@flotilla/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { GROUP, type NotHeld, StandInMachine, cluster, dec, enc, startNode, stopAllNodes, stopNode, until } from './raft-node-fixtures.js';

afterEach(stopAllNodes);

/** (Re)starts a member compacting every 10 entries, reporting onSnapshotNotHeld into `notHeld`. */
const startMember = (id: NodeId, peers: NodeId[], net: InMemoryNetwork, store: MemoryLogStore, sm: StandInMachine, notHeld?: NotHeld[]): Promise<RaftNode> =>
  startNode(id, peers, net, store, sm, { snapshotEveryEntries: 10, notHeld });

const values = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `v${from + i}`);

const threeNodes = () => cluster([1, 2, 3], () => new StandInMachine(), { snapshotEveryEntries: 10 });

describe('RaftNode: state machine behind its own snapshot', () => {
  it('discards the log (term up by one, no vote forgotten, commit 0) and gets the complete state from the leader', async () => {
    const { net, ids, stores, machines, nodes, leader } = await threeNodes();
    for (const v of values(0, 40)) await leader.propose(enc.encode(v));
    const victim = ids.find((id) => id !== leader.id)!;
    const victimStore = stores.get(victim)!;
    await until(() => machines.get(victim)!.values.length === 40 && nodes.get(victim)!.core.log.snapshotIndex > 10, 5000, 'the follower compacted');
    await stopNode(nodes.get(victim)!);
    const before = await victimStore.load(GROUP);
    expect(before.snapshot).not.toBeNull();
    expect(before.hardState.term).toBeGreaterThan(0);
    expect(before.hardState.commit).toBeGreaterThan(10);
    // Written while it is down: it must end with these too, after the ones it lost.
    for (const v of values(40, 45)) await leader.propose(enc.encode(v));

    const lost = new StandInMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startMember(victim, ids, net, victimStore, lost, notHeld);
    // Nothing was delivered yet (listening began inside start): this is what it started from. The term moved one
    // up with no vote in it (so the old-term leader steps down and the next one sends the snapshot): the vote
    // given in the old term can never be given again.
    const hardState = { term: before.hardState.term + 1, vote: 0, commit: 0 };
    expect({ term: restarted.core.term, vote: restarted.core.vote }).toEqual({ term: hardState.term, vote: 0 });
    expect(restarted.core.log.lastIndex()).toBe(0);
    expect(restarted.core.log.committed).toBe(0);
    expect(await victimStore.load(GROUP)).toEqual({ hardState, snapshot: null, entries: [] });
    expect(notHeld).toEqual([{ logDiscarded: true, snapshotIndex: before.snapshot!.meta.index, lastIndex: before.snapshot!.meta.index + before.entries.length }]);
    expect(lost.notHeld).toBe(1);

    await until(() => lost.values.length === 45, 5000, 'the restarted follower holding every value');
    expect(lost.values).toEqual(values(0, 45));
    // The complete image came from whoever leads now (the old-term leader stepped down on hearing the new term).
    const now = await until(() => [...nodes.values()].filter((n) => n.id !== victim).find((n) => n.isLeader()), 5000, 'a leader');
    expect(machines.get(now.id)!.fullImages).toBeGreaterThan(0);
    expect(restarted.core.log.snapshotIndex).toBeGreaterThan(10);
    expect(restarted.core.term).toBeGreaterThan(before.hardState.term);
    expect(restarted.core.term).toBe(now.core.term);
    // Replication goes on normally afterwards.
    await now.propose(enc.encode('after'));
    await until(() => lost.values.length === 46, 5000, 'a later entry');
    expect(lost.values.at(-1)).toBe('after');
  });

  it('does not vote for a candidate lacking entries of its discarded log until it has caught up', async () => {
    const { net, ids, stores, machines, nodes, leader } = await threeNodes();
    await leader.propose(enc.encode('first'));
    const [behind, victim] = ids.filter((id) => id !== leader.id) as [NodeId, NodeId];
    await until(() => machines.get(behind)!.values.length === 1, 5000, 'every member applying the first entry');
    // `behind` misses the next 40: they commit with the leader and `victim` alone.
    net.isolate(behind, ids);
    for (const v of values(0, 40)) await leader.propose(enc.encode(v));
    await until(() => machines.get(victim)!.values.length === 41 && nodes.get(victim)!.core.log.snapshotIndex > 10, 5000, 'the victim compacted');
    await stopNode(nodes.get(victim)!);
    await stopNode(leader);
    net.heal();

    // The victim comes back without its state; only `behind` is there to lead.
    const lost = new StandInMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startMember(victim, ids, net, stores.get(victim)!, lost, notHeld);
    expect(notHeld.map((n) => n.logDiscarded)).toEqual([true]);
    const behindNode = nodes.get(behind)!;
    const leaders: NodeId[] = [];
    const start = Date.now();
    // ~60 election timeouts: `behind` campaigns again and again; the victim's vote would elect it.
    while (Date.now() - start < 600) {
      if (behindNode.isLeader()) leaders.push(behind);
      if (restarted.isLeader()) leaders.push(victim);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(leaders).toEqual([]);

    // The old leader returns (its state survived): it leads and both others end with every value.
    const back = await startMember(leader.id, ids, net, stores.get(leader.id)!, machines.get(leader.id)!);
    await until(() => back.isLeader() || behindNode.isLeader() || restarted.isLeader(), 5000, 'a leader again');
    await until(() => lost.values.length === 41 && machines.get(behind)!.values.length === 41, 5000, 'both followers holding every value');
    expect(lost.values).toEqual(['first', ...values(0, 40)]);
    expect(machines.get(behind)!.values).toEqual(['first', ...values(0, 40)]);
  });

  it('keeps its log when it is the only voter: nobody could send it the state', async () => {
    const net = new InMemoryNetwork();
    const store = new MemoryLogStore();
    const sm = new StandInMachine();
    const node = await startMember(1, [1], net, store, sm);
    await until(() => node.isLeader(), 5000, 'the single node leading');
    for (const v of values(0, 25)) await node.propose(enc.encode(v));
    await until(() => node.core.log.snapshotIndex > 10, 5000, 'a snapshot');
    await stopNode(node);
    const before = await store.load(GROUP);
    expect(before.entries.length).toBeGreaterThan(0);

    const lost = new StandInMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startMember(1, [1], net, store, lost, notHeld);
    expect(notHeld).toEqual([{ logDiscarded: false, snapshotIndex: before.snapshot!.meta.index, lastIndex: before.snapshot!.meta.index + before.entries.length }]);
    expect(restarted.core.log.snapshotIndex).toBe(before.snapshot!.meta.index);
    await until(() => restarted.isLeader(), 5000, 'leading again');
    // What the log still held after the snapshot is applied again; what only the lost state held stays lost.
    const afterSnapshot = before.entries.filter((e) => e.data.length > 0).map((e) => dec.decode(e.data));
    await until(() => lost.values.length >= afterSnapshot.length, 5000, 'the entries after the snapshot');
    expect(lost.values).toEqual(afterSnapshot);
    expect(afterSnapshot.length).toBeGreaterThan(0);
    expect((await store.load(GROUP)).snapshot?.meta.index).toBeGreaterThanOrEqual(before.snapshot!.meta.index);
  });
});
