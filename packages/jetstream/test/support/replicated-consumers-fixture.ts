// Consumer replication without Raft: N replicas of stream 'S' (each its own ConsumerService, FakeStream and
// store) on one shared bus (the cluster's core NATS), and a hand-driven "group" that commits a proposal by
// applying it on every live replica a tick later, in proposal order. Leadership moves when a test says.
import { ConsumerService } from '../../src/consumer/consumer-service.js';
import type { ConsumerReplicationGroup } from '../../src/cluster/consumer-replication-storage.js';
import { ReplicatedStreamConsumers } from '../../src/cluster/consumer-replication-streams.js';
import type { StreamConfig } from '../../src/stream/stream-config-types.js';
import { FakeBus, FakeClock, FakeContext, FakeStream, streamConfig, type Delivered } from './consumer-fakes.js';
import { settle } from './consumer-fixture.js';

export interface Replica {
  index: number;
  ctx: FakeContext;
  stream: FakeStream;
  service: ConsumerService;
  /** The stream group's way into `service` (registration, entries, leadership). */
  replicated: ReplicatedStreamConsumers;
  group: ConsumerReplicationGroup;
  /** false: applies nothing and serves nothing (a crashed node) */
  up: boolean;
  /** Drops its `$JS.API.>` subscription. */
  unsubscribeApi: () => void;
}

export class NotLeaderError extends Error {}

export class ReplicatedConsumersFixture {
  readonly bus = new FakeBus();
  readonly clock = new FakeClock();
  readonly replicas: Replica[] = [];
  leader = -1;
  /** Proposals committed so far (entries applied on every live replica). */
  committed = 0;
  /** true: proposals neither commit nor fail (a leader without quorum) until leadership moves. */
  stalled = false;
  private stalledProposals: Array<(err: Error) => void> = [];
  /** true: proposals never settle, not even when leadership moves (a commit that never comes). */
  stuck = false;
  stepDowns = 0;

  private constructor(private readonly cfg: StreamConfig) {}

  /** `dirs[i]`: replica i's stream directory (file streams). */
  static async start(n: number, cfg: Partial<StreamConfig> = {}, dirs: string[] = []): Promise<ReplicatedConsumersFixture> {
    const f = new ReplicatedConsumersFixture(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: n, ...cfg }));
    for (let i = 0; i < n; i++) await f.openReplica(i, dirs[i]);
    return f;
  }

  /** A replica (re)opened on `dir`: as a node (re)starting with what it stored. */
  async openReplica(index: number, dir?: string): Promise<Replica> {
    const ctx = new FakeContext(this.bus);
    const stream = new FakeStream({ ...this.cfg }, dir);
    ctx.table.set('S', stream);
    const service = new ConsumerService(ctx, this.clock);
    const replicated = new ReplicatedStreamConsumers(service);
    const group: ConsumerReplicationGroup = {
      proposeConsumerEntry: (payload) => this.propose(index, payload),
      clusterInfo: () => ({ name: 'C1', leader: `n${this.leader + 1}` }),
      stepDown: async () => {
        this.stepDowns++;
        await this.elect((this.leader + 1) % this.replicas.length);
      },
    };
    this.replicas[index]?.unsubscribeApi();
    await replicated.replicaAdded(stream, group);
    const replica: Replica = { index, ctx, stream, service, replicated, group, up: true, unsubscribeApi: () => undefined };
    // Like every server: `$JS.API.>` on the node; the service decides whether it answers.
    replica.unsubscribeApi = this.bus.subscribe('$JS.API.>', (m) => {
      if (replica.up) service.handleApi(m.subject.split('.').slice(2), m);
    });
    this.replicas[index] = replica;
    return replica;
  }

  get leaderReplica(): Replica {
    return this.replicas[this.leader]!;
  }

  /** Old leader (if any) learns it lost leadership first, then `index` takes over. */
  async elect(index: number): Promise<void> {
    // As Raft: proposals the old leader could not commit fail once another leader takes over.
    for (const reject of this.stalledProposals.splice(0)) reject(new NotLeaderError('leadership moved'));
    const old = this.leader;
    if (old >= 0 && this.replicas[old]!.up) await this.replicas[old]!.replicated.leadershipChanged({ name: 'S' }, false);
    this.leader = index;
    await this.replicas[index]!.replicated.leadershipChanged({ name: 'S' }, true);
    await settle();
  }

  /** The node dies: it sends nothing more (no 409s) and its subscriptions go. */
  async crash(index: number): Promise<void> {
    const r = this.replicas[index]!;
    r.up = false;
    r.unsubscribeApi();
    // stop() closes consumers without telling waiting pulls anything, as a dead process would.
    await r.service.stop();
  }

  /** Replicates a stored message: every live replica stores it at the same sequence. */
  async publish(subject: string, data = 'x'): Promise<number> {
    let seq = 0;
    for (const r of this.replicas) if (r.up) seq = await r.stream.publish(subject, data);
    return seq;
  }

  private propose(from: number, payload: Buffer): Promise<void> {
    if (from !== this.leader || !this.replicas[from]!.up) return Promise.reject(new NotLeaderError(`n${from + 1} is not the leader`));
    if (this.stuck) return new Promise<void>(() => undefined);
    if (this.stalled) return new Promise<void>((_, reject) => this.stalledProposals.push(reject));
    return new Promise<void>((resolve) => {
      setImmediate(() => {
        for (const r of this.replicas) if (r.up) r.replicated.applyConsumerEntry({ name: 'S' }, payload);
        this.committed++;
        resolve();
      });
    });
  }

  /** `$JS.API.…` request to one replica; null when it does not serve it (not the leader). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response fields
  async request(index: number, subject: string, body: unknown = ''): Promise<Record<string, any> | null> {
    const inbox = `_INBOX.r${index}.${Math.random().toString(36).slice(2)}`;
    const box = this.bus.inbox(inbox);
    try {
      const tokens = subject.split('.').slice(2);
      const data = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      if (!this.replicas[index]!.service.handleApi(tokens, { subject, reply: inbox, header: null, data })) return null;
      for (let i = 0; i < 400 && box.msgs.length === 0; i++) await new Promise((r) => setTimeout(r, i < 20 ? 0 : 5));
      if (box.msgs.length === 0) throw new Error(`no response to ${subject}`);
      return JSON.parse(box.msgs[0]!.data.toString()) as Record<string, any>;
    } finally {
      box.close();
    }
  }

  /** A client's pull request: published on the bus, so it reaches every node. */
  pull(consumer: string, body: unknown, inbox: string): void {
    this.bus.publish(`$JS.API.CONSUMER.MSG.NEXT.S.${consumer}`, inbox, null, Buffer.from(JSON.stringify(body)));
  }

  async stop(): Promise<void> {
    for (const r of this.replicas) if (r.up) await r.service.stop();
  }
}

export type { Delivered };
