// The deploy files (deploy/Dockerfile, docker-compose.yml, deploy/prometheus, deploy/grafana, deploy/k8s):
// Docker does not run here, so the files are parsed and cross-checked (referenced files exist, ports and
// flags agree between services, probes, scrape targets and the node command lines), and the exact node
// command lines they contain are run locally with ports, hosts and data paths remapped, to prove they form
// a JetStream cluster. The dashboard and alert queries must only name metrics a node really exports.
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { parseYaml, parseYamlDocuments } from './ops-yaml-subset.js';
import { freePortRange, waitForHttp200 } from './ops-ports.js';
import { scrape } from './ops-prometheus-text.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8');
type Obj = Record<string, any>;

// ---- the Dockerfile ------------------------------------------------------------------------------

interface DockerfileFacts {
  stages: number;
  user: string;
  workdir: string;
  exposed: number[];
  healthcheck: string;
  entrypoint: string[];
  cmd: string[];
}

function readDockerfile(): DockerfileFacts {
  // Join continuation lines, drop comments.
  const text = read('deploy/Dockerfile').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const facts: DockerfileFacts = { stages: 0, user: 'root', workdir: '/', exposed: [], healthcheck: '', entrypoint: [], cmd: [] };
  for (const l of lines) {
    const [instr, ...rest] = l.split(/\s+/);
    const arg = rest.join(' ');
    switch (instr!.toUpperCase()) {
      case 'FROM':
        facts.stages++;
        facts.user = 'root'; // each stage starts as root
        break;
      case 'USER':
        facts.user = arg;
        break;
      case 'WORKDIR':
        facts.workdir = arg;
        break;
      case 'EXPOSE':
        facts.exposed.push(...rest.map(Number));
        break;
      case 'HEALTHCHECK':
        facts.healthcheck = arg;
        break;
      case 'ENTRYPOINT':
        facts.entrypoint = JSON.parse(arg) as string[];
        break;
      case 'CMD':
        facts.cmd = JSON.parse(arg) as string[];
        break;
    }
  }
  return facts;
}

/** The value after `flag` in an argument list. */
function flag(args: readonly string[], name: string): string {
  const i = args.indexOf(name);
  if (i < 0 || i + 1 >= args.length) throw new Error(`no ${name} in ${args.join(' ')}`);
  return args[i + 1]!;
}

function urlsOf(list: string): URL[] {
  return list.split(',').map((u) => new URL(u));
}

// ---- running the command lines locally --------------------------------------------------------------

interface LocalNode {
  name: string;
  proc: ChildProcess;
  clientPort: number;
  httpPort: number;
  output: () => string;
  exited: Promise<number | null>;
}

interface Remap {
  /** container host name → node index (routes) */
  hostIndex: (host: string) => number | undefined;
  clientBase: number;
  httpBase: number;
  clusterBase: number;
  dataDir: (i: number) => string;
}

/**
 * The node's argument list with only what cannot be the same on one machine changed: container ports
 * become per-node free ports, peer host names become 127.0.0.1 with that peer's port, the wildcard listen
 * address becomes loopback, and the data path a temp dir.
 */
function remapArgs(args: readonly string[], i: number, r: Remap): string[] {
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    const prev = args[k - 1];
    if (prev === '-p') out.push(String(r.clientBase + i));
    else if (prev === '-m') out.push(String(r.httpBase + i));
    else if (prev === '-sd') out.push(r.dataDir(i));
    // one machine: each node its own pid file
    else if (prev === '-P') out.push(`${r.dataDir(i)}.pid`);
    else if (prev === '--cluster_advertise') {
      // a pod's advertised name:port → this node's local cluster address
      const idx = r.hostIndex(a.split(':')[0]!);
      if (idx === undefined) throw new Error(`advertises unknown host ${a}`);
      out.push(`127.0.0.1:${r.clusterBase + idx}`);
    }
    else if (prev === '--cluster' || prev === '--routes') {
      out.push(
        urlsOf(a)
          .map((u) => {
            const idx = u.hostname === '0.0.0.0' ? i : r.hostIndex(u.hostname);
            if (idx === undefined) throw new Error(`route to unknown host ${u.hostname}`);
            return `${u.protocol}//127.0.0.1:${r.clusterBase + idx}`;
          })
          .join(','),
      );
    } else out.push(a);
  }
  return out;
}

