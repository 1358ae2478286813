// Starts what a workload runs against — one server, or a three-node cluster with JetStream — for either
// Flotilla or nats-server with the same flags (`-js -sd`, `-n`, `--cluster`, `--cluster_name`, `--routes`),
// on free ports found through each server's ports file, in a temporary directory removed on stop.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './jetstream-admin.js';

const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_BYTES = 4_096;
const running = new Set(); // stop functions of topologies not yet stopped

/** Stops every topology still running (on SIGINT/SIGTERM: no server outlives the bench). */
export function stopAllTopologies() {
  return Promise.all([...running].map((stop) => stop()));
}

/**
 * @param target {name, cmd, args, syncInterval?}
 * @param shape {nodes: 1 | 3, jetstream: boolean}
 * @returns {Promise<{nodes: {name, url, pid}[], urlOf(name), stop()}>}
 */
export async function startTopology(target, shape) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-'));
  const started = [];
  const stop = async () => {
    running.delete(stop);
    await Promise.all(started.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  running.add(stop);
  try {
    if (shape.leaf) {
      // a hub (n1) with a leafnode listener and a leaf (n2) attached to it
      const leafPort = await freePort();
      const hubDir = join(dir, 'n1');
      const leafDir = join(dir, 'n2');
      started.push(await startNode(target, hubDir, confArgs(hubDir, `leafnodes { listen: "127.0.0.1:${leafPort}" }\n`), 'n1'));
      started.push(await startNode(target, leafDir, confArgs(leafDir, `leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }\n`), 'n2'));
    } else if (shape.nodes === 1) {
      const nodeDir = join(dir, 'n1');
      const args = shape.accounts ? accountsArgs(nodeDir, shape.accounts) : shape.websocket ? websocketArgs(nodeDir) : jetstreamArgs(target, nodeDir, shape.jetstream);
      started.push(await startNode(target, nodeDir, args));
    } else {
      const clusterPorts = await Promise.all(Array.from({ length: shape.nodes }, () => freePort()));
      const nodes = await Promise.all(
        clusterPorts.map((port, i) => {
          const name = `n${i + 1}`;
          const routes = clusterPorts.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`);
          const args = [
            ...jetstreamArgs(target, join(dir, name), shape.jetstream),
            '-n', name,
            '--cluster', `nats://127.0.0.1:${port}`,
            '--cluster_name', 'bench',
            '--routes', routes.join(','),
          ];
          return startNode(target, join(dir, name), args, name).then((n) => (started.push(n), n));
        }),
      );
      nodes.sort((a, b) => a.name.localeCompare(b.name));
      started.splice(0, started.length, ...nodes);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const nodes = started.map((n) => ({ name: n.name, url: n.url, pid: n.proc.pid, ...(shape.websocket ? { wsUrl: websocketUrlOf(join(dir, 'n1', 'ports'), n.proc.pid) } : {}) }));
  return {
    nodes,
    urlOf: (name) => nodes.find((n) => n.name === name)?.url ?? nodes[0].url,
    stop,
  };
}

/** A config with users a, b (and c) in 1 or 3 accounts; with 3, A exports `bench.>` and B and C import it. */
function accountsArgs(nodeDir, count) {
  const conf = join(nodeDir, 'server.conf');
  mkdirSync(nodeDir, { recursive: true });
  const user = (u) => `{ user: ${u}, password: ${u} }`;
  const text =
    count === 1
      ? `accounts { A: { users: [ ${user('a')}, ${user('b')} ] } }\n`
      : [
          'accounts {',
          `  A: { users: [ ${user('a')} ], exports: [ { stream: "bench.>" } ] }`,
          `  B: { users: [ ${user('b')} ], imports: [ { stream: { account: A, subject: "bench.>" } } ] }`,
          `  C: { users: [ ${user('c')} ], imports: [ { stream: { account: A, subject: "bench.>" } } ] }`,
          '}',
          '',
        ].join('\n');
  writeFileSync(conf, text);
  return ['-c', conf];
}

function confArgs(nodeDir, text) {
  const conf = join(nodeDir, 'server.conf');
  mkdirSync(nodeDir, { recursive: true });
  writeFileSync(conf, text);
  return ['-c', conf];
}

/** A plain-text WebSocket listener on a free port (compression off: the same bytes as TCP, framed). */
function websocketArgs(nodeDir) {
  const conf = join(nodeDir, 'server.conf');
  mkdirSync(nodeDir, { recursive: true });
  writeFileSync(conf, 'websocket { port: -1, no_tls: true }\n');
  return ['-c', conf];
}

function websocketUrlOf(portsDir, pid) {
  const file = readdirSync(portsDir).find((f) => f.endsWith(`_${pid}.ports`));
  const url = file ? JSON.parse(readFileSync(join(portsDir, file), 'utf8')).websocket?.[0] : undefined;
  if (url === undefined) throw new Error('no websocket URL in the ports file');
  return url;
}

function jetstreamArgs(target, nodeDir, jetstream) {
  if (!jetstream) return [];
  const storeDir = join(nodeDir, 'store');
  if (!target.syncInterval) return ['-js', '-sd', storeDir];
  const conf = join(nodeDir, 'server.conf');
  mkdirSync(nodeDir, { recursive: true });
  writeFileSync(conf, `jetstream { store_dir: ${JSON.stringify(storeDir)}, sync_interval: "${target.syncInterval}" }\n`);
  return ['-c', conf];
}

async function startNode(target, nodeDir, extraArgs, name = 'n1') {
  const portsDir = join(nodeDir, 'ports');
  mkdirSync(portsDir, { recursive: true });
  const proc = spawn(target.cmd, [...target.args, '-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', portsDir, ...extraArgs], {
    cwd: nodeDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keepTail = (d) => (tail = (tail + d.toString()).slice(-OUTPUT_TAIL_BYTES));
  proc.stdout.on('data', keepTail);
  proc.stderr.on('data', keepTail);
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(t);
    }
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const url = clientUrlOf(portsDir, proc.pid);
    if (url) return { name, url, proc, stop };
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`${target.name} ${name} did not start: ${tail.trim().split('\n').slice(-5).join(' | ')}`);
    }
    await sleep(20);
  }
}

/** nats-server rewrites its ports file in place: a half-written one is read again on the next poll. */
function clientUrlOf(portsDir, pid) {
  try {
    const file = readdirSync(portsDir).find((f) => f.endsWith(`_${pid}.ports`));
    return file ? JSON.parse(readFileSync(join(portsDir, file), 'utf8')).nats[0] ?? null : null;
  } catch {
    return null;
  }
}

/** A port free right now (bound and released): cluster routes must be known before the nodes start. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
