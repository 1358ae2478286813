// Three (or more) StreamReplicas of one stream in one process: an InMemoryNetwork between their Raft nodes, a
// shared bus standing in for core NATS routing (a publish reaches whichever replica subscribed), and per-node
// Raft log stores that survive a replica's restart.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subjectMatchesFilter } from '@flotilla/protocol';
import { InMemoryNetwork, MemoryLogStore, type NodeId, type RaftLogStore } from '@flotilla/raft';
import type { StoredMessage } from '@flotilla/store';
import type { ClusterEnvironment, ClusterPeer, ClusterTestKnobs, StreamAssignment } from '../src/cluster/cluster-contracts.js';
import { StreamReplica, type StreamReplicaHost, type StreamReplicaOptions } from '../src/cluster/stream-replica.js';
import type { BusHandler, BusMessage, MessageBus } from '../src/message-bus.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { until } from '../../../test/helpers/until.js';

/** The shared polling helper, under the name this harness's users know it by. */
export { until as waitFor };

export const FAST_TIMINGS = { tickMs: 20, electionTicks: 5, heartbeatTicks: 1 };

/** Core NATS as the replicas see it: subscriptions of every node in one table. */
export class SharedBus {
  private readonly subs = new Set<{ subject: string; handler: BusHandler }>();
  /** Replies (PubAcks) by reply subject. */
  readonly replies = new Map<string, Record<string, unknown>>();
  noResponders = 0;
  onReply: ((subject: string) => void) | null = null;

  busFor(): MessageBus {
    return {
      subscribe: (subject, handler) => {
        const sub = { subject, handler };
        this.subs.add(sub);
        return () => this.subs.delete(sub);
      },
      publish: (subject, reply, header, data) => this.deliver({ subject, reply, header: header === null ? null : Buffer.from(header), data: Buffer.from(data) }),
      hasInterest: (subject) => [...this.subs].some((s) => subjectMatchesFilter(subject, s.subject)),
    };
  }

  /** A client publish: delivered to the serving replica, or counted as no-responders. */
  deliver(msg: BusMessage): void {
    let matched = false;
    for (const s of [...this.subs]) {
      if (subjectMatchesFilter(msg.subject, s.subject)) {
        matched = true;
        s.handler(msg);
      }
    }
    if (matched) return;
    if (msg.subject.startsWith('_R.')) {
      this.replies.set(msg.subject, JSON.parse(msg.data.toString()) as Record<string, unknown>);
      this.onReply?.(msg.subject);
    }
    else if (msg.reply !== null) this.noResponders++;
  }
}

export interface NodeSlot {
  id: NodeId;
  name: string;
  logStore: RaftLogStore;
  dir: string;
  replica: StreamReplica | null;
  up: boolean;
  leadership: boolean[];
  consumerEntries: string[];
  errors: string[];
}

export class ReplicaCluster {
  readonly network = new InMemoryNetwork();
  readonly bus = new SharedBus();
  readonly nodes = new Map<NodeId, NodeSlot>();
  assignment: StreamAssignment;
  private replyCounter = 0;
  /** Passed to every replica's ClusterEnvironment. */
  testKnobs: ClusterTestKnobs | undefined;
  /** What every replica's host answers for server storage and consumer interest (tests may replace them). */
  readonly hostHooks = { storageExceeded: (_kind: 'file' | 'memory'): boolean => false, hasConsumerInterest: (_subject: string): boolean => true };

  private constructor(
    readonly root: string,
    config: object,
    peers: NodeId[],
    readonly options: StreamReplicaOptions,
  ) {
    this.assignment = {
      config: normaliseStreamConfig(parseStreamConfigRequest(config)),
      created: '2026-01-01T00:00:00Z',
      group: 'S-g1',
      peers,
    };
  }

  /** `root`: an existing directory to use instead of a new temporary one (removed by close() all the same). */
  static async start(
    config: object,
    opts: {
      nodes?: number;
      options?: StreamReplicaOptions;
      logStores?: (id: NodeId, dir: string) => Promise<RaftLogStore>;
      root?: string;
      testKnobs?: ClusterTestKnobs;
    } = {},
  ): Promise<ReplicaCluster> {
    const root = opts.root ?? (await mkdtemp(join(tmpdir(), 'stream-replica-')));
    const count = opts.nodes ?? 3;
    const ids = Array.from({ length: count }, (_, i) => i + 1);
    const c = new ReplicaCluster(root, config, ids, { timings: FAST_TIMINGS, ...opts.options });
    if (opts.testKnobs !== undefined) c.testKnobs = opts.testKnobs;
    for (const id of ids) await c.addSlot(id, opts.logStores);
    await Promise.all(ids.map((id) => c.open(id)));
    return c;
  }

  async addSlot(id: NodeId, logStores?: (id: NodeId, dir: string) => Promise<RaftLogStore>): Promise<NodeSlot> {
    const dir = join(this.root, `n${id}`);
    const slot: NodeSlot = {
      id,
      name: `n${id}`,
      logStore: logStores ? await logStores(id, join(this.root, `log${id}`)) : new MemoryLogStore(),
      dir,
      replica: null,
      up: false,
      leadership: [],
      consumerEntries: [],
      errors: [],
    };
    this.nodes.set(id, slot);
    return slot;
  }

  peers(): ClusterPeer[] {
    return [...this.nodes.values()].map((n) => ({ name: n.name, raftNodeId: n.id, serverId: `S${n.id}`, active: n.up }));
  }

