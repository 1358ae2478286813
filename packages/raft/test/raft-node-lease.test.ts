// The leader lease runs on wall time from the sending of the heartbeat round a quorum acknowledged, not on the
// node's ticks: a leader whose ticks stopped (its event loop starved) stops holding it on time, while it still
// believes it leads — the case where another node may have been elected meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import { MessageType } from '@flotilla/raft';
import { followerAnswers, manualNode, until } from './raft-node-fixtures.js';

const GROUP = 'lease';
const TICK_MS = 50;
const ELECTION_TICKS = 6;
const answersTo = (sent: Parameters<typeof followerAnswers>[1]) => followerAnswers(GROUP, sent);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Node 1 elected by the test's fake followers (pre-vote and vote granted), its clock ticking only on demand. */
async function leaderWithManualClock(): Promise<Awaited<ReturnType<typeof manualNode>>> {
  const m = await manualNode({ group: GROUP, tickMs: TICK_MS, raft: { electionTicks: ELECTION_TICKS, heartbeatTicks: 2, preVote: true, checkQuorum: true } });
  cleanups.push(() => m.node.stop());
  m.node.campaign();
  await until(() => m.sent.some((x) => x.type === MessageType.PreVote));
  m.deliver(answersTo(m.sent.splice(0)));
  await until(() => m.sent.some((x) => x.type === MessageType.Vote));
  m.deliver(answersTo(m.sent.splice(0)));
  await until(() => m.node.isLeader());
  return m;
}

describe('RaftNode: the leader lease', () => {
  it('holds once a quorum acknowledged a heartbeat round, and lapses on wall time when no tick comes', async () => {
    const { node, sent, deliver } = await leaderWithManualClock();
    // Elected, before any follower acknowledged a heartbeat of this term: no lease yet.
    expect(node.holdsLease()).toBe(false);
    await until(() => sent.some((m) => m.type === MessageType.Heartbeat));
    const heartbeatAt = performance.now();
    deliver(answersTo(sent.splice(0)));
    expect(node.holdsLease()).toBe(true);
    // No ticks at all from here on (the loop is "starved"): the lease ends (electionTicks − 1) ticks of wall time
    // after the acknowledged round was sent, while the node still believes it leads.
    const leaseMs = (ELECTION_TICKS - 1) * TICK_MS;
    expect(node.holdsLease(heartbeatAt + leaseMs - 20)).toBe(true);
    expect(node.holdsLease(heartbeatAt + leaseMs + 1)).toBe(false);
    await until(() => !node.holdsLease(), 2_000);
    expect(node.isLeader()).toBe(true);
  });

  it('is not held while leadership is handed over, and a newer acknowledged round renews it', async () => {
    const { node, sent, deliver, tick } = await leaderWithManualClock();
    await until(() => sent.some((m) => m.type === MessageType.Heartbeat));
    deliver(answersTo(sent.splice(0)));
    expect(node.holdsLease()).toBe(true);
    // A tick sends no round yet (heartbeats every two ticks); the second does, and its acknowledgement renews.
    tick();
    tick();
    await until(() => sent.some((m) => m.type === MessageType.Heartbeat));
    const rounds = new Set(sent.filter((m) => m.type === MessageType.Heartbeat).map((m) => m.context));
    expect(rounds.size).toBe(1);
    deliver(answersTo(sent.splice(0)));
    expect(node.holdsLease()).toBe(true);
    // Handing over: the target is elected without waiting out any lease, so this leader stops answering at once.
    expect(node.transferLeadership(2)).toBe(true);
    expect(node.isLeader()).toBe(true);
    expect(node.holdsLease()).toBe(false);
    // The hand-over is given up after an election timeout of ticks. Acknowledgements of rounds sent before may
    // come from followers that voted for the target since: only a round sent after it holds the lease again.
    sent.splice(0);
    for (let i = 0; i < ELECTION_TICKS; i++) tick();
    await until(() => sent.some((m) => m.type === MessageType.Heartbeat));
    expect(node.isLeader()).toBe(true);
    expect(node.holdsLease()).toBe(false);
    sent.splice(0);
    tick();
    tick();
    await until(() => sent.some((m) => m.type === MessageType.Heartbeat));
    deliver(answersTo(sent.splice(0)));
    expect(node.holdsLease()).toBe(true);
  });
});
