// RaftNode's refusals are typed: callers match RaftError's code, never its text.
import { InMemoryNetwork, MemoryLogStore, NotLeaderError, RaftError, RaftNode, isRaftError } from '@flotilla/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { GROUP, ListMachine, enc, stopAllNodes, trackNode, until } from './raft-node-fixtures.js';

afterEach(stopAllNodes);

async function soleNode(maxPendingProposals: number): Promise<RaftNode> {
  const node = await RaftNode.start({
    group: GROUP,
    id: 1,
    peers: [1],
    store: new MemoryLogStore(),
    transport: new InMemoryNetwork().transport(),
    stateMachine: new ListMachine(),
    tickMs: 5,
    raft: { electionTicks: 10 },
    maxPendingProposals,
  });
  trackNode(node);
  await until(() => node.isLeader(), 5000, 'the sole node to lead');
  return node;
}

async function refusal(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.fail('expected a refusal'),
    (err: unknown) => err,
  );
}

describe('RaftNode errors', () => {
  it('refuses a proposal past maxPendingProposals with TOO_MANY_PENDING_PROPOSALS', async () => {
    const node = await soleNode(2);
    const accepted = [node.propose(enc.encode('a')), node.propose(enc.encode('b'))];
    const err = await refusal(node.propose(enc.encode('c')));
    expect(err).toBeInstanceOf(RaftError);
    expect((err as RaftError).code).toBe('TOO_MANY_PENDING_PROPOSALS');
    expect(isRaftError(err, 'TOO_MANY_PENDING_PROPOSALS')).toBe(true);
    expect(isRaftError(err, 'STOPPED')).toBe(false);
    expect((await Promise.all(accepted)).map((r) => r.result)).toEqual([1, 2]);
  });

  it('refuses a proposal on a stopped node with STOPPED', async () => {
    const node = await soleNode(10);
    await node.stop();
    const err = await refusal(node.propose(enc.encode('late')));
    expect(isRaftError(err, 'STOPPED')).toBe(true);
    expect(err).not.toBeInstanceOf(NotLeaderError);
  });
});
