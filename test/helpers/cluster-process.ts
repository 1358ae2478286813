// Starts Flotilla nodes as a cluster of real processes on random ports: the first node's cluster port is
// read from its ports file and handed to later nodes as --routes, as a harness for nats-server would.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection, Msg } from 'nats';
import { FLOTILLA_NODE_ARGS, sleep, type FlotillaProcess } from './flotilla-process.js';
import { RawClient } from './raw-client.js';
import { reservePort } from './port-reservation.js';

export interface ClusterNodeProcess extends FlotillaProcess {
  name: string;
  /** the node's cluster (gRPC) port */
  clusterPort: number;
}

export interface NodeOptions {
  name: string;
  clusterName: string;
  routes?: string[];
  /** cluster listen port; -1 = random */
  clusterPort?: number;
  faultHook?: boolean;
  extraArgs?: string[];
  /** replaces the cluster flags (a config file, say); -a/-p/--ports_file_dir are still added */
  rawClusterArgs?: string[];
  /** runs nats-server (on PATH, same flags) instead, to show a test's expectations are its behaviour */
  natsServer?: boolean;
}

export async function startNode(o: NodeOptions): Promise<ClusterNodeProcess> {
  const args = o.rawClusterArgs ?? [
    '-n',
    o.name,
    '--cluster',
    `nats://127.0.0.1:${o.clusterPort ?? -1}`,
    '--cluster_name',
    o.clusterName,
    ...(o.routes && o.routes.length > 0 ? ['--routes', o.routes.map((r) => `nats://${r}`).join(',')] : []),
    ...(o.extraArgs ?? []),
  ];
  const proc = await launch(args, o.faultHook ? { FLOTILLA_FAULT_HOOK: '1' } : {}, 15_000, o.natsServer === true);
  try {
    return { ...proc, name: o.name, clusterPort: clusterPortOf(proc) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/**
 * Like startFlotilla, but waits for a ports file with a `cluster` entry and tolerates catching the file
 * half-written (it is rewritten in place).
 */
async function launch(extraArgs: string[], env: Record<string, string>, timeoutMs = 15_000, natsServer = false): Promise<FlotillaProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-cluster-'));
  const portsDir = join(dir, 'ports');
  mkdirSync(portsDir, { recursive: true });
  const args = ['-a', '127.0.0.1', '-p', '-1', '-m', '-1', '--ports_file_dir', portsDir, ...extraArgs];
  const [cmd, cmdArgs] = natsServer ? ['nats-server', args] : [process.execPath, [...FLOTILLA_NODE_ARGS, ...args]];
  const proc = spawn(cmd, cmdArgs, { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  let ports: { nats: string[]; monitoring: string[]; cluster?: string[] } | null = null;
  while (ports === null) {
    if (proc.exitCode !== null) throw new Error(`flotilla exited with ${proc.exitCode}: ${out}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`flotilla did not write its ports file: ${out}`);
    }
    const name = readdirSafe(portsDir).find((f) => f.endsWith(`_${proc.pid}.ports`));
    if (name) {
      try {
        ports = JSON.parse(readFileSync(join(portsDir, name), 'utf8')) as typeof ports;
      } catch {
        ports = null; // caught mid-write
      }
    }
    if (ports === null) await sleep(20);
  }
  const port = Number(new URL(ports!.nats[0]!).port);
  const httpPort = ports!.monitoring.length > 0 ? Number(new URL(ports!.monitoring[0]!).port) : 0;
  const stop = async (): Promise<number | null> => {
    let code = proc.exitCode;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      code = await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
    return code;
  };
  return { proc, port, httpPort, url: `127.0.0.1:${port}`, dir, output: () => out, stop };
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Starts `count` nodes n1..nN; every later node routes to the first (gossip completes the mesh). */
export async function startCluster(count: number, clusterName: string, faultHook = false): Promise<ClusterNodeProcess[]> {
  const first = await startNode({ name: 'n1', clusterName, faultHook });
  const seed = `127.0.0.1:${first.clusterPort}`;
  const rest = await Promise.allSettled(
    Array.from({ length: count - 1 }, (_, i) => startNode({ name: `n${i + 2}`, clusterName, routes: [seed], faultHook })),
  );
  const nodes = [first, ...rest.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))];
  try {
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    await waitForMesh(nodes);
  } catch (err) {
    // Nothing may outlive a failed start: the caller never sees these processes.
    await stopAll(nodes);
    throw err;
  }
  return nodes;
}

/** The `cluster` entry of the node's ports file. */
export function clusterPortOf(proc: FlotillaProcess): number {
  const portsDir = join(proc.dir, 'ports');
  const name = readdirSync(portsDir).find((f) => f.endsWith(`_${proc.proc.pid}.ports`));
  if (name === undefined) throw new Error('no ports file');
  const ports = JSON.parse(readFileSync(join(portsDir, name), 'utf8')) as { cluster?: string[] };
  if (!ports.cluster || ports.cluster.length === 0) throw new Error(`no cluster entry in ports file: ${JSON.stringify(ports)}`);
  return Number(new URL(ports.cluster[0]!).port);
}

/** The INFO a new client connection gets. */
export async function infoOf(port: number): Promise<Record<string, unknown>> {
  const raw = await RawClient.connect(port);
  const m = raw.received.match(/^INFO (.*)\r\n/);
  raw.close();
  return JSON.parse(m![1]!) as Record<string, unknown>;
}

/** Waits until every node's INFO lists exactly the given nodes' client URLs. */
export async function waitForConnectUrls(nodes: readonly FlotillaProcess[], expected: readonly FlotillaProcess[], timeoutMs = 10_000): Promise<void> {
  const want = expected.map((n) => `127.0.0.1:${n.port}`).sort();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const infos = await Promise.all(nodes.map((n) => infoOf(n.port)));
    const ok = infos.every((i) => JSON.stringify([...((i['connect_urls'] as string[]) ?? [])].sort()) === JSON.stringify(want));
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`connect_urls never became ${want.join(',')}: ${JSON.stringify(infos.map((i) => i['connect_urls']))}`);
    await sleep(50);
  }
}

export function waitForMesh(nodes: readonly FlotillaProcess[], timeoutMs = 10_000): Promise<void> {
  return waitForConnectUrls(nodes, nodes, timeoutMs);
}

let probeCounter = 0;

/**
 * Returns once every publisher's node knows all interest `subscriber` had registered before the call.
 * Interest travels in order on each link, so a probe subscription made afterwards arrives last: when a
 * probe published through a publisher reaches the subscriber, that node has everything before it too.
 */
export async function awaitInterest(subscriber: NatsConnection, publishers: readonly NatsConnection[], timeoutMs = 10_000): Promise<void> {
  const subject = `_probe.${process.pid}.${++probeCounter}`;
  const seen = new Set<number>();
  const sub = subscriber.subscribe(subject, { callback: (_e, m: Msg) => seen.add(Number(new TextDecoder().decode(m.data))) });
  await subscriber.flush();
  const deadline = Date.now() + timeoutMs;
  try {
    while (seen.size < publishers.length) {
      if (Date.now() > deadline) throw new Error(`interest did not propagate within ${timeoutMs} ms`);
      publishers.forEach((p, i) => {
        if (!seen.has(i)) p.publish(subject, new TextEncoder().encode(String(i)));
      });
      await Promise.all(publishers.map((p) => p.flush()));
      await sleep(20);
    }
  } finally {
    sub.unsubscribe();
  }
}

/** A TCP port free right now (bound to port 0 and released), for config files that name ports. */
/**
 * A port that is free now, for a node that must keep its port across restarts. Drawn at random below the
 * kernel's ephemeral range (32768+), so the outgoing connections of tests running alongside cannot take it
 * between this check and the node's bind (port 0 answers come from that range: EADDRINUSE flakes).
 */
export async function freePort(): Promise<number> {
  const LOW = 20_000;
  const HIGH = 32_000;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (!reservePort(port)) continue;
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
  throw new Error(`no free port in ${LOW}-${HIGH} after 200 attempts`);
}

export async function stopAll(nodes: readonly FlotillaProcess[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.stop()));
}
