// JetStream on this node: owns the streams, serves `$JS.API.>`, and persists the catalogue under storeDir.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { FileStore, MemoryStore, SerialQueue, type MessageStore, type SyncPolicy } from '@flotilla/store';
import type { ApiError } from './api/api-error.js';
import { JsErrors } from './api/api-errors.js';
import { directGet } from './api/direct-get.js';
import { ResponseType, StreamApi } from './api/stream-api.js';
import { formatTimeNs, nowNs } from './api/time-format.js';
import { loadStreams, messagesDir, removeStream, saveStream, streamDir } from './catalogue/stream-catalogue.js';
import { ConsumerService } from './consumer/consumer-service.js';
import type { JetStreamContext } from './jetstream-context.js';
import type { MessageBus, BusMessage, JetStreamLogger } from './message-bus.js';
import { checkStreamUpdate, sameStreamConfig } from './stream/stream-config.js';
import type { StreamConfig } from './stream/stream-config-types.js';
import type { StreamHandle } from './stream/stream-handle.js';
import { SubjectIndex } from './stream/subject-index.js';
import { Stream, storeLimitsOf, type StreamHost } from './stream/stream.js';
import type { ClusterEnvironment, ClusteredJetStreamView, ClusterObserver } from './cluster/cluster-contracts.js';
import { ClusteredJetStream, type OpenReplica } from './cluster/clustered-jetstream.js';
import type { LocalReplica } from './cluster/clustered-jetstream-replicas.js';
import { StreamReplica, type StreamReplicaHost } from './cluster/stream-replica.js';
import { ReplicaConsumerHooks } from './cluster/clustered-jetstream-consumers.js';

export interface JetStreamServiceOptions {
  storeDir: string;
  /** -1 = unlimited */
  maxMemoryStoreBytes: number;
  /** -1 = unlimited */
  maxFileStoreBytes: number;
  domain?: string;
  /** Server's name and id for advisories and info responses. */
  serverName: string;
  serverId: string;
  /** File stores: `always` (default) fsyncs before an ack; `{intervalMs}` syncs periodically. */
  fileSync?: SyncPolicy;
  /** Clustered JetStream (meta group, replicated streams); absent on a single node. */
  cluster?: ClusterEnvironment;
}

/** Stream create/update/delete wait in one queue; beyond this many the request is refused. */
const MAX_PENDING_MUTATIONS = 4096;

export class JetStreamService implements JetStreamContext, StreamHost {
  readonly consumers: ConsumerService;
  private readonly table = new Map<string, Stream>();
  /** Every stream's subjects for the overlap check; null after any change to the table (rebuilt on use). */
  private subjectIndex: SubjectIndex | null = null;
  readonly streamApi: StreamApi;
  /** The cluster side (meta group, replicas, who answers what); null on a single node. */
  private readonly clustered: ClusteredJetStream | null;
  /** Cluster metrics hooks (set by the server's metrics before start); read by every stream replica. */
  clusterObserver: ClusterObserver | undefined;
  /** Metrics hook: every API error answer, with its response type (`io.nats.jetstream.api.v1.…_response`). */
  apiErrorObserver: ((type: string, errCode: number) => void) | undefined;
  /** Stream replicas' consumer hooks, in the order the ConsumerService needs them (cluster only). */
  private readonly replicaConsumers: ReplicaConsumerHooks;
  private unsubscribeApi: Array<() => void> = [];
  private readonly mutations = new SerialQueue();
  private apiTotal = 0;
  private apiErrors = 0;
  private usageCheckedAtMs = 0;
  private fileOver = false;
  private memoryOver = false;

  constructor(
    readonly bus: MessageBus,
    readonly options: JetStreamServiceOptions,
    readonly log: JetStreamLogger,
  ) {
    this.consumers = new ConsumerService(this);
    this.replicaConsumers = new ReplicaConsumerHooks(this.consumers, log);
    this.streamApi = new StreamApi(this);
    this.clustered =
      options.cluster === undefined ? null : new ClusteredJetStream(this, { env: options.cluster, openReplica: this.replicaOpener(options.cluster) });
  }

  /** Monitoring and shutdown's view of clustered JetStream; null on a single node. */
  get cluster(): ClusteredJetStreamView | null {
    return this.clustered;
  }

