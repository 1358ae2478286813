// An R3 stream's leader cut off from both other nodes through the fault hook (Flotilla only: nats-server
// has no fault hook). The minority side acknowledges nothing, the majority elects a new leader and keeps
// acknowledging, and after the heal every replica holds the same sequence → payload, with nothing the
// minority was sent.
import { describe, it, expect } from 'vitest';
import { JsCluster, useJsCluster, addStream, failoverWindowBoundMs } from './helpers/js-cluster.js';
import { AckedPublisher, replicaProblems } from './helpers/js-cluster-publisher.js';

const enc = new TextEncoder();
const NAMES = ['n1', 'n2', 'n3'];
/**
 * Longest time the majority goes without an ack: a partition is detected like a killed leader (election
 * timeout), so issue 6's 2 s applies (doubled on an overloaded machine, see failoverWindowBoundMs).
 * Observed 1.3–1.6 s; 2.4–2.9 s at load 16–18 on 2 cores.
 */
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'PARTITION', faultHook: true }, (c) => (cluster = c));

describe('partitioned stream leader', () => {
  it('minority acknowledges nothing, majority elects and continues, healed replicas converge', async () => {
    const setup = await cluster.connect('n1');
    const setupJsm = await setup.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(setupJsm, { name: 'SPLIT', subjects: ['split.>'], num_replicas: 3 });
    const leader = (await cluster.waitForReplicasCurrent(setupJsm, 'SPLIT', 3)).cluster!.leader!;
    const majority = NAMES.filter((n) => n !== leader);
    const minorityConn = await cluster.connect(leader);
    const majorityConn = await cluster.connect(majority[0]!);
    const majorityJsm = await majorityConn.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    const publisher = new AckedPublisher(majorityConn.jetstream(), { subject: 'split.major', prefix: 'maj', maxMessages: 20_000, attemptTimeoutMs: 250, paceMs: 20 }).start();
    const minorityAcks: string[] = [];
    const minorityErrors = new Map<string, number>();
    try {
      await publisher.waitForMoreAcks(50, 15_000);
      const cutAtMs = Date.now();
      await cluster.partition(minorityConn, leader, majority);

      // Publishing on the cut-off leader's side: every attempt must fail (timeout or 503), never ack.
      const minorityJs = minorityConn.jetstream();
      for (let i = 0; i < 8; i++) {
        try {
          const ack = await minorityJs.publish('split.minor', enc.encode(`min-${i}`), { msgID: `min-${i}`, timeout: 500 });
          minorityAcks.push(`min-${i} -> seq ${ack.seq}`);
        } catch (err) {
          const code = (err as { code?: string }).code ?? 'other';
          minorityErrors.set(code, (minorityErrors.get(code) ?? 0) + 1);
        }
      }
      await publisher.waitForMoreAcks(50, 20_000);
      const window = publisher.longestGapMs(cutAtMs);
      const newLeader = await cluster.waitForStreamLeader(majorityJsm, 'SPLIT', { not: leader });
      console.log(
        `partition of ${leader}: majority window without an ack ${window.gapMs} ms; new leader ${newLeader}; ` +
          `minority attempts ${JSON.stringify(Object.fromEntries(minorityErrors))}; majority failures ${JSON.stringify(publisher.failures)}`,
      );
      expect(minorityAcks).toEqual([]);
      expect(majority).toContain(newLeader);
      const bound = failoverWindowBoundMs(2000);
      console.log(`window bound ${bound.boundMs} ms (1-min load ${bound.load})`);
      expect(window.gapMs).toBeLessThanOrEqual(bound.boundMs);

      const healedAtMs = Date.now();
      await cluster.heal(minorityConn, leader);
      await cluster.waitForReplicasCurrent(majorityJsm, 'SPLIT', 3, 30_000);
      console.log(`${leader} current again ${Date.now() - healedAtMs} ms after the heal`);
      await publisher.waitForMoreAcks(20, 15_000);
    } finally {
      await publisher.stop();
    }
    expect(publisher.giveUpError).toBeNull();

    // Only majority payloads may be in the stream: the minority's entries were never committed.
    const replicas = await cluster.replicaContents('SPLIT', NAMES, { timeoutMs: 30_000 });
    expect(replicas.get(majority[0]!)!.content.size).toBeGreaterThanOrEqual(publisher.acks.length);
    expect(replicaProblems(replicas, publisher)).toEqual([]);
  }, 120_000);
});
