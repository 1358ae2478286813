// STREAM.LEADER.STEPDOWN on an R3 stream after two of the three nodes were killed (-9) and restarted: every
// request is answered, and every answered success moves the leadership to another node within the bound.
import { describe, it, expect } from 'vitest';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream, apiRequest } from './helpers/js-cluster.js';

const STREAM = 'SD';
/** Flotilla streams elect in 0.6–1.2 s; nats-server after 4–9 s. */
const MOVE_BOUND_MS = AGAINST_NATS_SERVER ? 15_000 : 4000;
const STEP_DOWNS = 6;

let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'STEPDOWN' }, (c) => (cluster = c));

describe('stream leader step-down after restarts', () => {
  it('answers every step-down and moves the leadership each time', async () => {
    const admin = await cluster.connect('n1');
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: STREAM, subjects: ['sd.>'], num_replicas: 3 });
    const js = admin.jetstream();
    for (let i = 0; i < 20; i++) await js.publish('sd.a', `m${i}`);
    await cluster.waitForReplicasCurrent(jsm, STREAM, 3);

    await cluster.kill('n2');
    await cluster.kill('n3');
    await Promise.all([cluster.restart('n2'), cluster.restart('n3')]);
    await cluster.waitForReplicasCurrent(jsm, STREAM, 3, 30_000);

    const moves: string[] = [];
    for (let i = 0; i < STEP_DOWNS; i++) {
      const before = (await cluster.waitForReplicasCurrent(jsm, STREAM, 3, 20_000)).cluster!.leader!;
      const startedMs = Date.now();
      const answer = await apiRequest(admin, `$JS.API.STREAM.LEADER.STEPDOWN.${STREAM}`, '', 5000);
      expect(answer['success']).toBe(true);
      // Asked at once, in the middle of the hand-over: still answered (by the old leader, or by a member
      // that sees no leader), never left to the client's timeout.
      const info = await apiRequest(admin, `$JS.API.STREAM.INFO.${STREAM}`, '', 2000);
      expect((info['state'] as { messages: number }).messages).toBe(20);
      const after = await cluster.waitForStreamLeader(jsm, STREAM, { not: before, timeoutMs: MOVE_BOUND_MS });
      moves.push(`${before}->${after} ${Date.now() - startedMs} ms`);
    }
    console.log(`step-downs: ${moves.join(', ')}`);
    expect(moves).toHaveLength(STEP_DOWNS);
    // Publishing works through the last leader.
    const ack = await js.publish('sd.a', 'last');
    expect(ack.seq).toBe(21);
  }, 120_000);
});
