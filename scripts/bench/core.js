// `npm run bench -- core [--rounds N] [--msgs N]`: core NATS throughput of Flotilla and, when
// `nats-server` is on PATH, of nats-server on the same machine, alternating round by round.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { FLOTILLA_NODE_FLAGS } from '../../bin/node-flags.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const clientScript = fileURLToPath(new URL('./_core-client.js', import.meta.url));

export async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: 'string', default: '3' },
      msgs: { type: 'string', default: '1000000' },
      'req-ms': { type: 'string', default: '3000' },
      conns: { type: 'string', default: '1000' },
    },
  });
  const rounds = Number(values.rounds);
  const msgs = Number(values.msgs);
  const reqMs = Number(values['req-ms']);
  const servers = [{ name: 'flotilla', cmd: process.execPath, args: [...FLOTILLA_NODE_FLAGS, join(root, 'bin/flotilla.js')] }];
  const natsServer = findOnPath('nats-server');
  if (natsServer) servers.push({ name: 'nats-server', cmd: natsServer, args: [] });
  else console.log('nats-server not on PATH: measuring flotilla only (apt-get install nats-server to compare)');

  const results = new Map(); // `${server}|${workload}` -> number[]
  const record = (server, workload, value) => {
    const key = `${server}|${workload}`;
    results.set(key, [...(results.get(key) ?? []), value]);
  };
  const workloads = ['pubsub 16B msgs/s', 'pubsub 128B msgs/s', 'req/rep round trips/s'];
  for (let round = 1; round <= rounds; round++) {
    for (const srv of servers) {
      const node = await startServer(srv);
      try {
        for (const size of [16, 128]) {
          record(srv.name, `pubsub ${size}B msgs/s`, await pubSub(node.url, msgs, size));
        }
        record(srv.name, 'req/rep round trips/s', await reqRep(node.url, reqMs));
        record(srv.name, 'RSS after load MB', rssMb(node.proc.pid));
        console.log(`round ${round} ${srv.name}: done`);
      } finally {
        await node.stop();
      }
    }
  }
  // Idle RSS with many connections, once per server.
  for (const srv of servers) {
    const node = await startServer(srv);
    try {
      record(srv.name, 'RSS idle MB', rssMb(node.proc.pid));
      const conns = await startClient(['conns', node.url, values.conns]);
      await sleep(1_000);
      record(srv.name, `RSS with ${values.conns} conns MB`, rssMb(node.proc.pid));
      conns.proc.kill('SIGKILL');
    } finally {
      await node.stop();
    }
  }
  printTable(servers.map((s) => s.name), [...workloads, 'RSS after load MB', 'RSS idle MB', `RSS with ${values.conns} conns MB`], results);
}

async function pubSub(url, count, bytes) {
  const subject = `bench.${bytes}`;
  const sub = await startClient(['sub', url, subject, String(count)]);
  const pub = await startClient(['pub', url, subject, String(count), String(bytes)], false);
  const result = await sub.next();
  await pub.exited;
  await sub.exited;
  if (result.msgs !== count) console.log(`  warning: subscriber got ${result.msgs}/${count}`);
  return Math.round((result.msgs / result.ms) * 1000);
}

async function reqRep(url, durationMs) {
  const rep = await startClient(['reply', url, 'bench.echo']);
  const req = await startClient(['req', url, 'bench.echo', String(durationMs), '128'], false);
  const result = await req.next();
  rep.proc.kill('SIGKILL');
  return Math.round((result.reqs / result.ms) * 1000);
}

/** Spawns a bench client; when waitReady, resolves after it printed {"ready":true}. */
async function startClient(args, waitReady = true) {
  const proc = spawn(process.execPath, [clientScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`bench client ${args[0]} ended early`);
    return JSON.parse(value);
  };
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  if (waitReady) await next();
  return { proc, next, exited };
}

async function startServer(srv) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
  const proc = spawn(srv.cmd, [...srv.args, '-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const deadline = Date.now() + 10_000;
  let url = null;
  while (!url) {
    const file = readdirSync(dir).find((f) => f.endsWith(`_${proc.pid}.ports`));
    if (file) url = JSON.parse(readFileSync(join(dir, file), 'utf8')).nats[0];
    else if (Date.now() > deadline) throw new Error(`${srv.name} did not start`);
    else await sleep(20);
  }
  const stop = async () => {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
    rmSync(dir, { recursive: true, force: true });
  };
  return { proc, url, stop };
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function printTable(names, workloads, results) {
  const header = ['workload', ...names, ...(names.length > 1 ? ['ratio flotilla/nats-server'] : [])];
  const rows = workloads.map((w) => {
    const vals = names.map((n) => median(results.get(`${n}|${w}`) ?? [NaN]));
    const cells = [w, ...vals.map((v) => v.toLocaleString('en-US'))];
    if (names.length > 1) cells.push((vals[0] / vals[1]).toFixed(2) + 'x');
    return cells;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log('\n' + line(header));
  for (const r of rows) console.log(line(r));
  console.log('(medians; throughput figures are higher-is-better, RSS lower-is-better)');
}

function findOnPath(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
