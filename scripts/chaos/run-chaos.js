// One chaos run: start (or attach to) a cluster, create the streams and durable consumers, publish and
// consume under the seeded fault schedule, repair, drain, read every replica and judge. Returns the summary
// object (also the JSON summary); `summary.violations.total > 0` means the cluster broke a promise.
import { connect } from 'nats';
import { writeFileSync } from 'node:fs';
import { startLocalCluster } from './local-cluster.js';
import { externalCluster } from './external-cluster.js';
import { JsAdmin } from './js-admin.js';
import { Publisher } from './publisher.js';
import { PullConsumer } from './pull-consumer.js';
import { LeaderWatch } from './leader-watch.js';
import { FaultInjector } from './fault-injector.js';
import { FAULT_KINDS, buildSchedule } from './fault-schedule.js';
import { readReplicas, readConsumerStates, streamPeers, pauseNudge } from './replica-reader.js';
import { judge } from './verdict.js';
import { readStreamIds, topologyConfigs, waitTopologyCaughtUp } from './topology-check.js';
import { failoverWindows } from './failover-windows.js';
import { startProgress } from './progress-line.js';
import { humanSummary } from './summary.js';
import { randomSeed } from './seeded-random.js';
import { sleep } from './sleep.js';
import { percentile } from './percentiles.js';

const CONSUMER_NAME = 'chaos';
const ACK_WAIT_MS = 4_000;
const SETUP_TIMEOUT_MS = 60_000;
const RECOVERY_TIMEOUT_MS = 60_000;
const PUBLISHER_FINISH_MS = 30_000;
const DRAIN_TIMEOUT_MS = 30_000;
const DRAIN_QUIET_MS = 3_000;

function connectionOptions(cluster, firstIndex, name) {
  // Put one node first so clients spread over the cluster; the rest are failover targets.
  const urls = cluster.nodes.map((n) => n.url);
  const servers = [...urls.slice(firstIndex), ...urls.slice(0, firstIndex)];
  // A SIGSTOPped server keeps its sockets open: only missed PINGs tell the client to move. 1 s × 2 lets a
  // client on a paused node move within ~2–3 s; with 2 s × 3 a publisher sat out a whole 6 s pause, and once
  // earlier kills had moved every publisher onto one node, a pause of that node showed as a 6 s window.
  return { servers, name, noRandomize: true, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true, timeout: 5_000, pingInterval: 1_000, maxPingOut: 2 };
}

function supportedKinds(cluster, kinds) {
  return kinds.filter((k) => {
    const need = FAULT_KINDS[k].needs;
    return need === 'partition' ? cluster.supportsPartition : cluster.supports(need);
  });
}

const activeClusters = new Set();

/** Stops every cluster a run started (for SIGINT/SIGTERM: no server process may outlive the tool). */
export async function abortRuns() {
  await Promise.allSettled([...activeClusters].map((c) => c.stop(true)));
  activeClusters.clear();
}