/** The image's entrypoint as a local command: node → this node binary, paths relative to WORKDIR → the repo. */
function localCommand(entrypoint: readonly string[], args: readonly string[]): [string, string[]] {
  const [node, ...rest] = entrypoint;
  expect(node).toBe('node');
  return [process.execPath, [...rest.map((a) => (a.endsWith('.js') ? resolve(ROOT, a) : a)), ...args]];
}

function launch(name: string, cmd: [string, string[]], env: Record<string, string>, clientPort: number, httpPort: number): LocalNode {
  const proc = spawn(cmd[0], cmd[1], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer): void => {
    out = (out + d.toString()).slice(-100_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  return { name, proc, clientPort, httpPort, output: () => out, exited };
}

async function stopNodes(nodes: LocalNode[]): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      if (n.proc.exitCode === null && n.proc.signalCode === null) {
        n.proc.kill('SIGTERM');
        const timer = setTimeout(() => n.proc.kill('SIGKILL'), 10_000);
        await n.exited;
        clearTimeout(timer);
      }
    }),
  );
}

/** All nodes report /healthz ok, one meta leader of a 3-node meta group, and an R3 stream works. */
async function proveCluster(nodes: LocalNode[], clusterName: string): Promise<void> {
  try {
    for (const n of nodes) await waitForHttp200(`http://127.0.0.1:${n.httpPort}/healthz`, 40_000);
  } catch (err) {
    throw new Error(`${String(err)}\n${nodes.map((n) => `=== ${n.name}\n${n.output().slice(-2000)}`).join('\n')}`);
  }
  const metas = await Promise.all(nodes.map(async (n) => ((await (await fetch(`http://127.0.0.1:${n.httpPort}/jsz`)).json()) as Obj)['meta_cluster']));
  for (const m of metas) expect(m).toMatchObject({ name: clusterName, cluster_size: nodes.length, leader: metas[0].leader });
  expect(nodes.map((n) => n.name)).toContain(metas[0].leader);
  const nc = await connect({ servers: `127.0.0.1:${nodes[0]!.clientPort}` });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false });
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        await jsm.streams.add({ name: 'DEPLOY', subjects: ['deploy.>'], num_replicas: 3 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const ack = await nc.jetstream().publish('deploy.check', new TextEncoder().encode('ok'));
    expect(ack.seq).toBe(1);
    const info = await jsm.streams.info('DEPLOY');
    expect(info.cluster?.replicas?.length).toBe(2);
  } catch (err) {
    throw new Error(`${String(err)}\n${nodes.map((n) => `=== ${n.name}\n${n.output().slice(-3000)}`).join('\n')}`);
  } finally {
    await nc.close();
  }
}

// ---- the tests ---------------------------------------------------------------------------------------

const docker = readDockerfile();
const compose = parseYaml(read('docker-compose.yml')) as Obj;
const nodeServices = Object.keys(compose['services']).filter((s) => compose['services'][s].command?.includes('-js'));
const k8sDir = 'deploy/k8s';
const k8sDocs = (parseYaml(read(`${k8sDir}/kustomization.yaml`)) as Obj)['resources'].flatMap((f: string) => parseYamlDocuments(read(`${k8sDir}/${f}`))) as Obj[];
const statefulSet = k8sDocs.find((d) => d['kind'] === 'StatefulSet')!;
const container = statefulSet['spec']['template']['spec']['containers'][0] as Obj;
const stsArgs = container['args'] as string[];

/** Metric names a running cluster exports, filled by the compose run below. */
const exported = new Set<string>();

