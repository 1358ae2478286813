// The workloads: what each measures, on which topology, and how (worker processes against the servers).
// Every run is bounded by a message count and a duration; each returns
// {value, unit, hist?, errors, firstError, clientCpuPct}.
import { startWorker, runWorkers } from './worker-process.js';
import { LatencyHistogram } from './latency-histogram.js';
import { cpuMsOf, rssMbOf } from './process-stats.js';

const WORKER_SLACK_MS = 60_000; // beyond a run's own duration bound, before a worker counts as hung
const CONNS_SETTLE_MS = 1_000; // after the connections opened, before RSS is read
const SUBJECT_FANOUT = 16; // publishes spread over this many subjects of a stream
const KV_BUCKET = 'bench';
const IDLE_CREATORS = 20; // concurrent STREAM.CREATE calls while filling the cluster with idle streams
const IDLE_SETTLE_MS = 15_000; // after the last create, before idle CPU is read: elections and catch-up done
const IDLE_WINDOW_MS = 20_000; // idle CPU is averaged over this long

/** Shapes a workload runs on; a round starts each shape once per target. */
export const SHAPES = {
  single: { nodes: 1, jetstream: true },
  cluster3: { nodes: 3, jetstream: true },
  // core only, users in accounts (issue 17): publisher `a` and subscriber `b` in one account, or in two of
  // three accounts (A exports `bench.>`, B and C import it; the subscriber is in B)
  accounts1: { nodes: 1, jetstream: false, accounts: 1 },
  accounts3: { nodes: 1, jetstream: false, accounts: 3 },
  // core only, with a `websocket { no_tls }` listener beside the TCP one (issue 23)
  websocket: { nodes: 1, jetstream: false, websocket: true },
  // core only: a hub (n1) with a leafnode listener and a leaf server (n2) attached to it (issue 23)
  leaf: { nodes: 2, jetstream: false, leaf: true },
};

/**
 * id → definition. `suites` lists the `npm run bench -- <suite>` names that include it; `jsR1` marks the
 * R1 JetStream workloads that the interval-sync Flotilla variant also runs; `flotillaOnly` those nats-server
 * 2.9 cannot run (it would store a counter increment as a plain message).
 */
