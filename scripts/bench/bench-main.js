// `flotilla-bench`: runs the selected workloads on Flotilla and (side by side) nats-server, round by round,
// each round starting every server afresh and alternating between them; prints medians, ratios and
// latency percentiles; writes JSON and an SVG chart when asked. Exit status: 2 for bad usage; 1 when a
// smoke run had any failing workload (or a full run measured nothing); else 0.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOTILLA_NODE_FLAGS } from '../../bin/node-flags.js';
import { parseBenchArgs, USAGE } from './bench-options.js';
import { startTopology, stopAllTopologies } from './server-topology.js';
import { stopAllWorkers } from './worker-process.js';
import { JetStreamAdmin } from './jetstream-admin.js';
import { SHAPES, labelOf } from './workloads.js';
import { BenchResults, COMPARED_WITH, formatTables, summarize } from './bench-report.js';
import { latencyChartSvg } from './latency-chart-svg.js';
import { measureFsyncRate } from './fsync-bound.js';
import { cpuMsOf, rssMbOf } from './process-stats.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const flotillaBin = join(root, 'bin/flotilla.js');
const READY_TIMEOUT_MS = 30_000;

export async function main(argv) {
  let opts;
  try {
    opts = parseBenchArgs(argv);
  } catch (err) {
    console.error(`${err.message}\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const targets = chooseTargets(opts);
  if (typeof targets === 'string') {
    console.error(targets);
    return 2;
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.log(`\n${signal}: stopping the servers and clients`);
      void Promise.all([stopAllWorkers(), stopAllTopologies()]).finally(() => process.exit(130));
    });
  }
  const names = targets.map((t) => t.name);
  const usesJs = opts.workloads.some((w) => w.id.startsWith('js') || w.id.startsWith('kv'));
  const fsyncBefore = usesJs && !opts.smoke ? measureFsyncRate(1_000) : null;
  console.log(`flotilla-bench: ${opts.workloads.map((w) => w.id).join(', ')}`);
  console.log(`servers: ${names.join(', ')}; ${opts.rounds} round(s); ${cpus().length} cores${fsyncBefore ? `; fsync bound ${fsyncBefore.toLocaleString('en-US')}/s` : ''}`);

  const results = new BenchResults();
  const rss = {}; // target -> MB after load on a single node, per round
  let failures = 0;
  const shapes = [...new Set(opts.workloads.map((w) => w.shape))];
  for (let round = 1; round <= opts.rounds; round++) {
    // ABBA order: a drift in the machine's load over the run does not favour whichever server goes first
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    for (const shape of shapes) {
      for (const target of order) {
        const workloads = opts.workloads.filter((w) => w.shape === shape && (!target.jsR1Only || w.jsR1) && (!w.flotillaOnly || target.name !== COMPARED_WITH));
        if (workloads.length === 0) continue;
        failures += await runSession(target, shape, workloads, round, opts, results, rss);
      }
    }
  }

  const summary = summarize(results, opts.workloads, names, (w) => labelOf(w, opts));
  console.log('\n' + formatTables(summary, names));
  const rssLine = Object.entries(rss).map(([t, v]) => `${t} ${Math.max(...v)} MB`).join(', ');
  if (rssLine) console.log(`server RSS after the single-node runs (max over rounds): ${rssLine}`);
  const fsyncAfter = fsyncBefore !== null ? measureFsyncRate(1_000) : null;
  if (fsyncBefore !== null) {
    console.log(`fsync bound of this disk: ${fsyncBefore.toLocaleString('en-US')} before / ${fsyncAfter.toLocaleString('en-US')} after (fdatasync/s, 128 B appends):`);
    console.log('the ceiling for one publisher awaiting each ack when each ack waits for its fsync (Flotilla\'s default); nats-server acks before it syncs.');
  }
  if (opts.json) {
    const doc = {
      generatedAt: new Date().toISOString(),
      command: `flotilla-bench ${argv.join(' ')}`.trim(),
      machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version, tmpdir: tmpdir() },
      servers: targets.map((t) => ({ name: t.name, version: t.version, syncInterval: t.syncInterval ?? null })),
      options: { ...opts, workloads: opts.workloads.map((w) => w.id) },
      fsyncBoundPerSecond: fsyncBefore !== null ? { before: fsyncBefore, after: fsyncAfter } : null,
      serverRssMb: rss,
      workloads: summary,
    };
    writeFileSync(opts.json, JSON.stringify(doc, null, 2) + '\n');
    console.log(`JSON: ${opts.json}`);
  }
  if (opts.svg) {
    writeFileSync(opts.svg, latencyChartSvg(summary, names, `flotilla-bench latency percentiles (${names.join(' vs ')})`));
    console.log(`SVG: ${opts.svg}`);
  }
  const measured = summary.some((s) => Object.values(s.byTarget).some((c) => Number.isFinite(c.median)));
  if (opts.smoke && failures > 0) return 1;
  return measured ? 0 : 1;
}

/** Starts one target in one shape, runs the workloads in order, stops it; returns how many runs failed. */
async function runSession(target, shape, workloads, round, opts, results, rss) {
  const prefix = `round ${round}/${opts.rounds} ${target.name}${shape === 'cluster3' ? ' (3 nodes)' : ''}`;
  let topo = null;
  let admin = null;
  let failures = 0;
  const fail = (w, message) => {
    failures++;
    results.record(w.id, target.name, { value: NaN, error: message });
    console.log(`${prefix}  ${w.id}: FAILED ${message}`);
  };
  try {
    topo = await startTopology(target, SHAPES[shape]);
    // Core-only shapes (the accounts ones) have no JetStream to wait for, and no user the admin could be.
    if (SHAPES[shape].jetstream) {
      admin = await JetStreamAdmin.connect(topo.nodes[0].url);
      await admin.waitReady(READY_TIMEOUT_MS);
    }
  } catch (err) {
    for (const w of workloads) fail(w, `server: ${err.message}`);
    await admin?.close().catch(() => undefined);
    await topo?.stop();
    return failures;
  }
  try {
    for (const w of workloads) {
      const pids = topo.nodes.map((n) => n.pid);
      const cpu0 = cpuMsOf(pids);
      const t0 = performance.now();
      try {
        const r = await w.run({ topo, admin, opts, target });
        const serverCpuPct = Math.round(((cpuMsOf(pids) - cpu0) / (performance.now() - t0)) * 100);
        const run = { ...r, serverCpuPct };
        results.record(w.id, target.name, run);
        const lat = r.hist && r.hist.total > 0 ? `  p50 ${(r.hist.percentileUs(50) / 1000).toFixed(2)} ms  p99 ${(r.hist.percentileUs(99) / 1000).toFixed(2)} ms` : '';
        const errs = r.errors > 0 ? `  ${r.errors} errors (${r.firstError})` : '';
        console.log(`${prefix}  ${w.id}: ${fmt(r.value)} ${r.unit}${lat}  [client cpu ${r.clientCpuPct}%, server cpu ${serverCpuPct}%]${errs}`);
        if (!Number.isFinite(r.value) || (opts.smoke && r.errors > 0)) failures++;
      } catch (err) {
        fail(w, err.message);
      }
    }
    if (shape === 'single') (rss[target.name] ??= []).push(rssMbOf(topo.nodes[0].pid));
  } finally {
    await admin?.close().catch(() => undefined);
    await topo.stop();
  }
  return failures;
}

const fmt = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');

/** Flotilla, its interval-sync variant when wanted and accepted, and nats-server when compared. */
function chooseTargets(opts) {
  // FLOTILLA_BENCH_NODE_FLAGS adds Node flags to Flotilla's nodes (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
  const extraFlags = (process.env.FLOTILLA_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const flotillaArgs = [...FLOTILLA_NODE_FLAGS, ...extraFlags, opts.flotillaPath ?? flotillaBin];
  const version = (cmd, args) => {
    try {
      return execFileSync(cmd, [...args, '--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
    } catch {
      return 'unknown';
    }
  };
  const flotillaVersion = packageVersion(opts.flotillaPath ?? flotillaBin);
  const targets = [{ name: 'flotilla', cmd: process.execPath, args: flotillaArgs, version: flotillaVersion }];
  if (opts.intervalSync && opts.workloads.some((w) => w.jsR1)) {
    if (acceptsSyncInterval(flotillaArgs, opts.intervalSync)) {
      targets.push({ name: `flotilla sync ${opts.intervalSync}`, cmd: process.execPath, args: flotillaArgs, syncInterval: opts.intervalSync, jsR1Only: true, version: flotillaVersion });
    } else {
      console.log(`flotilla does not accept jetstream.sync_interval "${opts.intervalSync}": measuring its default (fsync before ack) only`);
    }
  }
  if (opts.compare !== 'none') {
    const path = opts.natsServerPath ?? onPath('nats-server');
    if (path) targets.push({ name: COMPARED_WITH, cmd: path, args: [], version: version(path, []) });
    else if (opts.compare === 'nats-server') return 'nats-server not found: put it on PATH (apt-get install nats-server) or pass --nats-server PATH';
    else console.log('nats-server not on PATH: measuring flotilla only (apt-get install nats-server to compare)');
  }
  if (!opts.servers) return targets;
  const kept = targets.filter((t) => opts.servers.includes(t.name));
  return kept.length > 0 ? kept : `--servers ${opts.servers.join(',')} names none of ${targets.map((t) => t.name).join(', ')}`;
}

/** The version in the package.json beside the launcher's bin/ (no process to start). */
function packageVersion(launcher) {
  try {
    return `flotilla v${JSON.parse(readFileSync(join(dirname(launcher), '..', 'package.json'), 'utf8')).version}`;
  } catch {
    return 'unknown';
  }
}

/** Whether `flotilla -t` accepts a config that sets jetstream.sync_interval. */
function acceptsSyncInterval(flotillaArgs, interval) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-probe-'));
  try {
    const conf = join(dir, 'probe.conf');
    writeFileSync(conf, `jetstream { store_dir: ${JSON.stringify(join(dir, 'store'))}, sync_interval: "${interval}" }\n`);
    return spawnSync(process.execPath, [...flotillaArgs, '-c', conf, '-t'], { timeout: 15_000 }).status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function onPath(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}
