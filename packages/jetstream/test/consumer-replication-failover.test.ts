// Consumer replication over real StreamReplicas (Raft over an InMemoryNetwork): a durable consumer survives
// the crash of the stream (= consumer) leader with its acks, and the new leader redelivers the rest.
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryNetwork, MemoryLogStore, type NodeId } from '@flotilla/raft';
import type { ClusterEnvironment, StreamAssignment } from '../src/cluster/cluster-contracts.js';
import { StreamReplica, type StreamReplicaHost } from '../src/cluster/stream-replica.js';
import { parseAckReply } from '../src/consumer/ack-reply.js';
import { ConsumerService } from '../src/consumer/consumer-service.js';
import { ReplicatedStreamConsumers } from '../src/cluster/consumer-replication-streams.js';
import { statusOf } from './support/consumer-fixture.js';
import { FakeBus, FakeContext } from './support/consumer-fakes.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import type { JetStreamLogger } from '../src/message-bus.js';
import { untilEvery } from '../../../test/helpers/until.js';

/** Polls every 5 ms, as this file was written with. */
const until = untilEvery(5);

const TIMINGS = { tickMs: 20, electionTicks: 5, heartbeatTicks: 1 };

interface Node {
  id: NodeId;
  name: string;
  dir: string;
  logStore: MemoryLogStore;
  replica: StreamReplica | null;
  unsubscribeApi: () => void;
  ctx: FakeContext;
  service: ConsumerService;
  errors: string[];
}

class ConsumerCluster {
  readonly network = new InMemoryNetwork();
  readonly bus = new FakeBus();
  readonly nodes = new Map<NodeId, Node>();
  readonly assignment: StreamAssignment;
  private inboxes = 0;

  constructor(
    readonly root: string,
    config: object,
    private readonly snapshotEveryEntries?: number,
  ) {
    this.assignment = { config: normaliseStreamConfig(parseStreamConfigRequest(config)), created: '2026-01-01T00:00:00Z', group: 'S-g1', peers: [1, 2, 3] };
  }

  async open(id: NodeId): Promise<void> {
    let node = this.nodes.get(id);
    if (!node) {
      node = {
        id,
        name: `n${id}`,
        dir: join(this.root, `n${id}`),
        logStore: new MemoryLogStore(),
        replica: null,
        unsubscribeApi: () => undefined,
        ctx: null!,
        service: null!,
        errors: [],
      };
      this.nodes.set(id, node);
    }
    const n = node;
    // A (re)started node: a fresh ConsumerService over what the node kept (files, Raft log).
    n.ctx = new FakeContext(this.bus);
    // This node's own logger (FakeContext's default is shared by every instance).
    const log: JetStreamLogger = {
      debug() {},
      info() {},
      warn: (obj, msg) => void n.errors.push(`${msg} ${JSON.stringify(obj)}`),
      error: (obj, msg) => void n.errors.push(`${msg} ${JSON.stringify(obj)}`),
    };
    (n.ctx as { log: JetStreamLogger }).log = log;
    n.service = new ConsumerService(n.ctx);
    const env: ClusterEnvironment = {
      clusterName: 'C1',
      self: { name: n.name, raftNodeId: id, serverId: `S${id}` },
      peers: () => [...this.nodes.values()].map((x) => ({ name: x.name, raftNodeId: x.id, serverId: `S${x.id}`, active: x.replica !== null })),
      onPeersChanged: () => () => undefined,
      expectedClusterSize: 3,
      raftStore: n.logStore,
      transport: this.network.transport(),
    };
    // As the JetStreamService wires it: per replica, registration first, then entries and leadership in order.
    let chain: Promise<void> | null = null;
    const service = n.service;
    const replicated = new ReplicatedStreamConsumers(service);
    const withConsumers = (replica: StreamReplica, fn: () => unknown): Promise<void> => {
      chain ??= replicated.replicaAdded(replica.stream, {
        proposeConsumerEntry: (payload) => replica.proposeConsumerEntry(payload),
        clusterInfo: () => replica.clusterInfo(),
        stepDown: async () => {
          const err = replica.stepDown();
          if (err !== null) throw err;
        },
      });
      chain = chain.then(async () => void (await fn())).catch((err: unknown) => void n.errors.push(String(err)));
      return chain;
    };
    const host: StreamReplicaHost = {
      bus: this.bus,
      log: n.ctx.log,
      domain: undefined,
      env,
      streamPurged: (stream) => service.streamPurged(stream),
      storageExceeded: () => false,
      hasConsumerInterest: (stream, subject) => service.hasInterest(stream.name, subject),
      leadershipChanged: (replica, leading) => void withConsumers(replica, () => replicated.leadershipChanged(replica, leading)),
      applyConsumerEntry: (replica, payload) => withConsumers(replica, () => replicated.applyConsumerEntry(replica, payload)),
      // The group's snapshot carries the consumers (after the applies queued before it).
      snapshotConsumers: async (replica) => {
        let data: Uint8Array = new Uint8Array(0);
        await withConsumers(replica, () => (data = replicated.consumerSnapshot(replica)));
        return data;
      },
      restoreConsumers: (replica, data) => withConsumers(replica, () => replicated.restoreConsumerSnapshot(replica, data)),
    };
    n.replica = await StreamReplica.open(host, this.assignment, n.dir, { timings: TIMINGS, ...(this.snapshotEveryEntries ? { snapshotEveryEntries: this.snapshotEveryEntries } : {}) });
    n.ctx.table.set('S', n.replica.stream);
    await withConsumers(n.replica, () => undefined);
    // Like every server: `$JS.API.>` on each node (the meta layer's routing is not part of this test).
    n.unsubscribeApi = this.bus.subscribe('$JS.API.>', (m) => service.handleApi(m.subject.split('.').slice(2), m));
  }

