// Three real nodes (Flotilla, or nats-server with E2E_SERVER=nats-server) started from one config text with
// `accounts {}`: fixed cluster ports and store directories, so the whole cluster can be killed and started
// again on the same data. Plus the raw `$JS.API` request helpers the per-account cluster tests share.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { freePort, startNode, stopAll, type ClusterNodeProcess } from './cluster-process.js';
import { sleep } from './flotilla-process.js';
import { AGAINST_NATS_SERVER } from './js-cluster.js';

export const NODE_NAMES = ['n1', 'n2', 'n3'] as const;
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The `accounts {}` block (and anything else) every node's config carries; a function for a per-node block (a resolver dir, say). */
export type AccountsBlock = string | ((node: string) => string);

export class AccountsCluster {
  nodes: ClusterNodeProcess[] = [];
  private readonly conns: NatsConnection[] = [];

  private constructor(
    readonly root: string,
    readonly clusterName: string,
    private readonly clusterPorts: number[],
    private readonly block: AccountsBlock,
  ) {}

  static async start(clusterName: string, block: AccountsBlock): Promise<AccountsCluster> {
    const root = mkdtempSync(join(tmpdir(), `flotilla-${clusterName.toLowerCase()}-`));
    const ports = [await freePort(), await freePort(), await freePort()];
    const c = new AccountsCluster(root, clusterName, ports, block);
    await c.startAll();
    return c;
  }

  private confOf(name: string, clusterPort: number): string {
    const routes = this.clusterPorts.map((p) => `"nats://127.0.0.1:${p}"`).join(', ');
    return `
server_name: ${name}
jetstream { store_dir: "${join(this.root, name)}" }
cluster { name: ${this.clusterName}, listen: "127.0.0.1:${clusterPort}", routes: [ ${routes} ] }
${typeof this.block === 'string' ? this.block : this.block(name)}`;
  }

  /** Starts every node (again, on the same store directories and cluster ports). */
  async startAll(): Promise<void> {
    this.nodes = await Promise.all(NODE_NAMES.map((name, i) => this.startOne(name, i)));
  }

  private startOne(name: string, i: number): Promise<ClusterNodeProcess> {
    const file = join(this.root, `${name}.conf`);
    writeFileSync(file, this.confOf(name, this.clusterPorts[i]!));
    return startNode({ name, clusterName: this.clusterName, rawClusterArgs: ['-c', file], natsServer: AGAINST_NATS_SERVER });
  }

  /** Starts the named node again after it was stopped. */
  async restart(name: string): Promise<void> {
    const i = NODE_NAMES.indexOf(name as (typeof NODE_NAMES)[number]);
    this.nodes = [...this.nodes.filter((n) => n.name !== name), await this.startOne(name, i)];
  }

  node(name: string): ClusterNodeProcess {
    const n = this.nodes.find((x) => x.name === name);
    if (n === undefined) throw new Error(`node ${name} is not running`);
    return n;
  }

  async login(name: string, user: string): Promise<NatsConnection> {
    const nc = await connect({ servers: this.node(name).url, user, pass: user, reconnect: false });
    this.conns.push(nc);
    return nc;
  }

  async closeClients(): Promise<void> {
    for (const nc of this.conns.splice(0)) await nc.close().catch(() => undefined);
  }

  /** SIGKILL on every node at once: a crash of the whole cluster, no hand-over, no flush. */
  async killAll(): Promise<void> {
    await this.closeClients();
    for (const n of this.nodes) n.proc.kill('SIGKILL');
    await stopAll(this.nodes);
    this.nodes = [];
  }

  async stop(name: string): Promise<void> {
    await this.node(name).stop();
    this.nodes = this.nodes.filter((n) => n.name !== name);
  }

  async close(): Promise<void> {
    await this.closeClients();
    await stopAll(this.nodes);
    rmSync(this.root, { recursive: true, force: true });
  }
}

export async function api(nc: NatsConnection, subject: string, body: object | string = '', timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  const m = await nc.request(subject, enc.encode(data), { timeout: timeoutMs });
  return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
}

/** Retried while the account's meta group (or a new stream group) has no leader yet (no answer, 10008, 10077). */
export async function apiSettled(nc: NatsConnection, subject: string, body: object | string = '', timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let reply: Record<string, unknown> | null = null;
    try {
      reply = await api(nc, subject, body, 5_000);
    } catch {
      reply = null; // no responder yet
    }
    const code = (reply?.['error'] as { err_code?: number } | undefined)?.err_code;
    if (reply !== null && code !== 10008 && code !== 10077) return reply;
    if (Date.now() > deadline) throw new Error(`${subject}: no settled answer: ${JSON.stringify(reply)}`);
    await sleep(250);
  }
}

export function errorOf(reply: Record<string, unknown>): unknown {
  return reply['error'];
}

export const fileStream = (name: string, replicas: number, extra: object = {}): object => ({
  name,
  subjects: [`${name.toLowerCase()}.>`],
  storage: 'file',
  num_replicas: replicas,
  ...extra,
});
