#!/usr/bin/env node
// `npm start`: a local Flotilla cluster on this machine. Builds if needed (tsc -b is incremental), starts
// N nodes (default 3) with JetStream, prints their URLs, prefixes every log line with the node's name,
// and stops every node on Ctrl-C (SIGINT/SIGTERM), waiting for each to exit. A node that exits before it is
// ready (a port it cannot bind, a bad flag) stops all of them, with the node's own reason.
//
//   node scripts/start-cluster.js [--nodes N] [--single] [--data DIR] [--name CLUSTER]
//                                 [--client-port P] [--http-port P] [--cluster-port P] [--no-build]
//
// Node i (1-based) listens on client P+i-1 (4222…), monitoring P+i-1 (8222…), cluster P+i-1 (6222…),
// stores under DIR/n<i> (./data/n1…). --single runs one node without clustering.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOTILLA_NODE_FLAGS } from '../bin/node-flags.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FLOTILLA_BIN = join(ROOT, 'bin', 'flotilla.js');
const MAX_NODES = 9;
/** After Ctrl-C, a node still running after this long is killed. */
const STOP_TIMEOUT_MS = 20_000;
const COLORS = ['\x1b[36m', '\x1b[33m', '\x1b[35m', '\x1b[32m', '\x1b[34m', '\x1b[31m', '\x1b[96m', '\x1b[93m', '\x1b[95m'];
const RESET = '\x1b[0m';

