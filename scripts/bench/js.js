// `npm run bench -- js [--rounds N] [--msgs N] [--duration-ms N] [--bytes N] [--window N] [--batch N] [--only a,b]`:
// JetStream on an R1 file stream — publish with each PubAck awaited, async publish with a window of
// outstanding PubAcks, pull consumption with acks (consume() and fetch()), KV put and get — for Flotilla
// (fsync before every PubAck; and with an interval sync if its config accepts `jetstream.sync_interval`)
// and, when `nats-server` is on PATH, nats-server, alternating round by round like `bench -- core`.
// Also prints this machine's fsync bound, the ceiling for awaited-ack publishing with fsync per ack.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FLOTILLA_NODE_FLAGS } from '../../bin/node-flags.js';
import { findOnPath, printTable, startServer } from './_side-by-side.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const flotillaBin = join(root, 'bin/flotilla.js');
const clientScript = fileURLToPath(new URL('./_js-client.js', import.meta.url));
const INTERVAL_SYNC = '1s'; // what the interval-sync variant configures (nats-server 2.10's default is 2m)
const CLIENT_TIMEOUT_MS = 180_000;

export async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '3' },
      msgs: { type: 'string', default: '50000' },
      'duration-ms': { type: 'string', default: '3000' },
      bytes: { type: 'string', default: '128' },
      window: { type: 'string', default: '1000' },
      batch: { type: 'string', default: '500' },
      /** comma-separated subset, e.g. `--only nats-server` */
      only: { type: 'string', default: '' },
    },
  });
  const rounds = Number(values.rounds);
  const msgs = Number(values.msgs);
  const durationMs = Number(values['duration-ms']);
  const bytes = Number(values.bytes);
  const window = Number(values.window);
  const batch = Number(values.batch);

  const servers = [{ name: 'flotilla', cmd: process.execPath, args: [...FLOTILLA_NODE_FLAGS, flotillaBin], syncInterval: null }];
  if (acceptsSyncInterval()) {
    servers.push({ name: `flotilla sync ${INTERVAL_SYNC}`, cmd: process.execPath, args: [...FLOTILLA_NODE_FLAGS, flotillaBin], syncInterval: INTERVAL_SYNC });
  } else {
    console.log('flotilla does not accept jetstream.sync_interval: measuring its default (fsync before ack) only');
  }
  const natsServer = findOnPath('nats-server');
  if (natsServer) servers.push({ name: 'nats-server', cmd: natsServer, args: [], syncInterval: null });
  else console.log('nats-server not on PATH: measuring flotilla only (apt-get install nats-server to compare)');

  const only = values.only ? new Set(values.only.split(',')) : null;
  if (only) servers.splice(0, servers.length, ...servers.filter((s) => only.has(s.name)));
  const workloads = [
    `publish, ack awaited (${bytes} B) msgs/s`,
    `publish, ${window} acks in flight msgs/s`,
    `consume() batch ${batch} + ack msgs/s`,
    `fetch() batch ${batch} + ack msgs/s`,
    'KV put (awaited) ops/s',
    'KV get (direct) ops/s',
  ];
  const results = new Map(); // `${server}|${workload}` -> number[]
  const record = (server, workload, value) => {
    const key = `${server}|${workload}`;
    results.set(key, [...(results.get(key) ?? []), value]);
  };
  const fsyncsPerSecond = measureFsyncRate(1_000);
  console.log(`fsync bound: ${fsyncsPerSecond.toLocaleString('en-US')} fdatasync/s (${bytes} B appends, ${tmpdir()})`);

  for (let round = 1; round <= rounds; round++) {
    for (const srv of servers) {
      const node = await startJetStreamServer(srv);
      try {
        const clientArgs = [
          ['pub-sync', node.url, 'BSYNC', String(durationMs), String(bytes)],
          ['pub-async', node.url, 'BENCH', String(msgs), String(bytes), String(window)],
          ['consume', node.url, 'BENCH', String(msgs), String(batch)],
          ['fetch', node.url, 'BENCH', String(msgs), String(batch)],
          ['kv-put', node.url, 'bench', String(durationMs), String(bytes), '1000'],
          ['kv-get', node.url, 'bench', String(durationMs), '1000'],
        ];
        for (let i = 0; i < workloads.length; i++) {
          // one failing workload (a server without some feature) leaves n/a in its cell, not a dead bench
          const r = await runClient(clientArgs[i]).catch((err) => {
            console.log(`  ${srv.name} ${clientArgs[i][0]}: ${err.message}`);
            return null;
          });
          record(srv.name, workloads[i], r && r.ops > 0 ? Math.round((r.ops / r.ms) * 1000) : NaN);
        }
        console.log(`round ${round} ${srv.name}: done`);
      } finally {
        await node.stop();
      }
    }
  }
  printTable(servers.map((s) => s.name), workloads, results, '(medians; higher is better)');
  // measured again: on a shared machine the bound moves with the load
  const fsyncsAfter = measureFsyncRate(1_000);
  const bound = `${fsyncsPerSecond.toLocaleString('en-US')} before / ${fsyncsAfter.toLocaleString('en-US')} after`;
  console.log(`machine fsync bound: ${bound} fdatasync/s — the ceiling for one publisher awaiting`);
  console.log('each ack when every ack waits for its own fsync; nats-server acks before fsync (it syncs every 2 min).');
}