describe('deploy/Dockerfile', () => {
  it('is multi-stage, runs as a non-root user, checks /healthz on the monitoring port it exposes', () => {
    expect(docker.stages).toBeGreaterThanOrEqual(2);
    expect(docker.user).not.toBe('root');
    expect(docker.user).not.toBe('0');
    expect(docker.healthcheck).toContain(`http://127.0.0.1:${flag(docker.cmd, '-m')}/healthz`);
    expect(docker.exposed.sort()).toEqual([4222, 6222, 8222]);
    expect(docker.entrypoint).toEqual(['node', '--single-threaded-gc', 'bin/flotilla.js']);
    // The build context leaves out local builds and installs (BuildKit's per-Dockerfile ignore file).
    const ignored = read('deploy/Dockerfile.dockerignore').split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    for (const pattern of ['**/node_modules', '**/dist', 'data']) expect(ignored).toContain(pattern);
    // Everything the build copies exists in the repository.
    for (const m of read('deploy/Dockerfile').matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const src of m[1]!.split(/\s+/)) expect(existsSync(join(ROOT, src)), src).toBe(true);
    }
  });
});

describe('docker-compose.yml', () => {
  it('three nodes on named volumes whose flags agree with their ports, routes and the image', () => {
    expect(nodeServices).toEqual(['n1', 'n2', 'n3']);
    const services = compose['services'] as Obj;
    const names = new Set<string>();
    const published = new Set<string>();
    for (const s of nodeServices) {
      const svc = services[s];
      const args = svc.command as string[];
      expect(flag(args, '-n')).toBe(s);
      expect(svc.hostname).toBe(s);
      names.add(flag(args, '-n'));
      expect(flag(args, '--cluster_name')).toBe('flotilla');
      expect(svc.build.dockerfile).toBe('deploy/Dockerfile');
      expect(existsSync(join(ROOT, svc.build.context, svc.build.dockerfile))).toBe(true);
      // The data path is a named volume declared at the top level.
      const [volume, mountPath] = (svc.volumes as string[])[0]!.split(':');
      expect(mountPath).toBe(flag(args, '-sd'));
      expect(Object.keys(compose['volumes'])).toContain(volume);
      // Published ports map onto the ports the node listens on.
      const targets = (svc.ports as string[]).map((p) => Number(p.split(':')[1]));
      expect(targets.sort()).toEqual([Number(flag(args, '-p')), Number(flag(args, '-m'))].sort());
      for (const p of svc.ports as string[]) published.add(p.split(':')[0]!);
      // Routes name the other node services on their cluster ports.
      const listen = new URL(flag(args, '--cluster'));
      const routes = urlsOf(flag(args, '--routes'));
      expect(routes.map((u) => u.hostname).sort()).toEqual(nodeServices.filter((x) => x !== s));
      for (const u of routes) expect(u.port).toBe(new URL(flag(services[u.hostname].command, '--cluster')).port);
      expect(listen.hostname).toBe('0.0.0.0');
    }
    expect(names.size).toBe(3);
    expect(published.size).toBe(6); // no host port used twice
  });

  it('Prometheus scrapes every node; Grafana has the data source and the dashboard mounted', () => {
    const services = compose['services'] as Obj;
    const mounts = (svc: Obj): Map<string, string> =>
      new Map((svc['volumes'] as string[]).filter((v) => v.startsWith('./')).map((v) => [v.split(':')[1]!, v.split(':')[0]!]));
    for (const svc of [services['prometheus'], services['grafana']]) for (const src of mounts(svc).values()) expect(existsSync(join(ROOT, src)), src).toBe(true);

    const promMounts = mounts(services['prometheus']);
    const configPath = flag((services['prometheus'].command as string[]).flatMap((a) => a.split('=')), '--config.file');
    const prom = parseYaml(read(promMounts.get(configPath)!)) as Obj;
    const targets = prom['scrape_configs'][0]['static_configs'][0]['targets'] as string[];
    expect(targets).toEqual(nodeServices.map((s) => `${s}:${flag(services[s].command, '-m')}`));
    expect(prom['scrape_configs'][0]['metrics_path']).toBe('/metrics');
    for (const rules of prom['rule_files'] as string[]) {
      const alerts = parseYaml(read(promMounts.get(rules)!)) as Obj;
      expect(alerts['groups'][0]['rules'].length).toBeGreaterThan(3);
    }

    const grafanaMounts = mounts(services['grafana']);
    const provisioning = grafanaMounts.get('/etc/grafana/provisioning')!;
    const ds = parseYaml(read(`${provisioning}/datasources/prometheus.yml`)) as Obj;
    const dsUrl = new URL(ds['datasources'][0]['url']);
    expect(dsUrl.hostname).toBe('prometheus');
    expect((services['prometheus'].ports as string[]).map((p) => p.split(':')[1])).toContain(dsUrl.port);
    const providers = parseYaml(read(`${provisioning}/dashboards/flotilla.yml`)) as Obj;
    const dashboardsIn = providers['providers'][0]['options']['path'] as string;
    const dashboardDir = grafanaMounts.get(dashboardsIn)!;
    expect(statSync(join(ROOT, dashboardDir)).isDirectory()).toBe(true);
    const dashboard = JSON.parse(read(`${dashboardDir}/flotilla.json`)) as Obj;
    const titles = (dashboard['panels'] as Obj[]).map((p) => String(p['title']).toLowerCase()).join(' | ');
    for (const topic of ['messages in', 'consumer lag', 'leaders', 'elections', 'replication lag', 'fsync']) expect(titles).toContain(topic);
    const uids = new Set((dashboard['panels'] as Obj[]).filter((p) => p['type'] !== 'row').map((p) => p['datasource']['uid']));
    expect(uids).toEqual(new Set([ds['datasources'][0]['uid']]));
  });
});

