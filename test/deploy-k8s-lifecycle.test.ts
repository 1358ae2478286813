// The Kubernetes lifecycle of deploy/k8s, checked statically (Docker and Kubernetes do not run here) and on a
// real node: readiness uses /healthz?js-enabled-only=true, so a pod whose JetStream has no meta leader still
// takes core NATS clients (as the NATS Helm chart); the preStop hook's command puts the node in lame duck
// (readiness 503); the ServiceMonitor scrapes a port and path the Service and the server have.
import { afterAll, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { parseYamlDocuments } from './ops-yaml-subset.js';
import { FLOTILLA_NODE_ARGS, startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { freePort } from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const docs = (file: string): Obj[] => parseYamlDocuments(readFileSync(join(ROOT, 'deploy/k8s', file), 'utf8')) as Obj[];
const sts = docs('statefulset.yaml')[0]!;
const container = sts['spec']['template']['spec']['containers'][0] as Obj;
const args = container['args'] as string[];
const flag = (name: string): string => args[args.indexOf(name) + 1]!;
const services = docs('service.yaml');
const headless = services.find((s) => s['spec']['clusterIP'] === 'None')!;

const dir = mkdtempSync(join(tmpdir(), 'flotilla-k8s-lifecycle-'));
let node: FlotillaProcess | null = null;
afterAll(async () => {
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('readiness is js-enabled-only; preStop signals lame duck through the pid file the args write', () => {
  expect(container['readinessProbe']['httpGet']).toEqual({ path: '/healthz?js-enabled-only=true', port: 'monitor' });
  const hook = (container['lifecycle']['preStop']['exec']['command'] as string[]).join(' ');
  expect(hook).toContain(`--signal ldm=${flag('-P')}`);
  // The hook waits for the exit, within the grace period (lame duck's 2 min default + its 10 s grace).
  expect(hook).toMatch(/while kill -0/);
  expect(sts['spec']['template']['spec']['terminationGracePeriodSeconds']).toBeGreaterThanOrEqual(130);
  // Peers dial the pod's stable name.
  expect(flag('--cluster_advertise')).toBe(`$(POD_NAME).${sts['spec']['serviceName']}:${new URL(flag('--cluster')).port}`);
});

it('the ServiceMonitor selects the headless Service and scrapes its monitor port at /metrics', () => {
  const [sm] = docs('servicemonitor.yaml');
  expect(sm!['kind']).toBe('ServiceMonitor');
  for (const [k, v] of Object.entries(sm!['spec']['selector']['matchLabels'] as Obj)) expect(headless['metadata']['labels'][k]).toBe(v);
  const endpoint = sm!['spec']['endpoints'][0] as Obj;
  const port = (headless['spec']['ports'] as Obj[]).find((p) => p['name'] === endpoint['port'])!;
  expect(port['targetPort']).toBe('monitor');
  expect(endpoint['path']).toBe(sts['spec']['template']['metadata']['annotations']['prometheus.io/path']);
});

it('a node with no meta leader is ready for core NATS; the preStop command makes it unready', async () => {
  // Routes to two nodes that never come: JetStream waits for a quorum, so there is no meta leader.
  const [a, b, own] = [await freePort(), await freePort(), await freePort()];
  const pidFile = join(dir, 'flotilla.pid');
  node = await startFlotilla({
    args: ['-n', 'flotilla-0', '-js', '-sd', join(dir, 'data'), '-P', pidFile, '--cluster_name', 'flotilla', '--cluster', `nats://127.0.0.1:${own}`, '--routes', `nats://127.0.0.1:${a},nats://127.0.0.1:${b}`],
  });
  const get = async (path: string): Promise<number> => (await fetch(`http://127.0.0.1:${node!.httpPort}${path}`)).status;
  const readiness = container['readinessProbe']['httpGet']['path'] as string;
  expect(await get('/healthz')).toBe(503);
  expect(await get(readiness)).toBe(200);
  const nc = await connect({ servers: node.url });
  const sub = nc.subscribe('core.ping', { max: 1 });
  nc.publish('core.ping', 'hello');
  for await (const m of sub) expect(m.string()).toBe('hello');
  await nc.close();

  // The hook's signal command, run as the hook runs it (node bin/flotilla.js --signal ldm=<pid file>).
  const signal = spawnSync(process.execPath, [...FLOTILLA_NODE_ARGS, '--signal', `ldm=${pidFile}`], { encoding: 'utf8' });
  expect(signal.status, signal.stderr).toBe(0);
  await until(async () => (await get(readiness)) === 503, 15_000, 'readiness to fail in lame duck');
}, 120_000);