/** Runs one bench client to completion and returns its result line. */
async function runClient(args) {
  const proc = spawn(process.execPath, [clientScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const timer = setTimeout(() => proc.kill('SIGKILL'), CLIENT_TIMEOUT_MS);
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const { value, done } = await lines.next();
  await exited;
  clearTimeout(timer);
  if (done) throw new Error(`bench client ${args[0]} ended without a result`);
  const result = JSON.parse(value);
  if (result.error) throw new Error(`bench client ${args[0]}: ${result.error}`);
  const countedRole = ['pub-async', 'consume', 'fetch'].includes(args[0]); // args[3] is their message count
  if (countedRole && result.ops < Number(args[3])) console.log(`  warning: ${args[0]} completed ${result.ops}/${args[3]}`);
  if (result.failed) console.log(`  warning: ${args[0]} had ${result.failed} failed publishes`);
  if (result.misses) console.log(`  warning: ${args[0]} had ${result.misses} misses`);
  return result;
}

/** A server with JetStream in a fresh store directory (and a sync interval via a config file when asked). */
function startJetStreamServer(srv) {
  return startServer(srv, (dir) => {
    const storeDir = join(dir, 'store');
    if (!srv.syncInterval) return ['-js', '-sd', storeDir];
    const conf = join(dir, 'server.conf');
    writeFileSync(conf, `jetstream { store_dir: ${JSON.stringify(storeDir)}, sync_interval: "${srv.syncInterval}" }\n`);
    return ['-c', conf];
  });
}

/** Whether `flotilla -t` accepts a config that sets jetstream.sync_interval. */
function acceptsSyncInterval() {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-js-probe-'));
  try {
    const conf = join(dir, 'probe.conf');
    writeFileSync(conf, `jetstream { store_dir: ${JSON.stringify(join(dir, 'store'))}, sync_interval: "${INTERVAL_SYNC}" }\n`);
    const r = spawnSync(process.execPath, [...FLOTILLA_NODE_FLAGS, flotillaBin, '-c', conf, '-t'], { encoding: 'utf8', timeout: 15_000 });
    return r.status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Appends `bytes`-sized records with an fdatasync after each for `durationMs`; returns syncs per second. */
function measureFsyncRate(durationMs, bytes = 128) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-fsync-'));
  const fd = openSync(join(dir, 'append.log'), 'a');
  const record = Buffer.alloc(bytes, 97);
  let n = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < durationMs) {
      writeSync(fd, record);
      fdatasyncSync(fd);
      n++;
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  return Math.round((n / (performance.now() - start)) * 1000);
}