export const WORKLOADS = [
  // first on a fresh server: the memory a server needs for idle clients, before any load grew its heap
  { id: 'core-conns-rss', suites: ['core'], shape: 'single', label: 'server RSS with N idle connections', unit: 'MB (lower is better)', run: coreConnsRss },
  { id: 'core-pubsub-16', suites: ['core'], shape: 'single', label: 'core pub→sub 16 B', unit: 'msgs/s', run: (c) => corePubSub(c, 16) },
  { id: 'core-pubsub-128', suites: ['core'], shape: 'single', label: 'core pub→sub 128 B', unit: 'msgs/s', run: (c) => corePubSub(c, 128) },
  { id: 'core-pubsub-acct1', suites: ['core'], shape: 'accounts1', label: 'core pub→sub 128 B, one account', unit: 'msgs/s', run: (c) => corePubSub(c, 128, 'a', 'b') },
  { id: 'core-pubsub-acct3', suites: ['core'], shape: 'accounts3', label: 'core pub→sub 128 B, 3 accounts, across an import', unit: 'msgs/s', run: (c) => corePubSub(c, 128, 'a', 'b') },
  { id: 'core-ws-pubsub-16', suites: ['core', 'ws'], shape: 'websocket', label: 'core pub→sub 16 B over WebSocket', unit: 'msgs/s', run: (c) => corePubSubWs(c, 16, 'ws', 'ws') },
  { id: 'core-ws-pubsub-128', suites: ['core', 'ws'], shape: 'websocket', label: 'core pub→sub 128 B over WebSocket', unit: 'msgs/s', run: (c) => corePubSubWs(c, 128, 'ws', 'ws') },
  { id: 'core-ws-to-tcp-128', suites: ['core', 'ws'], shape: 'websocket', label: 'core pub→sub 128 B, WebSocket publisher → TCP subscriber', unit: 'msgs/s', run: (c) => corePubSubWs(c, 128, 'ws', 'tcp') },
  { id: 'leaf-pubsub-hub-to-leaf', suites: ['leaf'], shape: 'leaf', label: 'pub→sub 128 B across a leaf link, hub → leaf', unit: 'msgs/s', run: (c) => leafPubSub(c, 128, 'n1', 'n2') },
  { id: 'leaf-pubsub-leaf-to-hub', suites: ['leaf'], shape: 'leaf', label: 'pub→sub 128 B across a leaf link, leaf → hub', unit: 'msgs/s', run: (c) => leafPubSub(c, 128, 'n2', 'n1') },
  { id: 'leaf-reqrep', suites: ['leaf'], shape: 'leaf', label: 'request/reply 128 B across a leaf link', unit: 'round trips/s', run: leafReqRep },
  { id: 'core-reqrep', suites: ['core'], shape: 'single', label: 'core request/reply 128 B', unit: 'round trips/s', run: coreReqRep },
  { id: 'js-pub-sync-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'JS publish R1, each ack awaited', unit: 'msgs/s', run: (c) => jsPublish(c, 1, 1) },
  { id: 'js-pub-async-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'JS publish R1, window W', unit: 'msgs/s', run: (c) => jsPublish(c, 1, c.opts.window) },
  { id: 'js-counter-r1', suites: ['js'], shape: 'single', jsR1: true, flotillaOnly: true, label: 'JS counter increments R1 (Nats-Incr), window W', unit: 'incr/s', run: (c) => jsCounterIncrements(c, 1, c.opts.window) },
  { id: 'js-pub-async-r1-republish', suites: ['all'], shape: 'single', jsR1: true, label: 'JS publish R1, window W, stream republishes each message', unit: 'msgs/s', run: (c) => jsPublish(c, 1, c.opts.window, true) },
  { id: 'js-pull-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'JS pull drain + ack R1', unit: 'msgs/s', run: (c) => jsPull(c, 1) },
  { id: 'js-push-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'JS push drain + ack R1', unit: 'msgs/s', run: (c) => jsPush(c, 1) },
  { id: 'kv-put-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'KV put R1, awaited', unit: 'ops/s', run: (c) => kvPut(c, 1) },
  { id: 'kv-get-r1', suites: ['js'], shape: 'single', jsR1: true, label: 'KV get R1 (direct), awaited', unit: 'ops/s', run: (c) => kvGet(c, 1) },
  // issue 20 (nats-server 2.12+ features, so Flotilla only: 2.9 answers them with errors)
  { id: 'js-pub-async-r1-persist-async', suites: ['js'], shape: 'single', label: 'JS publish R1 persist_mode async, window W', unit: 'msgs/s', run: (c) => jsPublishPersistAsync(c) },
  { id: 'js-atomic-batch100-r1', suites: ['js'], shape: 'single', label: 'JS atomic batches of 100 R1, 4 in flight', unit: 'msgs/s', run: (c) => jsAtomicBatch(c, 1, 100) },
  { id: 'js-fast-batch-r1', suites: ['js'], shape: 'single', label: 'JS fast batch R1, flow ack every 100', unit: 'msgs/s', run: (c) => jsFastBatch(c, 1, 100) },
  { id: 'js-pub-sync-r3', suites: ['cluster'], shape: 'cluster3', label: 'JS publish R3, each ack awaited', unit: 'msgs/s', run: (c) => jsPublish(c, 3, 1) },
  { id: 'js-pub-async-r3', suites: ['cluster'], shape: 'cluster3', label: 'JS publish R3, window W', unit: 'msgs/s', run: (c) => jsPublish(c, 3, c.opts.window) },
  // only with --only: creating the streams takes ~30–45 s a server
  { id: 'cluster-idle-streams', suites: [], shape: 'cluster3', label: 'CPU of 3 nodes with N idle R3 streams', unit: '% of a core (lower is better)', run: clusterIdleStreams },
  { id: 'js-pull-r3', suites: ['all'], shape: 'cluster3', label: 'JS pull drain + ack R3', unit: 'msgs/s', run: (c) => jsPull(c, 3) },
  // issue 19: a mirror created on a stream of --mirror-msgs messages, timed until it holds the last one
  { id: 'mirror-catchup', suites: ['all'], shape: 'single', label: 'mirror catch-up (R1 file) of N msgs', unit: 'msgs/s', run: mirrorCatchup },
];

/** The label with the window and payload size filled in. */
export function labelOf(w, opts) {
  const label = w.label.replace('window W', `window ${opts.window.toLocaleString('en-US')}`).replace('N idle R3', `${opts.streams.toLocaleString('en-US')} idle R3`).replace('N idle', `${opts.conns.toLocaleString('en-US')} idle`);
  return w.id.startsWith('js-pub') || w.id.startsWith('kv-put') ? `${label} (${opts.bytes} B)` : label;
}

function aggregate(results, unit, extra = {}) {
  const ops = results.reduce((s, r) => s + r.ops, 0);
  const ms = Math.max(...results.map((r) => r.ms));
  const cpuMs = results.reduce((s, r) => s + (r.cpuMs ?? 0), 0);
  const hist = results.some((r) => r.hist) ? results.reduce((h, r) => h.merge(LatencyHistogram.fromJSON(r.hist)), new LatencyHistogram()) : null;
  const errors = results.reduce((s, r) => s + (r.errors ?? 0), 0);
  const firstError = results.find((r) => r.firstError)?.firstError ?? null;
  return {
    value: ops > 0 && ms > 0 ? Math.round((ops / ms) * 1000) : NaN,
    unit,
    ops,
    ms: Math.round(ms),
    hist,
    errors,
    firstError,
    // summed over the client processes, per core-second of wall time: near 100 × clients means client-bound
    clientCpuPct: ms > 0 ? Math.round((cpuMs / ms) * 100) : 0,
    ...extra,
  };
}

const split = (total, parts, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0);

/** `pubUser` / `subUser`: connect as these users (password = name), for the accounts shapes. */
async function corePubSub(c, bytes, pubUser, subUser) {
  const { url } = c.topo.nodes[0];
  const as = (user) => (user === undefined ? url : url.replace('nats://', `nats://${user}:${user}@`));
  const subject = `bench.core.${bytes}`;
  const count = c.opts.coreMsgs;
  const sub = await startWorker('core-sub', { url: as(subUser), subject, count, maxMs: c.opts.maxRunMs }, { waitReady: true });
  try {
    const pubs = await runWorkers('core-pub', (i) => ({ url: as(pubUser), subject, count: split(count, c.opts.clients, i), bytes }), c.opts.clients, c.opts.maxRunMs + WORKER_SLACK_MS);
    const got = await sub.next(c.opts.maxRunMs + WORKER_SLACK_MS);
    const r = aggregate([got], 'msgs/s');
    return { ...r, clientCpuPct: Math.max(r.clientCpuPct, aggregate(pubs, 'msgs/s').clientCpuPct) };
  } finally {
    await sub.stop();
  }
}

/** corePubSub with each side on TCP or on the websocket listener (`ws://`: the raw client over `ws` frames). */
async function corePubSubWs(c, bytes, pubOver, subOver) {
  const node = c.topo.nodes[0];
  const urlOf = (over) => (over === 'ws' ? node.wsUrl : node.url);
  const subject = `bench.ws.${bytes}`;
  const count = c.opts.coreMsgs;
  const sub = await startWorker('core-sub', { url: urlOf(subOver), subject, count, maxMs: c.opts.maxRunMs }, { waitReady: true });
  try {
    const pubs = await runWorkers('core-pub', (i) => ({ url: urlOf(pubOver), subject, count: split(count, c.opts.clients, i), bytes }), c.opts.clients, c.opts.maxRunMs + WORKER_SLACK_MS);
    const got = await sub.next(c.opts.maxRunMs + WORKER_SLACK_MS);
    const r = aggregate([got], 'msgs/s');
    return { ...r, clientCpuPct: Math.max(r.clientCpuPct, aggregate(pubs, 'msgs/s').clientCpuPct) };
  } finally {
    await sub.stop();
  }
}

/** Time for a subscription's interest to cross the leaf link (LS+) before the publishers start. */
const LEAF_INTEREST_SETTLE_MS = 1_000;

async function leafPubSub(c, bytes, pubNode, subNode) {
  const subject = `bench.leaf.${bytes}`;
  const count = c.opts.coreMsgs;
  const sub = await startWorker('core-sub', { url: c.topo.urlOf(subNode), subject, count, maxMs: c.opts.maxRunMs }, { waitReady: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, LEAF_INTEREST_SETTLE_MS));
    const pubs = await runWorkers('core-pub', (i) => ({ url: c.topo.urlOf(pubNode), subject, count: split(count, c.opts.clients, i), bytes }), c.opts.clients, c.opts.maxRunMs + WORKER_SLACK_MS);
    const got = await sub.next(c.opts.maxRunMs + WORKER_SLACK_MS);
    const r = aggregate([got], 'msgs/s');
    return { ...r, clientCpuPct: Math.max(r.clientCpuPct, aggregate(pubs, 'msgs/s').clientCpuPct) };
  } finally {
    await sub.stop();
  }
}

/** The replier on the hub, the requester on the leaf. */
async function leafReqRep(c) {
  const replier = await startWorker('replier', { url: c.topo.urlOf('n1'), subject: 'bench.leaf.echo', maxMs: c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS + LEAF_INTEREST_SETTLE_MS }, { waitReady: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, LEAF_INTEREST_SETTLE_MS));
    const results = await runWorkers(
      'request-window',
      () => ({ url: c.topo.urlOf('n2'), subjects: ['bench.leaf.echo'], bytes: c.opts.bytes, window: 1, maxOps: c.opts.msgs, durationMs: c.opts.durationMs, warmupMs: c.opts.warmupMs }),
      1,
      c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
    );
    return aggregate(results, 'round trips/s');
  } finally {
    await replier.stop();
  }
}

/** The server's RSS with `conns` idle client connections open (idle RSS before them goes to the JSON). */
async function coreConnsRss(c) {
  const { url, pid } = c.topo.nodes[0];
  const idleRssMb = rssMbOf(pid);
  const worker = await startWorker('idle-conns', { url, count: c.opts.conns, maxMs: c.opts.maxRunMs }, { waitReady: true, readyTimeoutMs: c.opts.maxRunMs });
  try {
    await new Promise((resolve) => setTimeout(resolve, CONNS_SETTLE_MS));
    const value = rssMbOf(pid);
    return { value, unit: 'MB', ops: c.opts.conns, ms: 0, hist: null, errors: 0, firstError: null, clientCpuPct: 0, idleRssMb };
  } finally {
    await worker.stop();
  }
}

async function coreReqRep(c) {
  const { url } = c.topo.nodes[0];
  const replier = await startWorker('replier', { url, subject: 'bench.echo', maxMs: c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS }, { waitReady: true });
  try {
    const results = await runWorkers(
      'request-window',
      () => ({ url, subjects: ['bench.echo'], bytes: c.opts.bytes, window: 1, maxOps: c.opts.msgs, durationMs: c.opts.durationMs, warmupMs: c.opts.warmupMs }),
      1,
      c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
    );
    return aggregate(results, 'round trips/s');
  } finally {
    await replier.stop();
  }
}

/** The three nodes' CPU (together, % of one core) while `--streams` R3 streams sit idle. */
async function clusterIdleStreams(c) {
  const pids = c.topo.nodes.map((n) => n.pid);
  const count = c.opts.streams;
  let next = 0;
  const creator = async () => {
    while (next < count) {
      const i = next++;
      await c.admin.apiRetrying(`STREAM.CREATE.IDLE${i}`, { name: `IDLE${i}`, subjects: [`idle.${i}.>`], num_replicas: 3, storage: 'file' });
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(IDLE_CREATORS, count) }, creator));
  const createMs = performance.now() - started;
  const settleMs = c.opts.smoke ? 1_000 : IDLE_SETTLE_MS;
  const windowMs = c.opts.smoke ? 2_000 : IDLE_WINDOW_MS;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const cpu0 = cpuMsOf(pids);
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const value = Math.round(((cpuMsOf(pids) - cpu0) / (performance.now() - t0)) * 1000) / 10;
  return { value, unit: '% of a core', ops: count, ms: Math.round(createMs), hist: null, errors: 0, firstError: null, clientCpuPct: 0 };
}

/** The URL of the node leading `stream` (for R1, the only node). */
async function leaderUrl(c, stream) {
  if (c.topo.nodes.length === 1) return c.topo.nodes[0].url;
  return c.topo.urlOf(await c.admin.streamLeader(stream));
}

function streamConfig(name, replicas) {
  return { name, subjects: [`${name}.>`], storage: 'file', num_replicas: replicas, retention: 'limits', discard: 'old' };
}

/** Publishes into a fresh stream with `window` PubAcks outstanding (1 = each awaited); `republish`: the stream republishes each message (no subscriber). */
async function jsPublish(c, replicas, window, republish = false) {
  const stream = republish ? `BREPUB${replicas}` : window === 1 ? `BSYNC${replicas}` : `BENCH${replicas}`;
  const cfg = streamConfig(stream, replicas);
  await c.admin.freshStream(republish ? { ...cfg, republish: { src: '>', dest: 'brepub.out.>' } } : cfg);
  const url = await leaderUrl(c, stream);
  await c.admin.waitPublishable(`${stream}.warm`);
  const subjects = Array.from({ length: SUBJECT_FANOUT }, (_, i) => `${stream}.${i}`);
  // a single publisher awaits each ack; a windowed load may be spread over several client processes
  const clients = window === 1 ? 1 : c.opts.clients;
  const results = await runWorkers(
    'request-window',
    (i) => ({
      url,
      subjects,
      bytes: c.opts.bytes,
      window: split(window, clients, i),
      maxOps: split(c.opts.msgs, clients, i),
      durationMs: c.opts.durationMs,
      warmupMs: c.opts.warmupMs,
      errorNeedle: '"error"',
    }),
    clients,
    c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
  );
  return aggregate(results, 'msgs/s');
}

/**
 * One `role` worker into a fresh stream (`extra` on top of the usual config), connected to its leader and spread
 * over SUBJECT_FANOUT subjects: the shape of the persist-mode and batch workloads. msgs/s of what was acked.
 */
async function oneWorkerIntoFreshStream(c, stream, replicas, extra, role, params, timeoutMs) {
  await c.admin.freshStream({ ...streamConfig(stream, replicas), ...extra });
  const url = await leaderUrl(c, stream);
  await c.admin.waitPublishable(`${stream}.warm`);
  const subjects = Array.from({ length: SUBJECT_FANOUT }, (_, i) => `${stream}.${i}`);
  const results = await runWorkers(
    role,
    () => ({ url, subjects, bytes: c.opts.bytes, maxOps: c.opts.msgs, durationMs: c.opts.durationMs, ...params }),
    1,
    timeoutMs,
  );
  return aggregate(results, 'msgs/s');
}

/** The windowed publish into an R1 stream with persist_mode async (ADR-56: the ack before the write). */
function jsPublishPersistAsync(c) {
  return oneWorkerIntoFreshStream(c, 'BASYNC1', 1, { persist_mode: 'async' }, 'request-window',
    { window: c.opts.window, warmupMs: c.opts.warmupMs, errorNeedle: '"error"' }, c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS);
}

/** Atomic batches (ADR-50) of `size` messages into a fresh allow_atomic stream; msgs/s of committed messages. */
function jsAtomicBatch(c, replicas, size) {
  return oneWorkerIntoFreshStream(c, `BATOM${replicas}`, replicas, { allow_atomic: true }, 'atomic-batch',
    { batchSize: size, concurrent: 4, warmupMs: c.opts.warmupMs }, c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS);
}

/** One fast batch (2.14 allow_batched) into a fresh stream, a flow ack every `flow` messages; msgs/s committed. */
function jsFastBatch(c, replicas, flow) {
  return oneWorkerIntoFreshStream(c, `BFAST${replicas}`, replicas, { allow_batched: true }, 'fast-batch', { flow }, c.opts.durationMs + WORKER_SLACK_MS);
}

/**
 * Counter increments (ADR-49) into a fresh allow_msg_counter stream, `window` PubAcks outstanding: each a
 * `Nats-Incr: 1` with an empty body, spread over the same subjects as the publish workloads, so the figure
 * sits next to js-pub-async (what the counter's read-add-store costs on top of a publish).
 */
async function jsCounterIncrements(c, replicas, window) {
  const stream = `BCOUNT${replicas}`;
  await c.admin.freshStream({ ...streamConfig(stream, replicas), allow_msg_counter: true });
  const url = await leaderUrl(c, stream);
  const subjects = Array.from({ length: SUBJECT_FANOUT }, (_, i) => `${stream}.${i}`);
  const clients = c.opts.clients;
  const results = await runWorkers(
    'request-window',
    (i) => ({
      url,
      subjects,
      bytes: 0,
      header: 'NATS/1.0\r\nNats-Incr: 1\r\n\r\n',
      window: split(window, clients, i),
      maxOps: split(c.opts.msgs, clients, i),
      durationMs: c.opts.durationMs,
      warmupMs: c.opts.warmupMs,
      errorNeedle: '"error"',
    }),
    clients,
    c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
  );
  return aggregate(results, 'incr/s');
}

/**
 * BENCH<R> holding at least `min` messages: as the windowed publish left it, topped up (unmeasured) when
 * it holds fewer, created when it is missing. Never deleted and re-created within a session: a clustered
 * server may still be retiring the old group.
 */
async function filledStream(c, replicas, min) {
  const stream = `BENCH${replicas}`;
  const info = await c.admin.streamInfo(stream).catch(() => null);
  const have = info?.state?.messages ?? 0;
  if (have >= min) return { stream, messages: have };
  if (!info) await c.admin.freshStream(streamConfig(stream, replicas));
  const url = await leaderUrl(c, stream);
  await c.admin.waitPublishable(`${stream}.warm`);
  await runWorkers(
    'request-window',
    () => ({ url, subjects: [`${stream}.fill`], bytes: c.opts.bytes, window: 1_000, maxOps: min - have, durationMs: c.opts.maxRunMs, errorNeedle: '"error"' }),
    1,
    c.opts.maxRunMs + WORKER_SLACK_MS,
  );
  return { stream, messages: (await c.admin.streamInfo(stream)).state.messages };
}

async function consumerLeaderUrl(c, stream, durable) {
  if (c.topo.nodes.length === 1) return c.topo.nodes[0].url;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const info = await c.admin.api(`CONSUMER.INFO.${stream}.${durable}`).catch(() => null);
    if (info?.cluster?.leader) return c.topo.urlOf(info.cluster.leader);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`consumer ${stream}/${durable} has no leader`);
}

async function jsPull(c, replicas) {
  const { stream, messages } = await filledStream(c, replicas, Math.min(c.opts.msgs, c.opts.drainMinMsgs));
  const count = Math.min(messages, c.opts.msgs);
  const durable = 'bench_pull';
  await c.admin.durableConsumer(stream, { durable_name: durable, ack_policy: 'explicit', deliver_policy: 'all', max_ack_pending: 20_000, num_replicas: 0 });
  const url = await consumerLeaderUrl(c, stream, durable);
  const results = await runWorkers(
    'js-pull',
    () => ({ url, stream, durable, count, batch: c.opts.batch, maxMs: c.opts.maxRunMs }),
    1,
    c.opts.maxRunMs + WORKER_SLACK_MS,
  );
  return aggregate(results, 'msgs/s');
}

async function jsPush(c, replicas) {
  const { stream, messages } = await filledStream(c, replicas, Math.min(c.opts.msgs, c.opts.drainMinMsgs));
  const count = Math.min(messages, c.opts.msgs);
  const durable = 'bench_push';
  const deliverSubject = `bench.push.${Math.random().toString(36).slice(2, 10)}`;
  const url = c.topo.nodes.length === 1 ? c.topo.nodes[0].url : await leaderUrl(c, stream);
  const worker = await startWorker('js-push', { url, deliverSubject, count, maxMs: c.opts.maxRunMs }, { waitReady: true });
  try {
    await c.admin.durableConsumer(stream, {
      durable_name: durable,
      deliver_subject: deliverSubject,
      ack_policy: 'explicit',
      deliver_policy: 'all',
      max_ack_pending: 20_000,
    });
    return aggregate([await worker.next(c.opts.maxRunMs + WORKER_SLACK_MS)], 'msgs/s');
  } finally {
    await worker.stop();
  }
}

const kvSubjects = (keys) => Array.from({ length: keys }, (_, i) => `$KV.${KV_BUCKET}.k${i}`);

async function kvPut(c, replicas) {
  await c.admin.freshKvBucket(KV_BUCKET, replicas);
  const url = await leaderUrl(c, `KV_${KV_BUCKET}`);
  await c.admin.waitPublishable(`$KV.${KV_BUCKET}.k0`);
  const results = await runWorkers(
    'request-window',
    () => ({ url, subjects: kvSubjects(c.opts.keys), bytes: c.opts.bytes, window: 1, maxOps: c.opts.msgs, durationMs: c.opts.durationMs, warmupMs: c.opts.warmupMs, errorNeedle: '"error"' }),
    1,
    c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
  );
  return aggregate(results, 'ops/s');
}

/** Direct gets of keys that all exist (written first, unmeasured, when kv-put did not leave them). */
async function kvGet(c, replicas) {
  const stream = `KV_${KV_BUCKET}`;
  const keys = c.opts.keys;
  const info = await c.admin.streamInfo(stream).catch(() => null);
  if ((info?.state?.messages ?? 0) < keys) {
    // every key written (again) into the bucket kv-put left, or a new one
    if (!info) await c.admin.freshKvBucket(KV_BUCKET, replicas);
    const url = await leaderUrl(c, stream);
    await c.admin.waitPublishable(`$KV.${KV_BUCKET}.k0`);
    await runWorkers(
      'request-window',
      () => ({ url, subjects: kvSubjects(keys), bytes: c.opts.bytes, window: 100, maxOps: keys, durationMs: c.opts.maxRunMs, errorNeedle: '"error"' }),
      1,
      c.opts.maxRunMs + WORKER_SLACK_MS,
    );
  }
  const url = await leaderUrl(c, stream);
  const payloads = kvSubjects(keys).map((s) => JSON.stringify({ last_by_subj: s }));
  const results = await runWorkers(
    'request-window',
    () => ({ url, subjects: [`$JS.API.DIRECT.GET.${stream}`], payloads, window: 1, maxOps: c.opts.msgs, durationMs: c.opts.durationMs, warmupMs: c.opts.warmupMs }),
    1,
    c.opts.durationMs + c.opts.warmupMs + WORKER_SLACK_MS,
  );
  return aggregate(results, 'ops/s');
}

/**
 * A mirror created on a filled R1 file stream (`--mirror-msgs`, unmeasured fill), timed from the create
 * request until its last_seq is the origin's: the whole path of an internal flow-controlled consumer, the
 * mirror's stores and syncs. Polls STREAM.INFO every 20 ms; bounded by --max-run-ms-like maxRunMs × 3.
 */
async function mirrorCatchup(c) {
  const origin = 'MORIG';
  const want = c.opts.mirrorMsgs;
  await c.admin.freshStream(streamConfig(origin, 1));
  const url = c.topo.nodes[0].url;
  await c.admin.waitPublishable(`${origin}.warm`);
  await runWorkers(
    'request-window',
    () => ({ url, subjects: [`${origin}.fill`], bytes: c.opts.bytes, window: 1_000, maxOps: want, durationMs: c.opts.maxRunMs * 3, errorNeedle: '"error"' }),
    1,
    c.opts.maxRunMs * 3 + WORKER_SLACK_MS,
  );
  const last = (await c.admin.streamInfo(origin)).state.last_seq;
  const t0 = performance.now();
  await c.admin.api(`STREAM.CREATE.MCOPY`, { name: 'MCOPY', storage: 'file', num_replicas: 1, mirror: { name: origin } });
  const deadline = Date.now() + c.opts.maxRunMs * 3;
  let held = 0;
  while (Date.now() < deadline) {
    const info = await c.admin.streamInfo('MCOPY').catch(() => null);
    held = info?.state?.last_seq ?? 0;
    if (held >= last) break;
    await sleepMs(20);
  }
  const ms = performance.now() - t0;
  await c.admin.api('STREAM.DELETE.MCOPY').catch(() => undefined);
  const done = held >= last;
  return {
    value: done && ms > 0 ? Math.round((last / ms) * 1000) : NaN,
    unit: 'msgs/s',
    ops: held,
    ms: Math.round(ms),
    hist: null,
    errors: done ? 0 : 1,
    firstError: done ? null : `mirror held ${held} of ${last} after ${Math.round(ms)} ms`,
    clientCpuPct: 0,
  };
}

const sleepMs = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