  /** The node vanishes: cut off, its consumers gone without a word (no 409s), its replica stopped. */
  async crash(id: NodeId): Promise<void> {
    const n = this.nodes.get(id)!;
    this.network.isolate(id, [...this.nodes.keys()]);
    const replica = n.replica!;
    n.replica = null;
    n.unsubscribeApi();
    await n.service.stop();
    await replica.stop();
  }

  async restart(id: NodeId): Promise<void> {
    this.network.heal();
    await this.open(id);
  }

  /** The node whose consumers serve (stream leader with its consumers started). */
  async waitForConsumerLeader(timeoutMs = 5000): Promise<Node> {
    let found: Node | undefined;
    await until(() => {
      found = [...this.nodes.values()].find((n) => n.replica?.isLeader() && n.service.leads('S'));
      return found !== undefined;
    }, timeoutMs, 'a consumer leader');
    return found!;
  }

  inbox(): { subject: string; msgs: ReturnType<FakeBus['inbox']>['msgs']; close: () => void } {
    const subject = `_INBOX.${++this.inboxes}`;
    return { subject, ...this.bus.inbox(subject) };
  }

  /** A client request on the bus: every live node's API sees it, only the leader answers. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response fields
  async request(subject: string, body: unknown = ''): Promise<Record<string, any>> {
    const box = this.inbox();
    this.bus.publish(subject, box.subject, null, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
    await until(() => box.msgs.length > 0, 3000, `a reply to ${subject}`);
    await new Promise((r) => setTimeout(r, 20));
    box.close();
    expect(box.msgs.length).toBe(1);
    return JSON.parse(box.msgs[0]!.data.toString()) as Record<string, unknown>;
  }

  pull(consumer: string, body: object, inbox: string): void {
    this.bus.publish(`$JS.API.CONSUMER.MSG.NEXT.S.${consumer}`, inbox, null, Buffer.from(JSON.stringify(body)));
  }

  async publish(subject: string, count: number): Promise<void> {
    const box = this.inbox();
    for (let i = 0; i < count; i++) this.bus.publish(subject, box.subject, null, Buffer.from(`m${i}`));
    await until(() => box.msgs.length === count, 3000, 'pub acks');
    box.close();
  }

  async close(): Promise<void> {
    for (const n of this.nodes.values()) {
      if (n.replica) {
        n.unsubscribeApi();
        await n.replica.stop();
        await n.service.stop();
      }
    }
    await rm(this.root, { recursive: true, force: true });
  }
}

let cluster: ConsumerCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

async function start(storage: 'file' | 'memory', snapshotEveryEntries?: number): Promise<ConsumerCluster> {
  const c = new ConsumerCluster(await mkdtemp(join(tmpdir(), 'consumer-failover-')), { name: 'S', subjects: ['s.>'], storage, num_replicas: 3 }, snapshotEveryEntries);
  cluster = c;
  await Promise.all([1, 2, 3].map((id) => c.open(id)));
  return c;
}

describe('consumer replication over stream replicas', () => {
  for (const storage of ['file', 'memory'] as const) {
    it(`${storage}: the new leader after a leader crash keeps acks and redelivers the unacked with count 2`, async () => {
      const c = await start(storage);
      const leader = await c.waitForConsumerLeader();
      const created = await c.request('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit', ack_wait: 1e9 } });
      expect(created['name']).toBe('D');
      expect(created['cluster']).toMatchObject({ name: 'C1', leader: leader.name });
      await c.publish('s.a', 6);

      const first = c.inbox();
      c.pull('D', { batch: 6 }, first.subject);
      await until(() => first.msgs.length === 6, 3000, 'six deliveries');
      expect(first.msgs.map((m) => parseAckReply(m.reply!)?.streamSeq)).toEqual([1, 2, 3, 4, 5, 6]);
      // Ack 1..3, the last with ack-sync: answered once committed in the stream group.
      for (const m of first.msgs.slice(0, 2)) c.bus.publish(m.reply!, null, null, Buffer.from('+ACK'));
      const sync = c.inbox();
      c.bus.publish(first.msgs[2]!.reply!, sync.subject, null, Buffer.from('+ACK'));
      await until(() => sync.msgs.length === 1, 3000, 'ack-sync reply');
      // Every replica applied the state (files too, for a file stream).
      for (const n of c.nodes.values()) {
        await until(() => n.service.consumerCount('S') === 1, 3000, 'consumer on every replica');
        if (storage === 'file') await until(() => existsSync(join(n.dir, 'consumers', 'D', 'state.json')), 3000, 'state file');
      }
      const waiting = c.inbox();
      c.pull('D', { batch: 1, expires: 30e9 }, waiting.subject);
      await new Promise((r) => setTimeout(r, 20));

      const t0 = Date.now();
      // The crash says nothing to the waiting pull (consumers stopped first); under load the new leader may
      // already be elected while the crash completes.
      await c.crash(leader.id);
      const next = await c.waitForConsumerLeader();
      const takeoverMs = Date.now() - t0;
      expect(next.id).not.toBe(leader.id);
      expect(takeoverMs).toBeLessThan(3000);
      // The new leader saw the pull go to the old one: it tells the client to pull again.
      await until(() => waiting.msgs.length === 1, 1000, '409 from the new leader');
      expect(statusOf(waiting.msgs[0]!)).toMatchObject({ code: 409, description: 'Leadership Change' });
      expect(waiting.msgs[0]!.header!.toString('latin1')).toBe('NATS/1.0 409 Leadership Change\r\n\r\n');

      const info = await c.request('$JS.API.CONSUMER.INFO.S.D');
      expect(info['ack_floor']).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
      expect(info['num_ack_pending']).toBe(3);
      expect(info['cluster']).toMatchObject({ leader: next.name });

      const again = c.inbox();
      c.pull('D', { batch: 10, expires: 10e9 }, again.subject);
      await until(() => again.msgs.length === 3, 4000, 'three redeliveries');
      const tokens = again.msgs.map((m) => parseAckReply(m.reply!)!);
      expect(tokens.map((t) => t.streamSeq)).toEqual([4, 5, 6]);
      expect(tokens.map((t) => t.deliveryCount)).toEqual([2, 2, 2]);
      const sync2 = c.inbox();
      for (const m of again.msgs) c.bus.publish(m.reply!, sync2.subject, null, Buffer.from('+ACK'));
      await until(() => sync2.msgs.length === 3, 3000, 'ack-sync replies from the new leader');
      const done = await c.request('$JS.API.CONSUMER.INFO.S.D');
      expect(done['ack_floor']).toMatchObject({ stream_seq: 6 });
      expect(done['num_ack_pending']).toBe(0);

      // The crashed node comes back, catches up, and takes over after a stepdown with the same state.
      await c.restart(leader.id);
      const back = c.nodes.get(leader.id)!;
      await until(() => back.service.consumerCount('S') === 1, 5000, 'restarted replica knows the consumer');
      for (let i = 0; i < 20 && !(back.replica?.isLeader() && back.service.leads('S')); i++) {
        const current = await c.waitForConsumerLeader();
        if (current.id === back.id) break;
        const res = await c.request('$JS.API.CONSUMER.LEADER.STEPDOWN.S.D');
        expect(res).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_leader_stepdown_response', success: true });
        await new Promise((r) => setTimeout(r, 300));
      }
      await until(() => back.replica!.isLeader() && back.service.leads('S'), 5000, 'restarted node leads');
      const final = await c.request('$JS.API.CONSUMER.INFO.S.D');
      expect(final['ack_floor']).toMatchObject({ stream_seq: 6 });
      expect(final['num_ack_pending']).toBe(0);
      const none = c.inbox();
      c.pull('D', { batch: 1, no_wait: true }, none.subject);
      await until(() => none.msgs.length === 1, 3000, 'no_wait answer');
      expect(statusOf(none.msgs[0]!)).toMatchObject({ code: 404 });
      for (const n of c.nodes.values()) expect(n.errors.filter((e) => !e.includes('not replicated yet'))).toEqual([]);
    }, 30_000);
  }
});

describe('a replica that catches up from a stream snapshot', () => {
  for (const storage of ['file', 'memory'] as const) {
    it(`${storage}: gets every consumer again from the leader (created, changed and deleted while it was away)`, async () => {
      const c = await start(storage, 8);
      const leader = await c.waitForConsumerLeader();
      await c.request('$JS.API.CONSUMER.CREATE.S.OLD', { stream_name: 'S', config: { durable_name: 'OLD', ack_policy: 'explicit' } });
      const away = [...c.nodes.values()].find((n) => n.id !== leader.id)!;
      await until(() => away.service.consumerCount('S') === 1, 3000, 'OLD on every replica');
      await c.crash(away.id);
      await c.request('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit', ack_wait: 30e9 } });
      await c.request('$JS.API.CONSUMER.DELETE.S.OLD');
      // One message per entry: far more entries than a snapshot interval, so the log is compacted.
      for (let i = 0; i < 30; i++) await c.publish('s.a', 1);
      const box = c.inbox();
      c.pull('D', { batch: 30 }, box.subject);
      await until(() => box.msgs.length === 30, 3000, 'deliveries');
      const sync = c.inbox();
      for (const m of box.msgs.slice(0, 12)) c.bus.publish(m.reply!, sync.subject, null, Buffer.from('+ACK'));
      await until(() => sync.msgs.length === 12, 3000, 'acks');
      for (let i = 0; i < 20; i++) await c.publish('s.b', 1);
      expect(leader.replica!.status().commit).toBeGreaterThan(40);

      await c.restart(away.id);
      const back = c.nodes.get(away.id)!;
      await until(() => back.replica!.stream.store.state().last_seq === 50, 5000, 'caught up');
      await until(() => back.service.consumerCount('S') === 1, 5000, 'consumers resynced');
      // It takes over: the consumer is there with its acks.
      for (let i = 0; i < 10; i++) {
        const current = await c.waitForConsumerLeader();
        if (current.id === back.id) break;
        await c.request('$JS.API.CONSUMER.LEADER.STEPDOWN.S.D');
        await new Promise((r) => setTimeout(r, 300));
      }
      expect((await c.waitForConsumerLeader()).id).toBe(back.id);
      const info = await c.request('$JS.API.CONSUMER.INFO.S.D');
      expect(info['ack_floor']).toMatchObject({ stream_seq: 12 });
      expect(info['num_ack_pending']).toBe(18);
      expect(info['num_pending']).toBe(20);
      const gone = await c.request('$JS.API.CONSUMER.INFO.S.OLD');
      expect(gone['error']).toMatchObject({ err_code: 10014 });
      if (storage === 'file') expect(existsSync(join(back.dir, 'consumers', 'OLD'))).toBe(false);
    }, 30_000);
  }
});
