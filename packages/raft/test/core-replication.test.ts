import { describe, expect, it } from 'vitest';
import { Cluster, drain, entry, msg, newCore, types } from './cluster-harness.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('commit rules', () => {
  it('commits a current-term entry once a quorum persisted it', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    const { index } = leader.propose(bytes('a')) as { index: number };
    cluster.settle();
    expect(leader.log.committed).toBe(index);
    for (const id of [1, 2, 3]) expect(cluster.applied.get(id)!.map((e) => text(e.data))).toContain('a');
  });

  it('does not commit by counting replicas of a previous-term entry', () => {
    // Leader of term 4 holds an entry of term 2 at index 2 that a follower also holds; its own no-op is not
    // yet replicated, so index 2 must stay uncommitted.
    const leader = newCore(1, [1, 2, 3], { hardState: { term: 3, vote: 1, commit: 1 }, entries: [boot(), entry(2, 2, 'old')] });
    drain(leader);
    leader.campaignNow();
    drain(leader);
    leader.step(msg(types.PreVoteResp, 2, 1, 4));
    drain(leader);
    leader.step(msg(types.VoteResp, 2, 1, 4));
    drain(leader);
    expect(leader.role).toBe('leader');
    leader.step(msg(types.AppendResp, 2, 1, 4, { index: 2 }));
    drain(leader);
    expect(leader.log.committed).toBe(1);
    leader.step(msg(types.AppendResp, 2, 1, 4, { index: 3 }));
    drain(leader);
    expect(leader.log.committed).toBe(3);
  });

  it('the deliberate bug option does commit the previous-term entry', () => {
    const leader = newCore(1, [1, 2, 3], {
      hardState: { term: 3, vote: 1, commit: 1 },
      entries: [boot(), entry(2, 2, 'old')],
      testBugs: { commitPreviousTerm: true },
    });
    leader.campaignNow();
    leader.step(msg(types.PreVoteResp, 2, 1, 4));
    drain(leader);
    leader.step(msg(types.VoteResp, 2, 1, 4));
    drain(leader);
    leader.step(msg(types.AppendResp, 2, 1, 4, { index: 2 }));
    expect(leader.log.committed).toBe(2);
  });

  const followerCases = [
    { name: 'leader commit beyond the new entries', leaderCommit: 9, entries: 2, commit: 3 },
    { name: 'leader commit inside the new entries', leaderCommit: 2, entries: 2, commit: 2 },
    { name: 'heartbeat-only append', leaderCommit: 5, entries: 0, commit: 1 },
  ];
  for (const c of followerCases) {
    it(`follower commit = min(leader commit, last new index): ${c.name}`, () => {
      const f = newCore(2, [1, 2, 3]);
      drain(f);
      const entries = Array.from({ length: c.entries }, (_, i) => entry(2 + i, 2, `e${i}`));
      f.step(msg(types.Append, 1, 2, 2, { index: 1, logTerm: 1, entries, commit: c.leaderCommit }));
      expect(f.log.committed).toBe(c.commit);
    });
  }

  it('a leader counts its own entries only after persisting them', () => {
    const cluster = new Cluster([1]);
    cluster.elect(1);
    const leader = cluster.get(1);
    const { index } = leader.propose(bytes('x')) as { index: number };
    expect(leader.log.committed).toBeLessThan(index);
    const ready = leader.ready();
    expect(ready.entries.map((e) => e.index)).toEqual([index]);
    expect(ready.committedEntries).toHaveLength(0);
    leader.advance(ready);
    expect(leader.log.committed).toBe(index);
  });
});

describe('acknowledgement after persist', () => {
  it('a follower acknowledges appended entries only in messagesAfterPersist', () => {
    const f = newCore(2, [1, 2, 3]);
    drain(f);
    f.step(msg(types.Append, 1, 2, 2, { index: 1, logTerm: 1, entries: [entry(2, 2, 'a')], commit: 1 }));
    const ready = f.ready();
    expect(ready.messages).toHaveLength(0);
    expect(ready.messagesAfterPersist).toMatchObject([{ type: types.AppendResp, index: 2, reject: false }]);
    expect(ready.entries.map((e) => e.index)).toEqual([2]);
    expect(ready.mustSync).toBe(true);
  });

  it('the leader sends appends before its own persist completes (parallel persistence)', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    leader.propose(bytes('p'));
    const ready = leader.ready();
    expect(ready.entries).toHaveLength(1);
    expect(ready.messages.filter((m) => m.type === types.Append && m.entries.length === 1)).toHaveLength(2);
  });

  it('withdraws a pending acknowledgement when the acknowledged entries are truncated', () => {
    const f = newCore(2, [1, 2, 3]);
    drain(f);
    f.step(msg(types.Append, 1, 2, 2, { index: 1, logTerm: 1, entries: [entry(2, 2, 'a'), entry(3, 2, 'b')] }));
    f.step(msg(types.Append, 3, 2, 3, { index: 2, logTerm: 2, entries: [entry(3, 3, 'c')] }));
    const acks = f.ready().messagesAfterPersist.filter((m) => m.type === types.AppendResp);
    expect(acks.map((m) => [m.to, m.index])).toEqual([[3, 3]]);
  });
});

