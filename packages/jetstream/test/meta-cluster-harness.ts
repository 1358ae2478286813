// Clustered JetStream services in one process: a JetStreamService per node over an InMemoryNetwork and
// per-node MemoryLogStores, and a bus standing in for cluster-visible core NATS (a publish reaches every
// node's matching subscriptions; another node's handlers run on a later turn, as over a route).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subjectMatchesFilter } from '@flotilla/protocol';
import { InMemoryNetwork, MemoryLogStore, type NodeId } from '@flotilla/raft';
import type { ClusterEnvironment, ClusterPeer } from '../src/cluster/cluster-contracts.js';
import { JetStreamService } from '../src/jetstream-service.js';
import type { BusHandler, MessageBus } from '../src/message-bus.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const enc = new TextEncoder();
const dec = new TextDecoder();

interface Sub {
  node: number;
  subject: string;
  handler: BusHandler;
}

export class ClusterBus {
  private readonly subs = new Set<Sub>();
  /** Nodes cut off: they neither receive nor send. */
  readonly down = new Set<number>();

  busFor(node: number): MessageBus {
    return {
      subscribe: (subject, handler) => {
        const sub = { node, subject, handler };
        this.subs.add(sub);
        return () => this.subs.delete(sub);
      },
      publish: (subject, reply, header, data) => {
        if (this.down.has(node)) return;
        const msg = { subject, reply, header: header === null ? null : Buffer.from(header), data: Buffer.from(data) };
        for (const s of [...this.subs]) {
          if (this.down.has(s.node) || !subjectMatchesFilter(subject, s.subject)) continue;
          if (s.node === node) s.handler(msg);
          // As over a route, a node's subscriber learns which node the message came from.
          else setImmediate(() => !this.down.has(s.node) && this.subs.has(s) && s.handler({ ...msg, fromPeer: `S${node}` }));
        }
      },
      hasInterest: (subject) => [...this.subs].some((s) => !this.down.has(s.node) && subjectMatchesFilter(subject, s.subject)),
    };
  }
}

export class InProcessCluster {
  readonly bus = new ClusterBus();
  readonly net = new InMemoryNetwork();
  readonly services: JetStreamService[] = [];
  private readonly listeners = new Set<() => void>();
  private root = '';

  static async start(size: number): Promise<InProcessCluster> {
    const c = new InProcessCluster();
    c.root = await mkdtemp(join(tmpdir(), 'meta-cluster-'));
    for (let i = 1; i <= size; i++) {
      const env: ClusterEnvironment = {
        clusterName: 'IPC',
        self: { name: `n${i}`, raftNodeId: i, serverId: `S${i}` },
        peers: (): ClusterPeer[] =>
          Array.from({ length: size }, (_, j) => j + 1).map((id) => ({
            name: `n${id}`,
            raftNodeId: id,
            serverId: `S${id}`,
            active: id === i || (!c.bus.down.has(id) && !c.bus.down.has(i)),
          })),
        onPeersChanged: (l) => {
          c.listeners.add(l);
          return () => c.listeners.delete(l);
        },
        expectedClusterSize: size,
        raftStore: new MemoryLogStore(),
        transport: c.net.transport(),
      };
      const svc = new JetStreamService(
        c.bus.busFor(i),
        { storeDir: join(c.root, `n${i}`), maxMemoryStoreBytes: -1, maxFileStoreBytes: -1, serverName: `n${i}`, serverId: `S${i}`, cluster: env },
        quiet,
      );
      c.services.push(svc);
    }
    await Promise.all(c.services.map((s) => s.start()));
    return c;
  }

  /** Cuts node `id` off (links down, Raft traffic dropped), as a kill would. */
  isolate(id: NodeId): void {
    this.bus.down.add(id);
    this.net.isolate(id, this.services.map((_, i) => i + 1));
    for (const l of this.listeners) l();
  }

  /** Every reply to one request published through node `via`: waits up to `windowMs` for one, then 300 ms more. */
  async request(via: number, subject: string, body: unknown = '', windowMs = 400): Promise<Array<Record<string, unknown>>> {
    const bus = this.bus.busFor(via);
    const inbox = `_INBOX.${Math.random().toString(36).slice(2)}`;
    const out: Array<Record<string, unknown>> = [];
    const unsubscribe = bus.subscribe(inbox, (m) => out.push(JSON.parse(dec.decode(m.data)) as Record<string, unknown>));
    bus.publish(subject, inbox, null, enc.encode(typeof body === 'string' ? body : JSON.stringify(body)));
    const deadline = Date.now() + windowMs;
    while (out.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (out.length > 0) await new Promise((r) => setTimeout(r, 300));
    unsubscribe();
    return out;
  }

  async waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.services.map((s) => s.stop().catch(() => undefined)));
    await rm(this.root, { recursive: true, force: true });
  }
}