export async function runChaos(o) {
  const seed = o.seed ?? randomSeed();
  const progress = startProgress({ quiet: true, render: () => '' });
  const runStartMs = Date.now();
  // every log line carries the seconds since the tool started, to see where a run spends its time
  const log = (text) => (state.progress ?? progress).log(`[${((Date.now() - runStartMs) / 1000).toFixed(1)}s] ${text}`);
  const state = { progress: null };
  log(`flotilla-chaos seed ${seed}`);

  const cluster = o.urls
    ? externalCluster({ urls: o.urls, names: o.names, monitorUrls: o.monitorUrls, commands: o.commands, partition: o.partition })
    : await startLocalCluster({ server: o.server, nodeCount: o.nodes, natsServerBin: o.natsServerBin, env: o.serverEnv, keepData: o.keepData, snapshotBuild: o.snapshotBuild, log });
  activeClusters.add(cluster);
  const connections = [];
  const open = async (opts) => {
    const nc = await connect(opts);
    connections.push(nc);
    return nc;
  };
  let summary = null;
  try {
    const admin = new JsAdmin(await open(connectionOptions(cluster, 0, 'chaos-admin')));
    const nodeConnections = new Map();
    if (cluster.supportsPartition) {
      for (const n of cluster.nodes) {
        // pinned to its node: the fault subject is local to each node, so this connection must never
        // follow the cluster's connect_urls elsewhere while its node is down
        nodeConnections.set(n.name, await open({ servers: [n.url], name: `chaos-fault-${n.name}`, ignoreClusterUpdates: true, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true }));
      }
    }

    // Streams and consumers, retried while the cluster elects its meta leader.
    const streams = o.replicas.map((r) => ({ name: `${o.streamPrefix}_R${r}`, replicas: r, subjectPrefix: `${o.streamPrefix.toLowerCase()}.r${r}` }));
    for (const s of streams) {
      await admin.retrying(`create stream ${s.name}`, () =>
        admin.createStream({
          name: s.name,
          subjects: [`${s.subjectPrefix}.>`],
          num_replicas: s.replicas,
          storage: 'file',
          retention: 'limits',
          // de-duplication must cover every retry of the run
          duplicate_window: (o.durationMs + 5 * 60_000) * 1e6,
        }), SETUP_TIMEOUT_MS, 500);
      await admin.retrying(`create consumer on ${s.name}`, () =>
        admin.createConsumer(s.name, { durable_name: CONSUMER_NAME, ack_policy: 'explicit', ack_wait: ACK_WAIT_MS * 1e6, deliver_policy: 'all', max_ack_pending: 20_000 }), SETUP_TIMEOUT_MS, 500);
      if (o.topology) for (const cfg of topologyConfigs(s)) await admin.retrying(`create stream ${cfg.name}`, () => admin.createStream(cfg), SETUP_TIMEOUT_MS, 500);
    }
    const streamNames = streams.map((s) => s.name);

    const kinds = supportedKinds(cluster, o.faults);
    const schedule = buildSchedule({ seed, kinds, durationMs: o.durationMs, gapMs: o.faultGapMs, fixedHoldMs: o.holdMs });
    log(`schedule: ${schedule.length} faults from [${kinds.join(', ')}] over ${o.durationMs} ms`);

    const settler = new FaultInjector({ cluster, admin, nodeConnections, streams: streamNames, schedule: [], startMs: 0, endMs: 0, log });
    if (!(await settler.settle(SETUP_TIMEOUT_MS))) log('warning: streams not all current before the start');

    const records = new Map(streams.map((s) => [s.name, {
      acks: new Map(), ackTimesMs: [], violations: [], duplicateAcks: 0,
      received: new Map(), deliveries: 0, redeliveries: 0, duplicateDeliveries: 0, outOfOrderFirstDeliveries: 0, highestFirstDeliverySeq: 0,
    }]));
    const publishers = [];
    const consumers = [];
    let clientIndex = 0;
    for (const s of streams) {
      const record = records.get(s.name);
      for (let p = 0; p < o.publishers; p++) {
        const nc = await open(connectionOptions(cluster, clientIndex++ % cluster.nodes.length, `chaos-pub-${s.name}-${p}`));
        publishers.push(new Publisher({ nc, stream: s.name, subject: `${s.subjectPrefix}.p${p}`, index: p, payloadBytes: o.payloadBytes, ratePerSec: o.rate, pubTimeoutMs: o.pubTimeoutMs, record, startMs: 0 }));
      }
      const cnc = await open(connectionOptions(cluster, clientIndex++ % cluster.nodes.length, `chaos-sub-${s.name}`));
      consumers.push(new PullConsumer({ nc: cnc, stream: s.name, durable: CONSUMER_NAME, record }));
    }
    const watch = new LeaderWatch({ admin, cluster, streams: streamNames });
    // the schedule's clock starts with the workload
    const startMs = Date.now();
    const endMs = startMs + o.durationMs;
    for (const p of publishers) p.startMs = startMs;
    const leadersNow = () => Object.fromEntries(streamNames.map((n) => [n, watch.current.get(n) ?? null]));
    const injector = new FaultInjector({ cluster, admin, nodeConnections, streams: streamNames, schedule, startMs, endMs, log, leadersNow });

    const render = () => {
      const t = Math.round((Date.now() - startMs) / 1000);
      const acked = streams.map((s) => `${s.name}=${records.get(s.name).acks.size}`).join(' ');
      const recv = streams.map((s) => records.get(s.name).received.size).reduce((a, b) => a + b, 0);
      const leaders = ['meta', ...streamNames].map((g) => `${g}=${watch.current.get(g) ?? '-'}`).join(' ');
      const cur = injector.current ? ` [${injector.current.kind} ${injector.current.target}]` : '';
      return `t=${t}s/${Math.round(o.durationMs / 1000)}s acked ${acked} received ${recv} faults ${injector.done.length}/${schedule.length}${cur} leaders ${leaders}`;
    };
    state.progress = startProgress({ quiet: o.quiet, render });

    const running = [...publishers.map((p) => p.run()), ...consumers.map((c) => c.run()), watch.run()];
    await injector.run();
    const remainingMs = endMs - Date.now();
    if (remainingMs > 0) await sleep(remainingMs);

    // Repair everything, let the streams recover, let each publisher finish the id in flight.
    injector.stopping = true;
    await injector.repairAll();
    if (!(await settler.settle(RECOVERY_TIMEOUT_MS))) {
      log('warning: streams did not all recover (leader and current replicas) after the faults');
    }
    const publishEndMs = Date.now() - startMs;
    log('repaired; publishers finishing, consumers draining');
    for (const p of publishers) {
      p.stopping = true;
      p.abortAtMs = Date.now() + PUBLISHER_FINISH_MS;
    }
    await Promise.allSettled(running.slice(0, publishers.length));

    // Drain: every acknowledged id delivered and nothing pending on the consumers, bounded.
    // A lost message never arrives: once the consumer has nothing pending and nothing came for a while,
    // waiting longer cannot help.
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
    for (const s of streams) {
      const r = records.get(s.name);
      let lastDeliveries = -1;
      let quietSinceMs = Date.now();
      while (Date.now() < drainDeadline) {
        if (r.deliveries !== lastDeliveries) {
          lastDeliveries = r.deliveries;
          quietSinceMs = Date.now();
        }
        const allReceived = [...r.acks.keys()].every((id) => r.received.has(id));
        const info = await admin.consumerInfo(s.name, CONSUMER_NAME, 2_000).catch(() => null);
        const idle = info !== null && info.num_pending === 0 && info.num_ack_pending === 0;
        if (idle && (allReceived || Date.now() - quietSinceMs > DRAIN_QUIET_MS)) break;
        await sleep(250);
      }
    }
    for (const c of consumers) c.stopping = true;
    watch.stopping = true;
    await Promise.allSettled(running);
    for (const c of consumers) c.close();
    state.progress.stop();
    log('faults over; reading every replica');

    // Read every replica of every stream, and the consumer's state on each.
    const idOf = (data) => new TextDecoder().decode(data).split(' ', 1)[0];
    const judged = [];
    const nudge = pauseNudge(cluster);
    for (const s of streams) {
      let peers = [];
      let unavailable = null;
      try {
        peers = await streamPeers(admin, s.name);
      } catch (err) {
        // no leader and no member answer: nothing can be read; the verdict says so
        unavailable = err.message;
        log(`${s.name}: ${unavailable}`);
      }
      const reads = await readReplicas(admin, s.name, peers, idOf, nudge);
      const replicas = peers.map((name) => ({ name, read: reads.get(name) }));
      for (const { name, read } of replicas) log(`${s.name} on ${name}: ${read.ok ? `${read.messages.size} messages, last seq ${read.lastSeq}` : read.reason}`);
      const states = await readConsumerStates(admin, s.name, CONSUMER_NAME, peers, nudge);
      const consumerStates = peers.map((name) => ({ name, state: states.get(name) }));
      for (const { name, state } of consumerStates) {
        log(`consumer ${s.name}/${CONSUMER_NAME} on ${name}: ${state.ok ? `delivered ${state.delivered} ack floor ${state.ackFloor}` : state.reason}`);
      }
      const r = records.get(s.name);
      let topology;
      if (o.topology) {
        await waitTopologyCaughtUp(admin, s, RECOVERY_TIMEOUT_MS, log);
        const [origin, mirror, source] = await Promise.all([s.name, `${s.name}_MIR`, `${s.name}_SRC`].map((n) => readStreamIds(admin, n, idOf)));
        log(`${s.name}: mirror ${mirror.ok ? `${mirror.ids.size} messages` : mirror.reason}, source ${source.ok ? `${source.ids.size} messages` : source.reason}`);
        topology = { origin, mirror, source };
      }
      judged.push({ name: s.name, unavailable, acks: r.acks, publisherViolations: r.violations, replicas, received: r.received, consumerStates, topology });
    }
    const verdict = judge(judged);

    const ackTimes = new Map(streams.map((s) => [s.name, records.get(s.name).ackTimesMs]));
    // a fault that could not be injected (its command failed) measures nothing
    const injected = injector.done.filter((f) => !f.error);
    const windows = failoverWindows(injected, ackTimes, publishEndMs);
    const publishErrors = {};
    for (const p of publishers) for (const [code, n] of p.errors) publishErrors[code] = (publishErrors[code] ?? 0) + n;
    const byKind = {};
    for (const f of injected) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
    const argsForReplay = process.argv.slice(2).filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed');
    summary = {
      server: cluster.kind,
      nodes: cluster.nodes.length,
      seed,
      durationMs: o.durationMs,
      replay: `npm run chaos -- ${[...argsForReplay, '--seed', String(seed)].join(' ')}`,
      streams: Object.fromEntries(streams.map((s) => {
        const r = records.get(s.name);
        const ps = publishers.filter((p) => p.stream === s.name);
        return [s.name, {
          replicas: s.replicas,
          ...verdict.perStream[s.name],
          publishAttempts: ps.reduce((a, p) => a + p.attempts, 0),
          publishLatencyMs: (() => {
            const l = ps.flatMap((p) => p.latenciesMs);
            return { p50: percentile(l, 50), p99: percentile(l, 99), max: l.length ? l.reduce((a, b) => Math.max(a, b), 0) : null };
          })(),
          duplicateAcks: r.duplicateAcks,
          deliveries: r.deliveries,
          redeliveries: r.redeliveries,
          duplicateDeliveries: r.duplicateDeliveries,
          outOfOrderFirstDeliveries: r.outOfOrderFirstDeliveries,
        }];
      })),
      faults: {
        scheduled: schedule.length,
        injected: injected.length,
        skipped: injector.skipped.length,
        errors: injector.done.filter((f) => f.error).length,
        byKind,
        list: injector.done,
        skippedList: injector.skipped,
      },
      elections: watch.summary(),
      failoverWindows: windows,
      publishErrors,
      violations: verdict.violations,
      runDir: null,
    };
    return summary;
  } finally {
    state.progress?.stop();
    await Promise.all(connections.map((nc) => nc.close().catch(() => undefined)));
    const keep = o.keepData || summary === null || summary.violations.total > 0;
    if (summary && cluster.runDir && keep) summary.runDir = cluster.runDir;
    await cluster.stop(keep).catch((err) => log(`stopping the cluster: ${err.message}`));
    activeClusters.delete(cluster);
    if (summary) {
      if (o.json === '-') process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else if (o.json) writeFileSync(o.json, JSON.stringify(summary, null, 2));
    }
  }
}

export { humanSummary };