describe('log replication', () => {
  it('rejects a mismatching append with a conflict-term hint', () => {
    const f = newCore(2, [1, 2, 3], {
      hardState: { term: 3, vote: 0, commit: 1 },
      entries: [boot(), entry(2, 2), entry(3, 2), entry(4, 2), entry(5, 3)],
    });
    const cases = [
      { prev: 5, prevTerm: 4, hintTerm: 3, hintIndex: 5 },
      { prev: 4, prevTerm: 3, hintTerm: 2, hintIndex: 2 },
      { prev: 9, prevTerm: 4, hintTerm: 0, hintIndex: 6 },
    ];
    for (const c of cases) {
      f.step(msg(types.Append, 1, 2, 4, { index: c.prev, logTerm: c.prevTerm }));
      const resp = drain(f).messages.find((m) => m.type === types.AppendResp)!;
      expect(resp).toMatchObject({ reject: true, index: c.prev, hintTerm: c.hintTerm, hintIndex: c.hintIndex });
    }
  });

  it('a diverged old leader converges with few round trips (fast back-tracking)', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    cluster.isolate(1);
    for (let i = 0; i < 20; i++) cluster.get(1).propose(bytes(`old${i}`));
    cluster.settle();
    cluster.tick(40);
    const leaderId = cluster.leaders().find((id) => id !== 1)!;
    expect([2, 3]).toContain(leaderId);
    for (let i = 0; i < 30; i++) cluster.get(leaderId).propose(bytes(`new${i}`));
    cluster.settle();
    cluster.heal();
    const rejects: number[] = [];
    for (let t = 0; t < 5; t++) {
      for (const c of cluster.cores.values()) c.tick();
      rejects.push(cluster.settle().filter((m) => m.type === types.AppendResp && m.reject).length);
    }
    const newLeader = cluster.get(leaderId);
    expect(cluster.leaders()).toEqual([leaderId]);
    expect(cluster.get(1).log.lastIndex()).toBe(newLeader.log.lastIndex());
    expect(text(cluster.get(1).log.entry(newLeader.log.lastIndex())!.data)).toBe('new29');
    expect(rejects.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2);
  });

  it('pipelines a bounded window of appends and batches proposals', () => {
    const cluster = new Cluster([1, 2, 3], { maxInflight: 4, maxMsgEntries: 10 });
    cluster.elect(1);
    const leader = cluster.get(1);
    for (let i = 0; i < 100; i++) leader.propose(bytes(`v${i}`));
    const ready = leader.ready();
    const toTwo = ready.messages.filter((m) => m.to === 2 && m.type === types.Append);
    expect(toTwo).toHaveLength(4);
    expect(toTwo.map((m) => m.entries.length)).toEqual([10, 10, 10, 10]);
    leader.advance(ready);
    for (const m of ready.messages) cluster.get(m.to).step(m);
    cluster.settle();
    expect(cluster.get(2).log.lastIndex()).toBe(leader.log.lastIndex());
    expect(leader.log.committed).toBe(leader.log.lastIndex());
  });

  // One proposal replicated to followers already streaming appends: what carries the commit to them.
  for (const c of [
    { lazyCommit: false, commitOnlyAppends: 2, followerCommitBeforeHeartbeat: true },
    { lazyCommit: true, commitOnlyAppends: 0, followerCommitBeforeHeartbeat: false },
  ]) {
    it(`commit propagation with lazyCommit=${c.lazyCommit}: ${c.commitOnlyAppends} appends without entries`, () => {
      const cluster = new Cluster([1, 2, 3], { lazyCommit: c.lazyCommit });
      cluster.elect(1);
      const leader = cluster.get(1);
      const { index } = leader.propose(bytes('x')) as { index: number };
      const delivered = cluster.settle();
      expect(leader.log.committed).toBe(index);
      const commitOnly = delivered.filter((m) => m.type === types.Append && m.entries.length === 0);
      expect(commitOnly).toHaveLength(c.commitOnlyAppends);
      for (const id of [2, 3]) expect(cluster.get(id).log.committed >= index).toBe(c.followerCommitBeforeHeartbeat);
      // The next heartbeat carries it either way, and so does the next append.
      cluster.tick(1);
      for (const id of [2, 3]) expect(cluster.get(id).log.committed).toBe(index);
      const next = leader.propose(bytes('y')) as { index: number };
      const appends = cluster.settle().filter((m) => m.type === types.Append && m.entries.length > 0);
      expect(appends.map((m) => m.commit)).toEqual([index, index]);
      expect(leader.log.committed).toBe(next.index);
      expect(cluster.applied.get(2)!.map((e) => text(e.data))).toContain('x');
    });
  }

  it('resends after lost appends', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    cluster.isolate(2);
    leader.propose(bytes('lost'));
    cluster.settle();
    cluster.heal();
    cluster.tick(4);
    expect(cluster.get(2).log.lastIndex()).toBe(leader.log.lastIndex());
  });

  it('answers a proposal on a follower with the known leader', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    expect(cluster.get(2).propose(bytes('x'))).toEqual({ ok: false, leader: 1, reason: 'not leader' });
  });
});

describe('ReadIndex', () => {
  it('answers once a quorum confirms leadership by heartbeat', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    expect(leader.readIndex(42)).toBe(true);
    const first = leader.ready();
    expect(first.readStates).toHaveLength(0);
    leader.advance(first);
    for (const m of first.messages) cluster.get(m.to).step(m);
    const readStates = [];
    for (let i = 0; i < 5; i++) {
      cluster.settle(1);
      if (leader.hasReady()) {
        const r = leader.ready();
        readStates.push(...r.readStates);
        leader.advance(r);
      }
    }
    const answered = readStates.length > 0 ? readStates : [];
    cluster.settle();
    expect(answered.concat()).toEqual([{ requestId: 42, index: leader.log.committed }]);
  });

  it('is refused on a follower', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    expect(cluster.get(2).readIndex(1)).toBe(false);
  });
});

function boot() {
  return { index: 1, term: 1, type: 1 as const, data: bytes(JSON.stringify({ type: 'bootstrap', nodeId: 0, voters: [1, 2, 3] })) };
}
