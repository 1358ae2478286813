// A rolling restart with SIGTERM (what `kubectl rollout restart` and `docker compose restart` do): each node
// in turn hands off its leaderships, drains and exits 0, comes back on its data and catches up, while a
// client keeps publishing with retries. No acknowledged message is lost or duplicated, and the client only
// sees retryable failures (timeouts, 503 no responders, a reconnect).
import { describe, it, expect, afterAll } from 'vitest';
import { JsCluster, addStream, readStream } from './helpers/js-cluster.js';
import { AckedPublisher, ackProblems } from './helpers/js-cluster-publisher.js';
import { waitForHttp200 } from './ops-ports.js';

let cluster: JsCluster | null = null;

afterAll(async () => {
  await cluster?.stop();
});

describe('rolling restart with SIGTERM', () => {
  it('loses no acknowledged message; clients see only retryable errors; every node exits 0', async () => {
    cluster = await JsCluster.start({ size: 3, clusterName: 'ROLL' });
    const servers = cluster.nodes.map((n) => n.url);
    const nc = await cluster.connect('n1', { servers, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    const jsm = await nc.jetstreamManager();
    await addStream(jsm, { name: 'ROLL', subjects: ['roll.>'], num_replicas: 3 });
    await cluster.waitForStreamLeader(jsm, 'ROLL');
    const publisher = new AckedPublisher(nc.jetstream(), { subject: 'roll.x', prefix: 'r', maxMessages: 100_000, attemptTimeoutMs: 1000, maxRetryMs: 30_000 }).start();
    await publisher.waitForMoreAcks(20, 30_000);

    const exitCodes: Array<number | null> = [];
    const gaps: number[] = [];
    for (const n of cluster.nodes) {
      const proc = n.proc!;
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
      const fromMs = Date.now();
      await cluster.terminate(n.name, 20_000);
      exitCodes.push(await exited);
      await publisher.waitForMoreAcks(20, 60_000); // the survivors keep acknowledging
      gaps.push(publisher.longestGapMs(fromMs).gapMs);
      await cluster.restart(n.name);
      await waitForHttp200(`http://127.0.0.1:${n.httpPort}/healthz`, 30_000);
      await cluster.waitForReplicasCurrent(jsm, 'ROLL', 3, 30_000);
    }
    await publisher.waitForMoreAcks(20, 60_000);
    await publisher.stop();

    expect(exitCodes).toEqual([0, 0, 0]);
    expect(publisher.giveUpError).toBeNull();
    // Only retryable failures: timeouts and no-responders are counted apart; anything else is listed here.
    expect(publisher.failures.other.filter((e) => !/CONNECTION_CLOSED|DISCONNECT|RECONNECT|10008|temporarily unavailable/i.test(e))).toEqual([]);
    const info = await cluster.waitForReplicasCurrent(jsm, 'ROLL', 3, 30_000);
    const content = await readStream(jsm, 'ROLL', info);
    expect(ackProblems(publisher.acks, content, publisher.attempted)).toEqual([]);
    expect(info.state.messages).toBe(new Set(publisher.acks.map((a) => a.payload)).size);
    // Hand-off keeps the publish gap per restart short (measured figure in the README).
    console.log(`rolling restart: ${publisher.acks.length} acked, longest ack gap per restart ${gaps.join(' / ')} ms, failures ${JSON.stringify({ ...publisher.failures, other: publisher.failures.other.length })}`);
    for (const g of gaps) expect(g).toBeLessThan(10_000);
  }, 300_000);
});