describe('deploy/k8s', () => {
  it('StatefulSet, headless Service and PodDisruptionBudget agree on names, labels, ports, probes and routes', () => {
    const kinds = k8sDocs.map((d) => d['kind']).sort();
    expect(kinds).toEqual(['PodDisruptionBudget', 'Service', 'Service', 'StatefulSet']);
    const spec = statefulSet['spec'];
    const headless = k8sDocs.find((d) => d['kind'] === 'Service' && d['spec']['clusterIP'] === 'None')!;
    expect(spec['serviceName']).toBe(headless['metadata']['name']);
    expect(headless['spec']['publishNotReadyAddresses']).toBe(true);
    const labels = spec['template']['metadata']['labels'];
    expect(spec['selector']['matchLabels']).toEqual(labels);
    for (const d of k8sDocs.filter((x) => x['kind'] !== 'StatefulSet')) expect(d['spec']['selector']['matchLabels'] ?? d['spec']['selector']).toEqual(labels);
    const pdb = k8sDocs.find((d) => d['kind'] === 'PodDisruptionBudget')!;
    expect(pdb['spec']['maxUnavailable']).toBe(1); // a 3-node quorum survives one voluntary eviction

    const ports = new Map((container['ports'] as Obj[]).map((p) => [p['name'] as string, p['containerPort'] as number]));
    expect(ports.get('client')).toBe(Number(flag(stsArgs, '-p')));
    expect(ports.get('monitor')).toBe(Number(flag(stsArgs, '-m')));
    expect(ports.get('cluster')).toBe(Number(new URL(flag(stsArgs, '--cluster')).port));
    for (const p of headless['spec']['ports'] as Obj[]) expect(ports.get(p['targetPort'])).toBe(p['port']);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const get = container[probe]['httpGet'];
      expect(get['port']).toBe('monitor');
      expect(get['path']).toMatch(/^\/healthz/);
    }
    // Node name from the pod name; routes to every pod through the headless Service.
    expect(flag(stsArgs, '-n')).toBe('$(POD_NAME)');
    expect(container['env'].find((e: Obj) => e['name'] === 'POD_NAME')['valueFrom']['fieldRef']['fieldPath']).toBe('metadata.name');
    const sts = statefulSet['metadata']['name'];
    expect(urlsOf(flag(stsArgs, '--routes')).map((u) => `${u.hostname}:${u.port}`)).toEqual(
      Array.from({ length: spec['replicas'] }, (_, i) => `${sts}-${i}.${spec['serviceName']}:${ports.get('cluster')}`),
    );
    const mount = container['volumeMounts'][0];
    expect(mount['mountPath']).toBe(flag(stsArgs, '-sd'));
    expect(spec['volumeClaimTemplates'][0]['metadata']['name']).toBe(mount['name']);
    expect(spec['template']['spec']['securityContext']['runAsNonRoot']).toBe(true);
  });
});