export function parseArgs(argv) {
  const o = { nodes: 3, single: false, data: './data', name: 'flotilla', clientPort: 4222, httpPort: 8222, clusterPort: 6222, build: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const port = () => {
      const p = Number(value());
      if (!Number.isInteger(p) || p <= 0 || p > 65535) throw new Error(`${a}: not a port`);
      return p;
    };
    if (a === '--nodes' || a === '-n') o.nodes = Number(value());
    else if (a === '--single') o.single = true;
    else if (a === '--data') o.data = value();
    else if (a === '--name') o.name = value();
    else if (a === '--client-port') o.clientPort = port();
    else if (a === '--http-port') o.httpPort = port();
    else if (a === '--cluster-port') o.clusterPort = port();
    else if (a === '--no-build') o.build = false;
    else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (o.single) o.nodes = 1;
  if (!Number.isInteger(o.nodes) || o.nodes < 1 || o.nodes > MAX_NODES) throw new Error(`--nodes must be 1..${MAX_NODES}`);
  return o;
}

/** The flotilla arguments of node i (0-based): the same flags a deployment uses. */
export function nodeArgs(o, i) {
  const name = `n${i + 1}`;
  const args = ['-n', name, '-a', '127.0.0.1', '-p', String(o.clientPort + i), '-m', String(o.httpPort + i), '-js', '-sd', join(o.data, name)];
  if (o.nodes > 1) {
    const routes = [];
    for (let j = 0; j < o.nodes; j++) if (j !== i) routes.push(`nats://127.0.0.1:${o.clusterPort + j}`);
    args.push('--cluster_name', o.name, '--cluster', `nats://127.0.0.1:${o.clusterPort + i}`, '--routes', routes.join(','));
  }
  return { name, args };
}

function build() {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  process.stdout.write('building (tsc -b) …\n');
  const r = spawnSync(process.execPath, [tsc, '-b'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

/** Lines of a node's output kept to say why it stopped. */
const KEPT_LINES = 20;

/** The line that says why a node could not start: its last error-looking line, else its last line. */
export function failureReason(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (/EADDRINUSE|EACCES|EADDRNOTAVAIL|error|could not|cannot|failed/i.test(line)) return reasonText(line);
  }
  return lines.length > 0 ? reasonText(lines[lines.length - 1]) : 'no output';
}

/** A JSON log line's message (and error), else the line as it is. */
function reasonText(line) {
  try {
    const o = JSON.parse(line);
    const err = o.err ?? o.error;
    return err !== undefined ? `${o.msg}: ${typeof err === 'string' ? err : JSON.stringify(err)}` : String(o.msg);
  } catch {
    return line.trim();
  }
}

/** Writes each complete line of a child's output with a `[n1]` prefix; bounded partial-line buffer. */
function prefixLines(stream, prefix, out, seen = () => undefined) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const text = partial + chunk;
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > 64 * 1024) {
      lines.push(partial);
      partial = '';
    }
    for (const line of lines) {
      out.write(`${prefix} ${line}\n`);
      seen(line);
    }
  });
  stream.on('end', () => partial !== '' && out.write(`${prefix} ${partial}\n`));
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`start-cluster: ${err.message}\n`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(
      'usage: npm start -- [--nodes N] [--single] [--data DIR] [--name CLUSTER] [--client-port P] [--http-port P] [--cluster-port P] [--no-build]\n',
    );
    return 0;
  }
  // `npm start` has just built in its prestart step.
  if (o.build && process.env.npm_lifecycle_event !== 'start') build();
  const tty = process.stdout.isTTY === true;
  const children = [];
  for (let i = 0; i < o.nodes; i++) {
    const { name, args } = nodeArgs(o, i);
    mkdirSync(resolve(join(o.data, name)), { recursive: true });
    const child = spawn(process.execPath, [...FLOTILLA_NODE_FLAGS, FLOTILLA_BIN, ...args], {
      cwd: process.cwd(),
      // Readable lines when a person is watching; JSON when piped (log collectors).
      env: { ...process.env, FLOTILLA_LOG_FORMAT: process.env.FLOTILLA_LOG_FORMAT ?? (tty ? 'pretty' : 'json') },
      // Own process group: Ctrl-C reaches this script, which then stops the nodes in order.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = tty ? `${COLORS[i % COLORS.length]}[${name}]${RESET}` : `[${name}]`;
    const entry = { name, child, i, ready: false, lines: [] };
    const seen = (line) => {
      if (/server is ready/i.test(line)) entry.ready = true;
      entry.lines.push(line);
      if (entry.lines.length > KEPT_LINES) entry.lines.shift();
    };
    prefixLines(child.stdout, prefix, process.stdout, seen);
    prefixLines(child.stderr, prefix, process.stderr, seen);
    // 'close': the output is read to its end, so the reason is in `lines`.
    entry.exited = new Promise((res) => child.once('close', (code, signal) => res({ code, signal })));
    children.push(entry);
  }
  process.stdout.write(`\nFlotilla ${o.nodes === 1 ? 'single node' : `cluster "${o.name}" of ${o.nodes} nodes`} (data under ${resolve(o.data)}):\n`);
  for (const c of children) {
    process.stdout.write(
      `  ${c.name}: nats://127.0.0.1:${o.clientPort + c.i}  monitoring http://127.0.0.1:${o.httpPort + c.i}/  (metrics /metrics, health /healthz, JetStream /jsz)\n`,
    );
  }
  const servers = children.map((c) => `nats://127.0.0.1:${o.clientPort + c.i}`).join(',');
  process.stdout.write(`  clients: --server ${servers}\n  Ctrl-C stops every node.\n\n`);

  let stopping = false;
  let startFailed = false;
  const stopAll = async (signal) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping ${children.length} node(s) …\n`);
    for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    const results = await Promise.all(children.map((c) => c.exited));
    clearTimeout(timer);
    const failed = results.filter((r) => r.code !== 0).length;
    process.stdout.write(failed === 0 ? 'all nodes stopped\n' : `${failed} node(s) did not exit cleanly\n`);
    process.exit(failed === 0 && !startFailed ? 0 : 1);
  };
  process.on('SIGINT', () => void stopAll('SIGINT'));
  process.on('SIGTERM', () => void stopAll('SIGTERM'));
  // A node that dies before it is ready stops them all (a half-started cluster is not what was asked for);
  // one that dies later is reported and the others keep running (a cluster tolerates it).
  for (const c of children) {
    void c.exited.then(({ code, signal }) => {
      if (!stopping && !c.ready) {
        startFailed = true;
        process.stderr.write(`[${c.name}] could not start (${signal ?? `code ${code}`}): ${failureReason(c.lines)}; stopping every node\n`);
        void stopAll('startup failure');
        return;
      }
      if (!stopping) process.stderr.write(`[${c.name}] exited (${signal ?? `code ${code}`})\n`);
      if (!stopping && children.every((x) => x.child.exitCode !== null || x.child.signalCode !== null)) process.exit(1);
    });
  }
  return null;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const code = await main();
  if (code !== null) process.exit(code);
}
