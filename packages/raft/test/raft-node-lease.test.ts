// The leader lease runs on wall time from the sending of the heartbeat round a quorum acknowledged, not on the
// node's ticks: a leader whose ticks stopped (its event loop starved) stops holding it on time, while it still
// believes it leads — the case where another node may have been elected meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, MemoryLogStore, type Message, type MessageHandler, MessageType, RaftNode, type Transport, emptyMessage } from '@flotilla/raft';
import { ListMachine, until } from './raft-node-fixtures.js';

const GROUP = 'lease';
const TICK_MS = 50;
const ELECTION_TICKS = 6;

/** What the two followers answer to the leader's messages (votes granted, appends and heartbeats accepted). */
function answersTo(sent: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of sent) {
    if (m.type === MessageType.Vote) out.push(emptyMessage(GROUP, MessageType.VoteResp, m.to, m.from, m.term));
    else if (m.type === MessageType.Append) {
      const reply = emptyMessage(GROUP, MessageType.AppendResp, m.to, m.from, m.term);
      reply.index = m.index + m.entries.length;
      out.push(reply);
    } else if (m.type === MessageType.Heartbeat) {
      const reply = emptyMessage(GROUP, MessageType.HeartbeatResp, m.to, m.from, m.term);
      reply.context = m.context;
      out.push(reply);
    }
  }
  return out;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function leaderWithManualClock(): Promise<{ node: RaftNode; sent: Message[]; deliver: (ms: Message[]) => void; tick: () => void }> {
  let tick: () => void = () => {};
  const clock: Clock = {
    every(_ms, fn) {
      tick = fn;
      return () => {};
    },
  };
  let handler: MessageHandler = () => {};
  const sent: Message[] = [];
  const transport: Transport = {
    send: (messages) => void sent.push(...messages),
    listen: (_group, _id, h) => {
      handler = h;
      return () => {};
    },
  };
  const node = await RaftNode.start({
    group: GROUP,
    id: 1,
    peers: [1, 2, 3],
    store: new MemoryLogStore(),
    transport,
    stateMachine: new ListMachine(),
    clock,
    tickMs: TICK_MS,
    raft: { electionTicks: ELECTION_TICKS, heartbeatTicks: 2, preVote: true, checkQuorum: true },
  });
  cleanups.push(() => node.stop());
  node.campaign();
  await until(() => sent.some((m) => m.type === MessageType.PreVote || m.type === MessageType.Vote));
  const grantPreVotes = (): void => {
    for (const m of sent.splice(0)) {
      if (m.type === MessageType.PreVote) handler(emptyMessage(GROUP, MessageType.PreVoteResp, m.to, m.from, m.term));
      else for (const r of answersTo([m])) handler(r);
    }
  };
  grantPreVotes();
  await until(() => sent.some((m) => m.type === MessageType.Vote));
  grantPreVotes();
  await until(() => node.isLeader());
  return { node, sent, deliver: (ms) => ms.forEach((m) => handler(m)), tick: () => tick() };
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
