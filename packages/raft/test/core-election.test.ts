import { describe, expect, it } from 'vitest';
import { Cluster, drain, entry, msg, newCore, types } from './cluster-harness.js';

describe('vote refusal for a stale log', () => {
  // Voter's log: [1:t1 bootstrap, 2:t2, 3:t2] at term 2.
  const cases = [
    { name: 'lower last term', lastTerm: 1, lastIndex: 9, granted: false },
    { name: 'same term, shorter log', lastTerm: 2, lastIndex: 2, granted: false },
    { name: 'same term, same length', lastTerm: 2, lastIndex: 3, granted: true },
    { name: 'same term, longer log', lastTerm: 2, lastIndex: 5, granted: true },
    { name: 'higher last term, shorter log', lastTerm: 3, lastIndex: 1, granted: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const core = newCore(1, [1, 2, 3], { hardState: { term: 2, vote: 0, commit: 1 }, entries: [bootstrapEntry(), entry(2, 2), entry(3, 2)] });
      core.step(msg(types.Vote, 2, 1, 3, { logTerm: c.lastTerm, index: c.lastIndex }));
      const { messages } = drain(core);
      const resp = messages.find((m) => m.type === types.VoteResp)!;
      expect(resp.reject).toBe(!c.granted);
      expect(core.term).toBe(3);
      expect(core.vote).toBe(c.granted ? 2 : 0);
    });
  }

  it('grants at most one vote per term, repeating it for the same candidate', () => {
    const core = newCore(1, [1, 2, 3]);
    drain(core);
    core.step(msg(types.Vote, 2, 1, 5, { logTerm: 1, index: 1 }));
    core.step(msg(types.Vote, 3, 1, 5, { logTerm: 1, index: 1 }));
    core.step(msg(types.Vote, 2, 1, 5, { logTerm: 1, index: 1 }));
    const resps = drain(core).messages.filter((m) => m.type === types.VoteResp);
    expect(resps.map((m) => [m.to, m.reject])).toEqual([
      [3, true],
      [2, false],
      [2, false],
    ]);
  });

  it('sends a granted vote only after the vote is persisted', () => {
    const core = newCore(1, [1, 2, 3]);
    drain(core);
    core.step(msg(types.Vote, 2, 1, 5, { logTerm: 1, index: 1 }));
    const ready = core.ready();
    expect(ready.messages.filter((m) => m.type === types.VoteResp)).toHaveLength(0);
    expect(ready.messagesAfterPersist.map((m) => m.type)).toEqual([types.VoteResp]);
    expect(ready.hardState).toMatchObject({ term: 5, vote: 2 });
    expect(ready.mustSync).toBe(true);
  });
});

describe('term bump on a higher term', () => {
  const cases = [
    { type: types.Append, term: 7, leader: 2, bumps: true },
    { type: types.Heartbeat, term: 7, leader: 2, bumps: true },
    { type: types.AppendResp, term: 7, leader: 0, bumps: true },
    { type: types.Vote, term: 7, leader: 0, bumps: true },
    { type: types.PreVote, term: 7, leader: 0, bumps: false },
  ];
  for (const c of cases) {
    it(`${c.type} at a higher term ${c.bumps ? 'moves to it' : 'leaves the term alone'}`, () => {
      const core = newCore(1, [1, 2, 3], { hardState: { term: 3, vote: 1, commit: 1 }, entries: [bootstrapEntry()] });
      core.step(msg(c.type, 2, 1, c.term, { logTerm: 1, index: 1 }));
      expect(core.term).toBe(c.bumps ? 7 : 3);
      expect(core.role).toBe('follower');
      expect(core.leader).toBe(c.leader);
      if (c.bumps && c.type !== types.Vote) expect(core.vote).toBe(0);
    });
  }

  it('a leader steps down on a higher-term response', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    expect(cluster.get(1).role).toBe('leader');
    cluster.get(1).step(msg(types.AppendResp, 2, 1, 99));
    expect(cluster.get(1).role).toBe('follower');
    expect(cluster.get(1).term).toBe(99);
  });

  it('answers a stale-term append with its own term so the old leader steps down', () => {
    const core = newCore(1, [1, 2, 3], { hardState: { term: 5, vote: 0, commit: 1 }, entries: [bootstrapEntry()] });
    core.step(msg(types.Append, 2, 1, 4, { index: 1, logTerm: 1 }));
    const resp = drain(core).messages[0]!;
    expect(resp).toMatchObject({ type: types.AppendResp, to: 2, term: 5 });
  });
});