describe('the node command lines, run locally', () => {
  const dirs: string[] = [];
  const running: LocalNode[] = [];
  const tempDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'flotilla-ops-deploy-'));
    dirs.push(d);
    return d;
  };

  afterAll(async () => {
    await stopNodes(running);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('docker-compose.yml: the three nodes form a JetStream cluster; dashboard and alerts name real metrics', async () => {
    const dir = tempDir();
    const r: Remap = {
      hostIndex: (h) => (nodeServices.includes(h) ? nodeServices.indexOf(h) : undefined),
      clientBase: await freePortRange(3),
      httpBase: await freePortRange(3),
      clusterBase: await freePortRange(3),
      dataDir: (i) => join(dir, nodeServices[i]!),
    };
    const nodes = nodeServices.map((s, i) =>
      launch(s, localCommand(docker.entrypoint, remapArgs(compose['services'][s].command, i, r)), {}, r.clientBase + i, r.httpBase + i),
    );
    running.push(...nodes);
    await proveCluster(nodes, 'flotilla');

    // Every family a node registers (from its # TYPE lines: families without samples yet count too).
    for (const n of nodes) {
      expect((await scrape(n.httpPort)).length).toBeGreaterThan(50);
      const text = await (await fetch(`http://127.0.0.1:${n.httpPort}/metrics`)).text();
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        exported.add(m[1]!);
        if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(m[1]! + suffix);
      }
    }
    const queries = [
      ...(JSON.parse(read('deploy/grafana/dashboards/flotilla.json')) as Obj)['panels'].flatMap((p: Obj) => (p['targets'] ?? []).map((t: Obj) => t['expr'] as string)),
      ...(parseYaml(read('deploy/prometheus/alerts.yml')) as Obj)['groups'].flatMap((g: Obj) => g['rules'].map((rule: Obj) => rule['expr'] as string)),
    ];
    const named = new Set(queries.flatMap((q: string) => q.match(/flotilla_[a-z_]+/g) ?? []));
    expect(named.size).toBeGreaterThan(15);
    for (const m of named) expect(exported.has(m), `${m} is not exported`).toBe(true);
    await stopNodes(nodes);
    for (const n of nodes) expect(await n.exited).toBe(0);
  }, 90_000);

  it('deploy/k8s StatefulSet: the pods’ argument list forms a cluster (each pod lists its own route too)', async () => {
    const dir = tempDir();
    const sts = statefulSet['metadata']['name'] as string;
    const service = statefulSet['spec']['serviceName'] as string;
    const replicas = statefulSet['spec']['replicas'] as number;
    const r: Remap = {
      hostIndex: (h) => {
        const m = new RegExp(`^${sts}-(\\d+)\\.${service}$`).exec(h);
        return m ? Number(m[1]) : undefined;
      },
      clientBase: await freePortRange(replicas),
      httpBase: await freePortRange(replicas),
      clusterBase: await freePortRange(replicas),
      dataDir: (i) => join(dir, `${sts}-${i}`),
    };
    const nodes = Array.from({ length: replicas }, (_, i) => {
      const pod = `${sts}-${i}`;
      // Kubernetes expands $(POD_NAME) in args from the container's env.
      const args = stsArgs.map((a) => a.replace('$(POD_NAME)', pod));
      const env = Object.fromEntries((container['env'] as Obj[]).filter((e) => e['value'] !== undefined).map((e) => [e['name'], e['value']]));
      return launch(pod, localCommand(docker.entrypoint, remapArgs(args, i, r)), { ...env, POD_NAME: pod }, r.clientBase + i, r.httpBase + i);
    });
    running.push(...nodes);
    await proveCluster(nodes, flag(stsArgs, '--cluster_name'));
    await stopNodes(nodes);
    for (const n of nodes) expect(await n.exited).toBe(0);
  }, 90_000);
});
