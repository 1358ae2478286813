// Issue 6 item 10: an R3 stream's leader paused (SIGSTOP ~6 s, then SIGCONT) under acknowledged
// publishing, twice. On resuming it must notice the newer term, step down and reconcile its log: no
// acknowledged message lost or duplicated, and every replica holds the same sequence → payload afterwards
// (read through each replica as leader). nats-server 2.9.10 is reported to fail exactly this here.
import { describe, it, expect } from 'vitest';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { AckedPublisher, replicaProblems } from './helpers/js-cluster-publisher.js';
import { sleep } from './helpers/flotilla-process.js';

const NAMES = ['n1', 'n2', 'n3'];
const PAUSE_MS = 6_000;
const CYCLES = 2;

let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'PAUSE' }, (c) => (cluster = c));

describe('paused stream leader', () => {
  it('SIGSTOP for 6 s then SIGCONT under load: no acknowledged message lost, replicas identical', async () => {
    // The publisher and the admin connection sit on one node that is never paused.
    const home = 'n1';
    const admin = await cluster.connect(home);
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: 'PAUSED', subjects: ['paused.>'], num_replicas: 3 });
    await cluster.waitForReplicasCurrent(jsm, 'PAUSED', 3);
    const pubConn = await cluster.connect(home);
    const publisher = new AckedPublisher(pubConn.jetstream(), { subject: 'paused.a', prefix: 'p', maxMessages: 20_000, attemptTimeoutMs: 500, paceMs: 20 }).start();
    try {
      await publisher.waitForMoreAcks(20, 15_000);
      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        // Make sure the leader is not the home node, so pausing it never stalls the test's own connections.
        let leader = (await cluster.waitForReplicasCurrent(jsm, 'PAUSED', 3, 30_000)).cluster!.leader!;
        for (let i = 0; i < 10 && leader === home; i++) {
          await cluster.stepDown(admin, 'PAUSED');
          leader = await cluster.waitForStreamLeader(jsm, 'PAUSED', { not: home, timeoutMs: 15_000 }).catch(() => home);
        }
        expect(leader).not.toBe(home);
        const pausedAtMs = Date.now();
        cluster.pause(leader);
        await sleep(PAUSE_MS);
        cluster.resume(leader);
        await publisher.waitForMoreAcks(30, 20_000);
        const after = await cluster.waitForStreamLeader(jsm, 'PAUSED', { timeoutMs: 20_000 });
        console.log(
          `pause ${cycle}: ${leader} stopped ${PAUSE_MS} ms; longest window without an ack ${publisher.longestGapMs(pausedAtMs).gapMs} ms; ` +
            `leader now ${after}; acks so far ${publisher.acks.length}; failures ${JSON.stringify(publisher.failures)}`,
        );
      }
    } finally {
      await publisher.stop();
    }
    expect(publisher.giveUpError).toBeNull();

    const readStartMs = Date.now();
    const replicas = await cluster.replicaContents('PAUSED', NAMES, { timeoutMs: 30_000 });
    const messages = replicas.get(home)!.content.size;
    console.log(`${publisher.acks.length} acks; ${messages} messages per replica read through each leader in ${Date.now() - readStartMs} ms`);
    expect(messages).toBeGreaterThanOrEqual(publisher.acks.length);
    expect(replicaProblems(replicas, publisher)).toEqual([]);
  }, 120_000);
});