describe('pre-vote', () => {
  it('campaigns without changing term until a quorum would vote', () => {
    const core = newCore(1, [1, 2, 3]);
    drain(core);
    core.campaignNow();
    expect(core.role).toBe('preCandidate');
    expect(core.term).toBe(1);
    const sent = drain(core).messages;
    expect(sent.map((m) => [m.type, m.term])).toEqual([
      [types.PreVote, 2],
      [types.PreVote, 2],
    ]);
    core.step(msg(types.PreVoteResp, 2, 1, 2));
    expect(core.role).toBe('candidate');
    expect(core.term).toBe(2);
  });

  it('a rejoining partitioned node does not disrupt the leader', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    cluster.isolate(3);
    cluster.tick(60);
    expect(cluster.get(3).term).toBe(cluster.get(1).term);
    expect(cluster.get(3).role).toBe('preCandidate');
    cluster.heal();
    cluster.tick(3);
    expect(cluster.leaders()).toEqual([1]);
    expect(cluster.get(1).term).toBe(cluster.get(3).term);
  });

  it('without pre-vote the rejoining node forces a new term', () => {
    const cluster = new Cluster([1, 2, 3], { preVote: false, checkQuorum: false });
    cluster.elect(1);
    const term = cluster.get(1).term;
    cluster.isolate(3);
    cluster.tick(60);
    expect(cluster.get(3).term).toBeGreaterThan(term + 1);
    cluster.heal();
    cluster.tick(30);
    expect(cluster.get(1).term).toBeGreaterThan(term);
  });
});

describe('check-quorum', () => {
  it('a leader that hears from no quorum for an election timeout steps down', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    cluster.isolate(1);
    cluster.tick(9);
    expect(cluster.get(1).role).toBe('leader');
    cluster.tick(12);
    expect(cluster.get(1).role).toBe('follower');
  });

  it('a leader that hears from a quorum stays leader', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    cluster.cut.add('1-3').add('3-1');
    cluster.tick(50);
    expect(cluster.get(1).role).toBe('leader');
  });

  it('voters in a leader lease ignore vote requests', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const follower = cluster.get(2);
    follower.step(msg(types.Vote, 3, 2, 50, { logTerm: 99, index: 99 }));
    expect(follower.term).toBe(cluster.get(1).term);
    expect(drain(follower).messages).toHaveLength(0);
  });
});

describe('leader transfer', () => {
  it('sends TimeoutNow to a caught-up target, which wins despite leases', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const term = cluster.get(1).term;
    expect(cluster.get(1).transferLeadership(3)).toBe(true);
    const log = cluster.settle();
    expect(log.some((m) => m.type === types.TimeoutNow && m.to === 3)).toBe(true);
    expect(cluster.leaders()).toEqual([3]);
    expect(cluster.get(3).term).toBe(term + 1);
  });

  it('first brings a lagging target up to date, and refuses proposals meanwhile', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    cluster.isolate(3);
    cluster.get(1).propose(new TextEncoder().encode('x'));
    cluster.settle();
    cluster.heal();
    expect(cluster.get(1).transferLeadership(3)).toBe(true);
    expect(cluster.get(1).propose(new Uint8Array(1))).toMatchObject({ ok: false });
    cluster.settle();
    expect(cluster.leaders()).toEqual([3]);
  });

  it('sends TimeoutNow again on the caught-up target\'s next heartbeat response when the first was lost', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const term = cluster.get(1).term;
    cluster.cut.add('1-3');
    expect(cluster.get(1).transferLeadership(3)).toBe(true);
    const lost = cluster.settle();
    expect(lost.some((m) => m.type === types.TimeoutNow)).toBe(false);
    cluster.heal();
    cluster.tick(1); // one heartbeat round, far inside the transfer's election timeout
    expect(cluster.leaders()).toEqual([3]);
    expect(cluster.get(3).term).toBe(term + 1);
  });

  it('a target that just became a pre-candidate still takes over on TimeoutNow', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    // 3 missed heartbeats and pre-campaigns (pre-vote keeps its term); its pre-votes are lost.
    cluster.isolate(3);
    cluster.get(3).campaignNow();
    cluster.settle();
    expect(cluster.get(3).role).toBe('preCandidate');
    cluster.heal();
    expect(cluster.get(1).transferLeadership(3)).toBe(true);
    cluster.settle(); // no tick: the TimeoutNow itself must do it
    expect(cluster.leaders()).toEqual([3]);
  });

  it('refuses a transfer to a non-voter or itself', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    expect(cluster.get(1).transferLeadership(1)).toBe(false);
    expect(cluster.get(1).transferLeadership(9)).toBe(false);
  });
});

describe('election', () => {
  it('a single node elects itself only after its vote is durable', () => {
    const core = newCore(1, [1]);
    drain(core);
    core.campaignNow();
    expect(core.role).toBe('candidate');
    const ready = core.ready();
    expect(ready.hardState).toMatchObject({ term: 2, vote: 1 });
    expect(core.role).toBe('candidate');
    core.advance(ready);
    expect(core.role).toBe('leader');
  });

  it('randomised timeouts elect exactly one leader', () => {
    const cluster = new Cluster([1, 2, 3, 4, 5]);
    cluster.tick(40);
    expect(cluster.leaders()).toHaveLength(1);
  });
});

function bootstrapEntry() {
  return { index: 1, term: 1, type: 1 as const, data: new TextEncoder().encode(JSON.stringify({ type: 'bootstrap', nodeId: 0, voters: [1, 2, 3] })) };
}
