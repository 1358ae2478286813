// kill -9 of an R3 stream's leader during acknowledged publishing: no acknowledged message is lost or
// duplicated, publishing resumes through a new leader within the window bound, and the killed node comes
// back on the same data, catches up, and holds exactly what the others hold (read through it as leader).
import { describe, it, expect } from 'vitest';
import { AckPolicy, type JetStreamManager, type JsMsg } from 'nats';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream, failoverWindowBoundMs } from './helpers/js-cluster.js';
import { AckedPublisher, publishRetrying, replicaProblems } from './helpers/js-cluster-publisher.js';

/**
 * Longest time without an acknowledged publish after the kill. Issue 6 acceptance: 2 s for Flotilla (doubled
 * on an overloaded machine, see failoverWindowBoundMs). nats-server 2.9.10 elects after a randomised 4–9 s
 * election timeout, so its bound only checks the harness.
 */
const windowBound = (): { boundMs: number; load: number } => (AGAINST_NATS_SERVER ? { boundMs: 12_000, load: 0 } : failoverWindowBoundMs(2000));
const NAMES = ['n1', 'n2', 'n3'];
const dec = new TextDecoder();

let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'FAILOVER' }, (c) => (cluster = c));

describe('stream leader killed with kill -9 under acknowledged publishing', () => {
  it('loses no acknowledged message, resumes within the window, and the restarted node catches up', async () => {
    const admin = await cluster.connect('n1');
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: 'KILL', subjects: ['kill.>'], num_replicas: 3 });
    const leader = (await cluster.waitForReplicasCurrent(jsm, 'KILL', 3)).cluster!.leader!;
    // Publish and administer through nodes that stay up.
    const survivors = NAMES.filter((n) => n !== leader);
    const pubConn = await cluster.connect(survivors[0]!);
    const watchConn = await cluster.connect(survivors[1]!);
    const watchJsm = await watchConn.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    const publisher = new AckedPublisher(pubConn.jetstream(), { subject: 'kill.a', prefix: 'k', maxMessages: 20_000, attemptTimeoutMs: 250, paceMs: 20 }).start();
    try {
      await publisher.waitForMoreAcks(50, 15_000);
      const killedAtMs = Date.now();
      await cluster.kill(leader);
      await publisher.waitForMoreAcks(50, 30_000);
      const window = publisher.longestGapMs(killedAtMs);
      const newLeader = await cluster.waitForStreamLeader(watchJsm, 'KILL', { not: leader });
      console.log(
        `kill -9 ${leader}: longest window without an ack ${window.gapMs} ms (ended ${window.endedAtMs - killedAtMs} ms after the kill); ` +
          `new leader ${newLeader}; failures ${JSON.stringify(publisher.failures)}`,
      );
      expect(survivors).toContain(newLeader);
      const bound = windowBound();
      console.log(`window bound ${bound.boundMs} ms (1-min load ${bound.load})`);
      expect(window.gapMs).toBeLessThanOrEqual(bound.boundMs);

      // The killed node rejoins on the same ports and data while publishing goes on, and catches up.
      await cluster.restart(leader);
      const rejoinedAtMs = Date.now();
      await cluster.waitForReplicasCurrent(watchJsm, 'KILL', 3, 30_000);
      console.log(`${leader} current again ${Date.now() - rejoinedAtMs} ms after its restart`);
      await publisher.waitForMoreAcks(20, 15_000);
    } finally {
      await publisher.stop();
    }
    expect(publisher.giveUpError).toBeNull();

    // Each replica, read as leader, holds every acknowledged message at its sequence and nothing twice.
    const readStartMs = Date.now();
    const replicas = await cluster.replicaContents('KILL', NAMES);
    const messages = replicas.get(survivors[0]!)!.content.size;
    console.log(`${publisher.acks.length} acks; ${messages} messages per replica read through each leader in ${Date.now() - readStartMs} ms`);
    expect(messages).toBeGreaterThanOrEqual(publisher.acks.length);
    expect(replicaProblems(replicas, publisher)).toEqual([]);
  }, 90_000);

  it('a durable pull consumer keeps its acknowledgements when its leader is killed; the unacknowledged are redelivered', async () => {
    // The previous test restarted a node (or failed before it could), which may have been the meta leader.
    await cluster.ensureAllRunning();
    await cluster.waitForMetaLeader();
    const admin = await cluster.connect('n1');
    const jsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(jsm, { name: 'WORK', subjects: ['work.>'], num_replicas: 3 });
    await cluster.waitForReplicasCurrent(jsm, 'WORK', 3);
    const js = admin.jetstream();
    for (let i = 1; i <= 30; i++) await publishRetrying(js, 'work.item', `w-${i}`, `w-${i}`);
    await jsm.consumers.add('WORK', { durable_name: 'WORKER', ack_policy: AckPolicy.Explicit, ack_wait: 2_000_000_000 });
    // Wait until the consumer's replicas are current, so the acks below are replicated before the kill.
    const consumerLeader = await waitForConsumerLeader(jsm, 'WORKER');
    const survivor = NAMES.find((n) => n !== consumerLeader)!;
    const conn = await cluster.connect(survivor);
    const consumer = await conn.jetstream({ timeout: 10_000 }).consumers.get('WORK', 'WORKER');
    const first = await fetchAll(consumer, 30);
    expect(first.map((m) => dec.decode(m.data))).toEqual(Array.from({ length: 30 }, (_, i) => `w-${i + 1}`));
    for (const m of first.slice(0, 20)) await m.ackAck();

    const survivorJsm = await conn.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await cluster.kill(consumerLeader);
    const newLeader = await waitForConsumerLeader(survivorJsm, 'WORKER', consumerLeader);
    const info = await survivorJsm.consumers.info('WORK', 'WORKER');
    console.log(`consumer leader ${consumerLeader} killed; new consumer leader ${newLeader}`);
    expect(info.ack_floor.stream_seq).toBe(20);
    expect(info.delivered.stream_seq).toBe(30);

    // After ack_wait the new leader redelivers exactly the ten unacknowledged, with a higher delivery count.
    const again = await fetchAll(await conn.jetstream({ timeout: 10_000 }).consumers.get('WORK', 'WORKER'), 10);
    expect(again.map((m) => dec.decode(m.data))).toEqual(Array.from({ length: 10 }, (_, i) => `w-${i + 21}`));
    expect(again.every((m) => m.info.redeliveryCount >= 2)).toBe(true);
    for (const m of again) await m.ackAck();
    const done = await survivorJsm.consumers.info('WORK', 'WORKER');
    expect(done.ack_floor.stream_seq).toBe(30);
    expect(done.num_ack_pending).toBe(0);
    expect(done.num_pending).toBe(0);
    await cluster.restart(consumerLeader);
  }, 60_000);
});

/** The consumer's leader once it and its replicas are current (`not`: a leader other than that one). */
async function waitForConsumerLeader(jsm: JetStreamManager, durable: string, not?: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  let last = '';
  for (;;) {
    const info = await jsm.consumers.info('WORK', durable).catch((e: Error) => e);
    if (!(info instanceof Error)) {
      const c = info.cluster;
      if (c?.leader && c.leader !== not && (not !== undefined || (c.replicas ?? []).every((r) => r.current))) return c.leader;
      last = JSON.stringify(c);
    } else last = info.message;
    if (Date.now() > deadline) throw new Error(`consumer ${durable} has no leader${not ? ` other than ${not}` : ''}: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Pulls until `count` messages arrived (bounded number of fetches). */
async function fetchAll(consumer: { fetch(o: { max_messages: number; expires: number }): Promise<AsyncIterable<JsMsg>> }, count: number): Promise<JsMsg[]> {
  const got: JsMsg[] = [];
  for (let round = 0; round < 10 && got.length < count; round++) {
    const batch = await consumer.fetch({ max_messages: count - got.length, expires: 3000 });
    for await (const m of batch) got.push(m);
  }
  return got;
}