  get domain(): string | undefined {
    return this.options.domain || undefined;
  }

  /** Loads every persisted stream (single node) or joins the meta group (cluster), then serves the API. */
  async start(): Promise<void> {
    if (this.clustered !== null) {
      this.subscribeApi();
      // Replicas open as the meta log is applied; until a meta leader exists the API answers 10008.
      this.clustered.start();
      return;
    }
    const records = await loadStreams(this.options.storeDir, (obj, msg) => this.log.warn(obj, msg));
    for (const rec of records) {
      try {
        const store = await this.openStore(rec.config, rec.dir);
        const stream = new Stream(this, rec.config, rec.created, rec.dir, store);
        await stream.start();
        this.table.set(rec.config.name, stream);
        this.subjectIndex = null;
        await this.consumers.streamAdded(stream);
      } catch (err) {
        this.log.error({ stream: rec.config.name, err: String(err) }, 'stream could not be loaded');
      }
    }
    this.log.info({ streams: this.table.size }, 'streams loaded');
    this.subscribeApi();
  }

  private subscribeApi(): void {
    const handler = (msg: BusMessage): void => this.onApiRequest(msg);
    this.unsubscribeApi.push(this.bus.subscribe('$JS.API.>', handler));
    if (this.domain) this.unsubscribeApi.push(this.bus.subscribe(`$JS.${this.domain}.API.>`, handler));
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribeApi.splice(0)) u();
    await this.mutations.idle();
    if (this.clustered !== null) {
      // Consumers first, while their streams' Raft groups can still take a last state proposal.
      await this.consumers.stop();
      await this.clustered.stop();
    }
    for (const s of this.table.values()) s.stop();
    await this.consumers.stop();
    for (const s of this.table.values()) {
      await s.store.flush().catch(() => undefined);
      await s.store.close().catch(() => undefined);
    }
    this.table.clear();
    this.subjectIndex = null;
  }

  // ---- JetStreamContext -------------------------------------------------------------------------

  stream(name: string): StreamHandle | undefined {
    return this.table.get(name);
  }

  streamByName(name: string): Stream | undefined {
    return this.table.get(name);
  }

  streams(): Iterable<StreamHandle> {
    return this.table.values();
  }

  respond(reply: string | null, type: string, body: object): void {
    if (reply === null) return;
    this.bus.publish(reply, null, null, Buffer.from(JSON.stringify({ type, ...body })));
  }

  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void {
    this.apiErrors++;
    this.apiErrorObserver?.(type, error.errCode);
    if (reply === null) return;
    this.bus.publish(reply, null, null, Buffer.from(JSON.stringify({ type, error: error.toJSON(), ...extra })));
  }

  advisory(subject: string, body: object): void {
    if (!this.bus.hasInterest(subject)) return;
    this.bus.publish(subject, null, null, Buffer.from(JSON.stringify(body)));
  }

  // ---- StreamHost ---------------------------------------------------------------------------------

  streamPurged(stream: Stream): void {
    this.consumers.streamPurged(stream);
  }

  hasConsumerInterest(stream: Stream, subject: string): boolean {
    return this.consumers.hasInterest(stream.name, subject);
  }

  storageExceeded(kind: 'file' | 'memory'): boolean {
    const limit = this.storageLimit(kind);
    if (limit < 0) return false;
    const now = Date.now();
    // Summing every stream per message would cost O(streams); a 50 ms old answer is close enough.
    if (now - this.usageCheckedAtMs > 50) {
      this.usageCheckedAtMs = now;
      let file = 0;
      let memory = 0;
      for (const s of this.table.values()) {
        if (s.config.storage === 'memory') memory += s.store.state().bytes;
        else file += s.store.state().bytes;
      }
      this.fileOver = this.options.maxFileStoreBytes >= 0 && file > this.options.maxFileStoreBytes;
      this.memoryOver = this.options.maxMemoryStoreBytes >= 0 && memory > this.options.maxMemoryStoreBytes;
    }
    return kind === 'memory' ? this.memoryOver : this.fileOver;
  }

  private storageLimit(kind: 'file' | 'memory'): number {
    return kind === 'memory' ? this.options.maxMemoryStoreBytes : this.options.maxFileStoreBytes;
  }

  /** nats-server's reservation check: the max_bytes of every stream of a kind must fit the server limit. */
  private checkReservation(cfg: StreamConfig): void {
    const limit = this.storageLimit(cfg.storage);
    if (limit < 0) return;
    let reserved = 0;
    for (const s of this.table.values()) {
      if (s.name !== cfg.name && s.config.storage === cfg.storage && s.config.max_bytes > 0) reserved += s.config.max_bytes;
    }
    if (reserved + Math.max(cfg.max_bytes, 1) > limit) {
      throw cfg.storage === 'memory' ? JsErrors.memoryResourcesExceeded() : JsErrors.storageResourcesExceeded();
    }
  }

  // ---- API dispatch -------------------------------------------------------------------------------

  private onApiRequest(msg: BusMessage): void {
    const all = msg.subject.split('.');
    // `$JS.API.…` or `$JS.<domain>.API.…`
    const tokens = all[1] === 'API' ? all.slice(2) : all.slice(3);
    if (tokens.length === 0) return;
    this.apiTotal++;
    let served = true;
    try {
      served = this.clustered !== null ? this.clustered.route(tokens, msg) : this.dispatchLocal(tokens, msg);
    } catch (err) {
      // Never let a handler's bug escape into the publisher's connection.
      this.log.error({ subject: msg.subject, err: String(err) }, 'jetstream api handler failed');
    }
    // Unknown subjects get no reply and are not counted; nor are pull requests and direct gets, which
    // nats-server serves from the consumer's / stream's own subscription, outside its API statistics.
    if (!served || isOutsideApiStats(tokens)) this.apiTotal--;
  }

  /** Serves a request from this node's own streams (alone: every request; cluster: those this node answers). */
  dispatchLocal(t: readonly string[], msg: BusMessage): boolean {
    const api = this.streamApi;
    const n = t.length;
    switch (t[0]) {
      case 'INFO':
        if (n !== 1) return false;
        void api.accountInfo(msg);
        return true;
      case 'CONSUMER':
        return this.consumers.handleApi(t, msg);
      case 'DIRECT': {
        if (n < 3 || t[1] !== 'GET') return false;
        const stream = this.table.get(t[2]!);
        if (stream === undefined || !stream.config.allow_direct) return false;
        directGet(this.bus, stream, t, msg).catch((err: unknown) =>
          this.log.warn({ err: String(err), stream: stream.name }, 'direct get failed'),
        );
        return true;
      }
      case 'STREAM':
        break;
      default:
        return false;
    }
    const op = t[1];
    if (n === 2) {
      if (op === 'NAMES') void api.names(msg);
      else if (op === 'LIST') void api.list(msg);
      else return false;
      return true;
    }
    if (n === 3) {
      const name = t[2]!;
      switch (op) {
        case 'CREATE':
          void api.create(name, msg);
          return true;
        case 'UPDATE':
          void api.update(name, msg);
          return true;
        case 'DELETE':
          void api.delete(name, msg);
          return true;
        case 'INFO':
          void api.streamInfo(name, msg);
          return true;
        case 'PURGE':
          void api.purge(name, msg);
          return true;
        default:
          return false;
      }
    }
    if (n === 4 && op === 'MSG') {
      if (t[2] === 'GET') void api.msgGet(t[3]!, msg);
      else if (t[2] === 'DELETE') void api.msgDelete(t[3]!, msg);
      else return false;
      return true;
    }
    if (n === 4 && op === 'LEADER' && t[2] === 'STEPDOWN') {
      void api.clusterOnly(ResponseType.streamStepdown, msg);
      return true;
    }
    if (n === 4 && op === 'PEER' && t[2] === 'REMOVE') {
      void api.clusterOnly(ResponseType.streamRemovePeer, msg);
      return true;
    }
    return false;
  }

  // ---- cluster ------------------------------------------------------------------------------------

  private replicaOpener(env: ClusterEnvironment): OpenReplica {
    const svc = this;
    // Replicas name their peers from this: nodes down since this node started are known from the catalogue.
    const replicaEnv: ClusterEnvironment = {
      get clusterName() {
        return env.clusterName;
      },
      self: env.self,
      peers: () => svc.clustered?.knownPeers() ?? env.peers(),
      onPeersChanged: (listener) => env.onPeersChanged(listener),
      expectedClusterSize: env.expectedClusterSize,
      raftStore: env.raftStore,
      transport: env.transport,
      ...(env.testKnobs !== undefined ? { testKnobs: env.testKnobs } : {}),
    };
    const host: StreamReplicaHost = {
      bus: this.bus,
      log: this.log,
      env: replicaEnv,
      get domain() {
        return svc.domain;
      },
      get observer() {
        return svc.clusterObserver;
      },
      streamPurged: (stream) => this.streamPurged(stream),
      storageExceeded: (kind) => this.storageExceeded(kind),
      hasConsumerInterest: (stream, subject) => this.hasConsumerInterest(stream, subject),
      leadershipChanged: (replica, leading) => this.replicaConsumers.leadershipChanged(replica, leading),
      applyConsumerEntry: (replica, payload) => this.replicaConsumers.applyConsumerEntry(replica, payload),
      snapshotConsumers: (replica) => this.replicaConsumers.snapshotConsumers(replica),
      restoreConsumers: (replica, data) => this.replicaConsumers.restoreConsumers(replica, data),
    };
    return (assignment, dir) => StreamReplica.open(host, assignment, dir);
  }

  /** StreamInfo's `cluster` block of a local replica (undefined on a single node). */
  clusterBlockOf(name: string): object | undefined {
    return this.clustered?.replicaSet.byStream(name)?.clusterInfo();
  }

  /** The replica leads and its consumers run: this node answers the stream's requests. */
  replicaServes(replica: LocalReplica): boolean {
    return replica.isLeader() && (!(replica instanceof StreamReplica) || this.replicaConsumers.leads(replica));
  }

  /** A replica opened: its stream serves local requests, its consumers start. */
  async replicaAdded(replica: LocalReplica): Promise<void> {
    this.table.set(replica.name, replica.stream);
    this.subjectIndex = null;
    if (replica instanceof StreamReplica) await this.replicaConsumers.added(replica);
  }

  /** A replica's stream config changed (UPDATE): its running consumers are told, as on a single node. */
  replicaConfigChanged(replica: LocalReplica): void {
    this.consumers.streamUpdated(replica.stream);
  }

  /** A replica is closing; `destroyed` when its stream leaves this node for good (consumers go too). */
  async replicaRemoving(replica: LocalReplica, destroyed: boolean): Promise<void> {
    if (this.table.get(replica.name) === replica.stream) this.table.delete(replica.name);
    this.subjectIndex = null;
    if (replica instanceof StreamReplica) await this.replicaConsumers.removing(replica);
    if (destroyed) await this.consumers.streamRemoved(replica.stream);
  }

  accountInfo(): object {
    let memory = 0;
    let storage = 0;
    let consumers = 0;
    for (const s of this.table.values()) {
      const bytes = s.store.state().bytes;
      if (s.config.storage === 'memory') memory += bytes;
      else storage += bytes;
      consumers += this.consumers.consumerCount(s.name);
    }
    return {
      memory,
      storage,
      reserved_memory: 0,
      reserved_storage: 0,
      streams: this.table.size,
      consumers,
      limits: {
        max_memory: -1,
        max_storage: -1,
        max_streams: -1,
        max_consumers: -1,
        max_ack_pending: -1,
        memory_max_stream_bytes: -1,
        storage_max_stream_bytes: -1,
        max_bytes_required: false,
      },
      ...(this.domain ? { domain: this.domain } : {}),
      api: { total: this.apiTotal, errors: this.apiErrors },
    };
  }

  // ---- stream lifecycle (serialised) ---------------------------------------------------------------

  /** Runs stream create/update/delete one at a time, so checks and changes do not interleave. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (this.mutations.pending >= MAX_PENDING_MUTATIONS) return Promise.reject(JsErrors.insufficientResources());
    return this.mutations.run(fn);
  }

  /** Checked against an index of every stream's subjects: the cost follows `cfg`'s subjects, not all pairs. */
  private overlapsOthers(cfg: StreamConfig): boolean {
    if (this.subjectIndex === null) {
      const index = new SubjectIndex();
      for (const s of this.table.values()) index.add(s.name, s.config.subjects);
      this.subjectIndex = index;
    }
    return this.subjectIndex.overlaps(cfg.subjects, cfg.name);
  }

  private async openStore(cfg: StreamConfig, dir: string): Promise<MessageStore> {
    const limits = storeLimitsOf(cfg);
    if (cfg.storage === 'memory') return new MemoryStore({ limits });
    return FileStore.open({ dir: messagesDir(dir), limits, sync: this.options.fileSync ?? 'always' });
  }

  /** Creates the stream, or returns the existing one when its config is identical (10058 otherwise). */
  createStream(cfg: StreamConfig): Promise<Stream> {
    return this.serial(async () => {
      const existing = this.table.get(cfg.name);
      if (existing !== undefined) {
        if (sameStreamConfig(existing.config, cfg)) return existing;
        throw JsErrors.streamNameInUse();
      }
      // The request was parsed and checked in this turn: let other clients in before the next long step.
      await yieldToIo();
      if (this.overlapsOthers(cfg)) throw JsErrors.subjectsOverlap();
      this.checkReservation(cfg);
      const dir = streamDir(this.options.storeDir, cfg.name);
      // A directory left by an interrupted delete must not leak old messages into the new stream.
      await removeStream(dir);
      const store = await this.openStore(cfg, dir);
      if (cfg.first_seq !== undefined && cfg.first_seq > 1) await store.skipMsgs(1, cfg.first_seq - 1);
      const created = formatTimeNs(nowNs());
      try {
        // Like standalone nats-server, memory streams are not recreated at start: no record for them
        // (their directory still holds consumer state while they live, and is cleared at start).
        if (cfg.storage === 'file') await saveStream(dir, { config: cfg, created });
        else await mkdir(dir, { recursive: true });
      } catch (err) {
        await store.close().catch(() => undefined);
        throw err;
      }
      const stream = new Stream(this, cfg, created, dir, store);
      await stream.start();
      this.table.set(cfg.name, stream);
      this.subjectIndex?.add(cfg.name, cfg.subjects); // a create only adds: no rebuild
      await this.consumers.streamAdded(stream);
      this.streamAdvisory('CREATED', cfg.name, 'create');
      return stream;
    });
  }

  updateStream(requested: StreamConfig): Promise<Stream> {
    return this.serial(async () => {
      const stream = this.table.get(requested.name);
      if (stream === undefined) throw JsErrors.streamNotFound();
      const next = checkStreamUpdate(stream.config, requested);
      if (next.num_replicas > 1) throw JsErrors.replicasNotSupported();
      if (this.overlapsOthers(next)) throw JsErrors.subjectsOverlap();
      if (next.max_bytes > stream.config.max_bytes) this.checkReservation(next);
      if (next.storage === 'file') await saveStream(stream.dir, { config: next, created: stream.created });
      await stream.updateConfig(next);
      this.subjectIndex = null;
      this.consumers.streamUpdated(stream);
      this.streamAdvisory('UPDATED', next.name, 'modify');
      return stream;
    });
  }

  deleteStream(name: string): Promise<void> {
    return this.serial(async () => {
      const stream = this.table.get(name);
      if (stream === undefined) throw JsErrors.streamNotFound();
      stream.stop();
      this.table.delete(name);
      this.subjectIndex = null;
      await this.consumers.streamRemoved(stream);
      await stream.store.close().catch(() => undefined);
      await removeStream(stream.dir);
      this.streamAdvisory('DELETED', name, 'delete');
    });
  }

  private streamAdvisory(kind: 'CREATED' | 'UPDATED' | 'DELETED', name: string, action: string): void {
    this.advisory(`$JS.EVENT.ADVISORY.STREAM.${kind}.${name}`, {
      type: 'io.nats.jetstream.advisory.v1.stream_action',
      id: randomBytes(11).toString('hex'),
      timestamp: formatTimeNs(nowNs()),
      stream: name,
      action,
      ...(this.domain ? { domain: this.domain } : {}),
    });
  }
}

function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isOutsideApiStats(tokens: string[]): boolean {
  return tokens[0] === 'DIRECT' || (tokens[0] === 'CONSUMER' && tokens[1] === 'MSG' && tokens[2] === 'NEXT');
}
