// A member whose state machine lost the state its own (stand-in) snapshot stands for — a file stream whose
// message files were lost — must not replay the entries after that snapshot onto nothing: RaftNode discards its
// log (keeping term and vote) so the leader sends a complete image. Alone in its group (R1) it keeps its log.
import { type Entry, InMemoryNetwork, MemoryLogStore, type NodeId, RaftNode, SnapshotNotHeldError, type StateMachine } from '@flotilla/raft';
import { afterEach, describe, expect, it } from 'vitest';

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Like a file stream: durable state outside the Raft log (kept across a "restart" by reusing the object), a
 * stand-in compaction snapshot naming only how far the state reaches, and a complete image on demand. Idempotent
 * by index, as fullSnapshot requires. A fresh object is a replica whose files were lost.
 */
class FileLikeMachine implements StateMachine {
  values: string[] = [];
  lastIndex = 0;
  fullImages = 0;
  notHeld = 0;
  apply(entry: Entry): unknown {
    if (entry.index > this.lastIndex) {
      this.lastIndex = entry.index;
      this.values.push(dec.decode(entry.data));
    }
    return this.values.length;
  }
  snapshot(): Uint8Array {
    return enc.encode(`stand-in:${this.lastIndex}`);
  }
  fullSnapshot(): Uint8Array {
    this.fullImages++;
    return enc.encode(JSON.stringify({ lastIndex: this.lastIndex, values: this.values }));
  }
  restore(data: Uint8Array): void {
    const text = dec.decode(data);
    if (text.startsWith('stand-in:')) {
      if (this.lastIndex >= Number(text.slice('stand-in:'.length))) return;
      this.notHeld++;
      throw new SnapshotNotHeldError();
    }
    const image = JSON.parse(text) as { lastIndex: number; values: string[] };
    this.lastIndex = image.lastIndex;
    this.values = image.values;
  }
}

const running: RaftNode[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.stop()));
});

type NotHeld = { logDiscarded: boolean; snapshotIndex: number; lastIndex: number };

async function startNode(id: NodeId, peers: NodeId[], net: InMemoryNetwork, store: MemoryLogStore, sm: FileLikeMachine, notHeld: NotHeld[] = []): Promise<RaftNode> {
  const node = await RaftNode.start({
    group: 'g',
    id,
    peers,
    store,
    transport: net.transport(),
    stateMachine: sm,
    tickMs: 5,
    snapshotEveryEntries: 10,
    raft: { electionTicks: 10 },
    onSnapshotNotHeld: (info) => notHeld.push(info),
  });
  running.push(node);
  return node;
}

async function stopNode(node: RaftNode): Promise<void> {
  running.splice(running.indexOf(node), 1);
  await node.stop();
}

async function until<T>(fn: () => T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const values = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `v${from + i}`);

async function threeNodes(): Promise<{ net: InMemoryNetwork; ids: NodeId[]; stores: Map<NodeId, MemoryLogStore>; machines: Map<NodeId, FileLikeMachine>; nodes: Map<NodeId, RaftNode>; leader: RaftNode }> {
  const net = new InMemoryNetwork();
  const ids = [1, 2, 3];
  const stores = new Map(ids.map((id) => [id, new MemoryLogStore()]));
  const machines = new Map(ids.map((id) => [id, new FileLikeMachine()]));
  const nodes = new Map<NodeId, RaftNode>();
  for (const id of ids) nodes.set(id, await startNode(id, ids, net, stores.get(id)!, machines.get(id)!));
  const leader = await until(() => [...nodes.values()].find((n) => n.isLeader()), 5000, 'a leader');
  return { net, ids, stores, machines, nodes, leader };
}

describe('RaftNode: state machine behind its own snapshot', () => {
  it('discards the log (term up by one, no vote forgotten, commit 0) and gets the complete state from the leader', async () => {
    const { net, ids, stores, machines, nodes, leader } = await threeNodes();
    for (const v of values(0, 40)) await leader.propose(enc.encode(v));
    const victim = ids.find((id) => id !== leader.id)!;
    const victimStore = stores.get(victim)!;
    await until(() => machines.get(victim)!.values.length === 40 && nodes.get(victim)!.core.log.snapshotIndex > 10, 5000, 'the follower compacted');
    await stopNode(nodes.get(victim)!);
    const before = await victimStore.load('g');
    expect(before.snapshot).not.toBeNull();
    expect(before.hardState.term).toBeGreaterThan(0);
    expect(before.hardState.commit).toBeGreaterThan(10);
    // Written while it is down: it must end with these too, after the ones it lost.
    for (const v of values(40, 45)) await leader.propose(enc.encode(v));

    const lost = new FileLikeMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startNode(victim, ids, net, victimStore, lost, notHeld);
    // Nothing was delivered yet (listening began inside start): this is what it started from. The term moved one
    // up with no vote in it (so the old-term leader steps down and the next one sends the snapshot): the vote
    // given in the old term can never be given again.
    const hardState = { term: before.hardState.term + 1, vote: 0, commit: 0 };
    expect({ term: restarted.core.term, vote: restarted.core.vote }).toEqual({ term: hardState.term, vote: 0 });
    expect(restarted.core.log.lastIndex()).toBe(0);
    expect(restarted.core.log.committed).toBe(0);
    expect(await victimStore.load('g')).toEqual({ hardState, snapshot: null, entries: [] });
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
    const lost = new FileLikeMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startNode(victim, ids, net, stores.get(victim)!, lost, notHeld);
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
    const back = await startNode(leader.id, ids, net, stores.get(leader.id)!, machines.get(leader.id)!);
    await until(() => back.isLeader() || behindNode.isLeader() || restarted.isLeader(), 5000, 'a leader again');
    await until(() => lost.values.length === 41 && machines.get(behind)!.values.length === 41, 5000, 'both followers holding every value');
    expect(lost.values).toEqual(['first', ...values(0, 40)]);
    expect(machines.get(behind)!.values).toEqual(['first', ...values(0, 40)]);
  });

  it('keeps its log when it is the only voter: nobody could send it the state', async () => {
    const net = new InMemoryNetwork();
    const store = new MemoryLogStore();
    const sm = new FileLikeMachine();
    const node = await startNode(1, [1], net, store, sm);
    await until(() => node.isLeader(), 5000, 'the single node leading');
    for (const v of values(0, 25)) await node.propose(enc.encode(v));
    await until(() => node.core.log.snapshotIndex > 10, 5000, 'a snapshot');
    await stopNode(node);
    const before = await store.load('g');
    expect(before.entries.length).toBeGreaterThan(0);

    const lost = new FileLikeMachine();
    const notHeld: NotHeld[] = [];
    const restarted = await startNode(1, [1], net, store, lost, notHeld);
    expect(notHeld).toEqual([{ logDiscarded: false, snapshotIndex: before.snapshot!.meta.index, lastIndex: before.snapshot!.meta.index + before.entries.length }]);
    expect(restarted.core.log.snapshotIndex).toBe(before.snapshot!.meta.index);
    await until(() => restarted.isLeader(), 5000, 'leading again');
    // What the log still held after the snapshot is applied again; what only the lost state held stays lost.
    const afterSnapshot = before.entries.filter((e) => e.data.length > 0).map((e) => dec.decode(e.data));
    await until(() => lost.values.length >= afterSnapshot.length, 5000, 'the entries after the snapshot');
    expect(lost.values).toEqual(afterSnapshot);
    expect(afterSnapshot.length).toBeGreaterThan(0);
    expect((await store.load('g')).snapshot?.meta.index).toBeGreaterThanOrEqual(before.snapshot!.meta.index);
  });
});
