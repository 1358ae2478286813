// FLOTILLA_TEST_BUGS=pub-ack-before-commit is read once when stream-replica.ts loads, so this file sets it
// before importing (vitest gives each test file its own module graph).
import { afterAll, describe, expect, it } from 'vitest';

process.env['FLOTILLA_TEST_BUGS'] = 'pub-ack-before-commit';
const { ReplicaCluster, waitFor } = await import('./stream-replica-harness.js');
delete process.env['FLOTILLA_TEST_BUGS'];

describe('FLOTILLA_TEST_BUGS=pub-ack-before-commit (test-only deliberate bug)', () => {
  const clusters: Array<InstanceType<typeof ReplicaCluster>> = [];
  afterAll(async () => {
    for (const c of clusters) await c.close();
  });

  it('acks a publish the isolated leader can never commit', async () => {
    const c = await ReplicaCluster.start({ name: 'S', subjects: ['s.>'], storage: 'memory', num_replicas: 3 });
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
