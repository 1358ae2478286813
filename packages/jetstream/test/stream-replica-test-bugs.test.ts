// The server maps FLOTILLA_TEST_BUGS=pub-ack-before-commit to the env's `pubAckBeforeCommit` knob; here the
// knob is set directly (test/chaos-checker.test.ts drives the variable end to end).
import { afterAll, describe, expect, it } from 'vitest';
import { ReplicaCluster, waitFor } from './stream-replica-harness.js';

describe('testKnobs.pubAckBeforeCommit (FLOTILLA_TEST_BUGS=pub-ack-before-commit, a test-only deliberate bug)', () => {
  const clusters: Array<InstanceType<typeof ReplicaCluster>> = [];
  afterAll(async () => {
    for (const c of clusters) await c.close();
  });

  it('acks a publish the isolated leader can never commit', async () => {
    const c = await ReplicaCluster.start(
      { name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 },
      { testKnobs: { pubAckBeforeCommit: true } },
    );
    clusters.push(c);
    const leader = await c.waitForLeader();
    c.network.isolate(leader.leaderId(), [1, 2, 3]);
    const reply = c.publish('s.x', 'never committed');
    await waitFor(() => c.ack(reply) !== undefined, 2000, 'the premature ack');
    expect(c.ack(reply)).toEqual({ stream: 'S', seq: 1 });
    await waitFor(() => !leader.isLeader(), 3000, 'check-quorum step-down');
    const others = c.live().filter((r) => r !== leader);
    expect(others.every((r) => r.stream.store.state().last_seq === 0)).toBe(true);
  });
});
