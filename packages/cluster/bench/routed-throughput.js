#!/usr/bin/env node
// Routed core NATS throughput across a two-node cluster: subscriber on node B, publisher on node A, so every
// message crosses the node-to-node link. Flotilla (gRPC link) and, when on PATH, nats-server (route
// protocol) alternate round by round. Run after `npx tsc -b`:
//   node packages/cluster/bench/routed-throughput.js [--rounds 3] [--msgs 500000]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const clientScript = join(root, 'scripts/bench/_core-client.js');

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, msgs: { type: 'string', default: '500000' } },
});
const rounds = Number(values.rounds);
const msgs = Number(values.msgs);
const kinds = [{ name: 'flotilla', cmd: process.execPath, pre: [join(root, 'bin/flotilla.js')] }];
const natsServer = findOnPath('nats-server');
if (natsServer) kinds.push({ name: 'nats-server', cmd: natsServer, pre: [] });

const results = new Map();
for (let round = 1; round <= rounds; round++) {
  for (const kind of kinds) {
    const [a, b] = await startPair(kind);
    try {
      for (const size of [16, 128]) {
        const cpu0 = cpuSeconds(a.proc.pid) + cpuSeconds(b.proc.pid);
        const v = await routedPubSub(a.url, b.url, msgs, size);
        const cpuUsPerMsg = ((cpuSeconds(a.proc.pid) + cpuSeconds(b.proc.pid) - cpu0) / msgs) * 1e6;
        for (const [key, value] of [[`${kind.name}|${size}`, v], [`${kind.name}|${size}|cpu`, cpuUsPerMsg]]) {
          results.set(key, [...(results.get(key) ?? []), value]);
        }
      }
      console.log(`round ${round} ${kind.name}: done`);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }
}
console.log('\nworkload (pub on A, sub on B)   ' + kinds.map((k) => k.name.padEnd(12)).join('') + (kinds.length > 1 ? 'ratio' : ''));
for (const size of [16, 128]) {
  const cpu = kinds.map((k) => median(results.get(`${k.name}|${size}|cpu`)));
  console.log(
    `server CPU us/msg ${String(size).padStart(3)}B (A+B)    ` +
      cpu.map((v) => v.toFixed(2).padEnd(12)).join('') +
      (cpu.length > 1 ? (cpu[0] / cpu[1]).toFixed(2) + 'x' : ''),
  );
}
for (const size of [16, 128]) {
  const vals = kinds.map((k) => median(results.get(`${k.name}|${size}`)));
  console.log(
    `routed pubsub ${String(size).padStart(3)}B msgs/s        ` +
      vals.map((v) => v.toLocaleString('en-US').padEnd(12)).join('') +
      (vals.length > 1 ? (vals[0] / vals[1]).toFixed(2) + 'x' : ''),
  );
}

async function routedPubSub(pubUrl, subUrl, count, bytes) {
  const subject = `routed.${bytes}`;
  const sub = await startClient(['sub', subUrl, subject, String(count)]);
  await sleep(300); // the subscription's interest reaches node A
  const pub = await startClient(['pub', pubUrl, subject, String(count), String(bytes)], false);
  const result = await sub.next();
  await pub.exited;
  await sub.exited;
  if (result.msgs !== count) console.log(`  warning: subscriber got ${result.msgs}/${count}`);
  return Math.round((result.msgs / result.ms) * 1000);
}

async function startPair(kind) {
  const [pa, pb] = [await freePort(), await freePort()];
  const a = await startNode(kind, ['-n', 'A', '--cluster', `nats://127.0.0.1:${pa}`, '--cluster_name', 'bench']);
  const b = await startNode(kind, ['-n', 'B', '--cluster', `nats://127.0.0.1:${pb}`, '--cluster_name', 'bench', '--routes', `nats://127.0.0.1:${pa}`]);
  const deadline = Date.now() + 15_000;
  while ((await connectUrls(a.port)).length < 2 || (await connectUrls(b.port)).length < 2) {
    if (Date.now() > deadline) throw new Error(`${kind.name}: the two nodes did not link`);
    await sleep(50);
  }
  return [a, b];
}

async function startNode(kind, args) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-routed-bench-'));
  const proc = spawn(kind.cmd, [...kind.pre, '-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir, ...args], { stdio: ['ignore', 'ignore', 'ignore'] });
  const deadline = Date.now() + 10_000;
  let url = null;
  while (!url) {
    const file = readdirSync(dir).find((f) => f.endsWith(`_${proc.pid}.ports`));
    try {
      if (file) url = JSON.parse(readFileSync(join(dir, file), 'utf8')).nats[0];
    } catch {
      url = null;
    }
    if (!url) {
      if (Date.now() > deadline) throw new Error(`${kind.name} did not start`);
      await sleep(20);
    }
  }
  const stop = async () => {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
    rmSync(dir, { recursive: true, force: true });
  };
  return { proc, url, port: Number(new URL(url).port), stop };
}

function connectUrls(port) {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port });
    let data = '';
    s.on('data', (d) => {
      data += d.toString();
      const m = /^INFO (.*)\r\n/.exec(data);
      if (m) {
        s.destroy();
        resolve(JSON.parse(m[1]).connect_urls ?? []);
      }
    });
    s.on('error', () => resolve([]));
  });
}

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

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** user + system CPU of a process so far, from /proc (Linux). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function median(v) {
  const s = [...v].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
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
