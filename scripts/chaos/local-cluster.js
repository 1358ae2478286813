// A local cluster of real server processes (Flotilla or nats-server) on fixed free ports, so a node killed
// with SIGKILL restarts on the same client, cluster and monitor ports with the same store directory.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './sleep.js';
import { snapshotFlotilla } from './flotilla-snapshot.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FLOTILLA_BIN = join(REPO_ROOT, 'bin', 'flotilla.js');
const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

/**
 * A TCP port free right now, drawn below the kernel's ephemeral range (32768+): a node keeps its port across
 * restarts, and a port-0 answer could be taken meanwhile by some outgoing connection on the machine.
 */
async function freePort() {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise((res) => {
      server.once('error', () => res(false));
      server.listen(port, '127.0.0.1', () => res(true));
    });
    if (!bound) continue;
    await new Promise((res) => server.close(() => res()));
    return port;
  }
  throw new Error('no free port in 20000-32000 after 200 attempts');
}

function portAccepts(port) {
  return new Promise((res) => {
    const sock = tcpConnect({ host: '127.0.0.1', port }, () => {
      sock.destroy();
      res(true);
    });
    sock.on('error', () => res(false));
    sock.setTimeout(500, () => {
      sock.destroy();
      res(false);
    });
  });
}

/**
 * Starts `nodeCount` nodes named n1..nN. `server` is 'flotilla' (bin/flotilla.js with the fault hook on)
 * or 'nats-server' (`natsServerBin`). `env` is added to every node's environment (FLOTILLA_TEST_BUGS, say).
 * `snapshotBuild`: run Flotilla from a private copy of the build (see flotilla-snapshot.js).
 */
export async function startLocalCluster({ server, nodeCount, natsServerBin = '/usr/sbin/nats-server', env = {}, clusterName = 'CHAOS', keepData = false, snapshotBuild = true, log = () => {} }) {
  const runDir = mkdtempSync(join(tmpdir(), 'flotilla-chaos-'));
  const flotillaBin = server === 'flotilla' && snapshotBuild ? snapshotFlotilla(REPO_ROOT, runDir) : FLOTILLA_BIN;
  const nodes = [];
  for (let i = 1; i <= nodeCount; i++) {
    nodes.push({ name: `n${i}`, clientPort: await freePort(), clusterPort: await freePort(), monitorPort: await freePort() });
  }
  const procs = new Map(); // name -> { child, exited: Promise }
  const paused = new Set();

  const argsFor = (n) => {
    const routes = nodes.filter((o) => o !== n).map((o) => `nats://127.0.0.1:${o.clusterPort}`).join(',');
    const dataDir = join(runDir, n.name, 'data');
    mkdirSync(dataDir, { recursive: true });
    return ['-a', '127.0.0.1', '-p', String(n.clientPort), '-m', String(n.monitorPort), '-js', '-sd', dataDir, '-n', n.name,
      '--cluster', `nats://127.0.0.1:${n.clusterPort}`, '--cluster_name', clusterName, '--routes', routes];
  };

  const launch = async (n) => {
    const args = argsFor(n);
    const [cmd, argv] = server === 'flotilla'
      ? [process.execPath, ['--single-threaded-gc', flotillaBin, ...args]]
      : [natsServerBin, args];
    const logFile = createWriteStream(join(runDir, `${n.name}.log`), { flags: 'a' });
    logFile.write(`--- start ${new Date().toISOString()} ${cmd} ${argv.join(' ')}\n`);
    const child = spawn(cmd, argv, {
      cwd: join(runDir, n.name),
      env: { ...process.env, ...(server === 'flotilla' ? { FLOTILLA_FAULT_HOOK: '1' } : {}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(logFile, { end: false });
    child.stderr.pipe(logFile, { end: false });
    const exited = new Promise((res) => child.once('exit', (code, signal) => {
      logFile.end(`--- exit code=${code} signal=${signal} ${new Date().toISOString()}\n`);
      res();
    }));
    procs.set(n.name, { child, exited });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await portAccepts(n.clientPort))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${n.name} exited at start (see ${join(runDir, `${n.name}.log`)})`);
      if (Date.now() > deadline) throw new Error(`${n.name} did not open its client port in ${START_TIMEOUT_MS} ms`);
      await sleep(50);
    }
  };

  const byName = (name) => {
    const n = nodes.find((o) => o.name === name);
    if (!n) throw new Error(`unknown node ${name}`);
    return n;
  };
  const isUp = (name) => {
    const p = procs.get(name);
    return p !== undefined && p.child.exitCode === null && p.child.signalCode === null;
  };

  const cluster = {
    kind: server,
    runDir,
    supportsPartition: server === 'flotilla',
    supports: () => true,
    nodes: nodes.map((n) => ({ name: n.name, url: `nats://127.0.0.1:${n.clientPort}`, monitorUrl: `http://127.0.0.1:${n.monitorPort}` })),
    isUp,
    isPaused: (name) => paused.has(name),
    async kill(name) {
      const p = procs.get(name);
      if (!isUp(name)) return;
      p.child.kill('SIGKILL');
      paused.delete(name);
      await p.exited;
    },
    /** graceful: SIGTERM, SIGKILL after a grace period */
    async stopNode(name) {
      const p = procs.get(name);
      if (!isUp(name)) return;
      if (paused.has(name)) {
        p.child.kill('SIGCONT');
        paused.delete(name);
      }
      p.child.kill('SIGTERM');
      const timer = setTimeout(() => p.child.kill('SIGKILL'), STOP_GRACE_MS);
      await p.exited;
      clearTimeout(timer);
    },
    async restart(name) {
      if (isUp(name)) return;
      await launch(byName(name));
    },
    async pause(name) {
      if (!isUp(name)) return;
      procs.get(name).child.kill('SIGSTOP');
      paused.add(name);
    },
    async resume(name) {
      if (!isUp(name) || !paused.has(name)) return;
      procs.get(name).child.kill('SIGCONT');
      paused.delete(name);
    },
    /** stops every node; the run directory (stores, logs) is removed unless kept */
    async stop(keep = keepData) {
      await Promise.all(nodes.map((n) => cluster.stopNode(n.name)));
      if (!keep) rmSync(runDir, { recursive: true, force: true });
    },
  };

  try {
    await Promise.all(nodes.map((n) => launch(n)));
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    throw err;
  }
  log(`started ${nodeCount} ${server} nodes in ${runDir}`);
  return cluster;
}