  async open(id: NodeId, extra: StreamReplicaOptions = {}): Promise<StreamReplica> {
    const slot = this.nodes.get(id)!;
    const env: ClusterEnvironment = {
      clusterName: 'C1',
      self: { name: slot.name, raftNodeId: id, serverId: `S${id}` },
      peers: () => this.peers(),
      onPeersChanged: () => () => undefined,
      expectedClusterSize: this.nodes.size,
      raftStore: slot.logStore,
      transport: this.network.transport(),
      ...(this.testKnobs !== undefined ? { testKnobs: this.testKnobs } : {}),
    };
    const host: StreamReplicaHost = {
      bus: this.bus.busFor(),
      log: {
        debug() {},
        info() {},
        warn: (obj, msg) => slot.errors.push(`${msg} ${JSON.stringify(obj)}`),
        error: (obj, msg) => slot.errors.push(`${msg} ${JSON.stringify(obj)}`),
      },
      domain: undefined,
      streamPurged: () => undefined,
      storageExceeded: (kind) => this.hostHooks.storageExceeded(kind),
      hasConsumerInterest: (_stream, subject) => this.hostHooks.hasConsumerInterest(subject),
      env,
      leadershipChanged: (_r, leading) => slot.leadership.push(leading),
      applyConsumerEntry: (_r, payload) => {
        slot.consumerEntries.push(payload.toString());
      },
      snapshotConsumers: () => Buffer.from(JSON.stringify(slot.consumerEntries)),
      restoreConsumers: (_r, data) => {
        slot.consumerEntries = JSON.parse(Buffer.from(data).toString()) as string[];
      },
    };
    slot.replica = await StreamReplica.open(host, this.assignment, slot.dir, { ...this.options, ...extra });
    slot.up = true;
    return slot.replica;
  }

  /**
   * Stops the replica and cuts it off the network, like a crashed node. `loseStore`: its message store is gone
   * too (only the Raft log survives), the worst case of an unsynced store.
   */
  async crash(id: NodeId, opts: { loseStore?: boolean } = {}): Promise<void> {
    const slot = this.nodes.get(id)!;
    slot.up = false;
    this.network.isolate(id, [...this.nodes.keys()]);
    await slot.replica?.stop();
    slot.replica = null;
    if (opts.loseStore) await rm(slot.dir, { recursive: true, force: true });
  }

  /** Restarts a crashed node: reconnects it and reopens its replica from its store and Raft log. */
  async restart(id: NodeId, extra: StreamReplicaOptions = {}): Promise<StreamReplica> {
    this.network.heal();
    for (const n of this.nodes.values()) if (!n.up && n.id !== id) this.network.isolate(n.id, [...this.nodes.keys()]);
    return this.open(id, extra);
  }

  replica(id: NodeId): StreamReplica {
    const r = this.nodes.get(id)?.replica;
    if (!r) throw new Error(`node ${id} is down`);
    return r;
  }

  live(): StreamReplica[] {
    return [...this.nodes.values()].filter((n) => n.replica !== null).map((n) => n.replica!);
  }

  leader(): StreamReplica | undefined {
    return this.live().find((r) => r.isLeader());
  }

  async waitForLeader(timeoutMs = 5000): Promise<StreamReplica> {
    await until(() => this.leader() !== undefined, timeoutMs, 'a serving leader');
    return this.leader()!;
  }

  /** Publishes like a client; returns the reply subject the PubAck will land on. */
  publish(subject: string, data: string, header: Buffer | null = null): string {
    const reply = `_R.${++this.replyCounter}`;
    this.bus.deliver({ subject, reply, header, data: Buffer.from(data) });
    return reply;
  }

  ack(reply: string): Record<string, unknown> | undefined {
    return this.bus.replies.get(reply);
  }

  async waitForAcks(replies: string[], timeoutMs = 5000): Promise<Array<Record<string, unknown>>> {
    await until(() => replies.every((r) => this.bus.replies.has(r)), timeoutMs, `${replies.length} acks`);
    return replies.map((r) => this.bus.replies.get(r)!);
  }

  /** Waits until every live replica has applied everything committed and holds the same messages. */
  async waitConverged(timeoutMs = 5000): Promise<StoredMessage[]> {
    let last: StoredMessage[] = [];
    await until(
      async () => {
        const contents = await Promise.all(this.live().map((r) => contentOf(r)));
        last = contents[0]!;
        return contents.every((c) => sameMessages(c, contents[0]!)) && this.live().every((r) => r.status().applied === this.live()[0]!.status().applied);
      },
      timeoutMs,
      'replicas to converge',
    );
    return last;
  }

  async close(): Promise<void> {
    for (const n of this.nodes.values()) await n.replica?.stop();
    for (const n of this.nodes.values()) await n.logStore.close();
    await rm(this.root, { recursive: true, force: true });
  }
}

export async function contentOf(r: StreamReplica): Promise<StoredMessage[]> {
  const st = r.stream.store.state();
  if (st.messages === 0) return [];
  return r.stream.store.readRange(st.first_seq, st.last_seq - st.first_seq + 1);
}

export function sameMessages(a: StoredMessage[], b: StoredMessage[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.seq !== y.seq || x.subject !== y.subject || x.timestampNs !== y.timestampNs) return false;
    if (Buffer.compare(Buffer.from(x.data), Buffer.from(y.data)) !== 0) return false;
    if (Buffer.compare(Buffer.from(x.header), Buffer.from(y.header)) !== 0) return false;
  }
  return true;
}

