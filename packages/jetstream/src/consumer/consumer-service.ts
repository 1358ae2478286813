// Consumers of every stream: the `$JS.API.CONSUMER.*` endpoints, the consumer table, retention
// (workqueue / interest removal) and the consumers of a stream coming up. Where a stream's consumers keep
// their config and state, and when this node runs them, is its placement's (consumer-state-placement.ts):
// local files on a single node, the stream's Raft group in a cluster.
import { requiredConsumerLevel, staticMetadata, withLevelOf } from '../api/api-level.js';
import { pedanticConsumerError } from './consumer-pedantic.js';
import { followerConsumerInfo } from './follower-consumer-info.js';
import { KeyedSerialQueue } from '@flotilla/store';
import type { BusMessage } from '../message-bus.js';
import type { JetStreamContext } from '../jetstream-context.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import { ConsumerApi, type CreateRequest } from './consumer-api.js';
import { systemClock, type Clock } from './clock.js';
import {
  DEFAULT_EPHEMERAL_INACTIVE_NS,
  applyConsumerDefaults,
  checkConsumerConfig,
  checkConsumerName,
  configsEqual,
  consumerFilters,
  filtersWithinStream,
  updateRefusal,
} from './consumer-config.js';
import { consumerErrors as E } from './consumer-errors.js';
import type { ConsumerRunner, ConsumerStatePlacement, ConsumerStatePlacements, StoredConsumer } from './consumer-state-placement.js';
import { Consumer, type ConsumerHost } from './consumer.js';
import { randomId } from './random-id.js';
import { pauseResponse } from './consumer-pause.js';
import { settledWithin } from './settled-within.js';
import { subjectsCollide } from '@flotilla/protocol';

export { LEADERSHIP_START_WAIT_MS } from './consumer-state-placement.js';

interface StreamConsumers {
  stream: StreamHandle;
  /** The consumers running on this node (cluster: only while it leads the stream). */
  consumers: Map<string, Consumer>;
  unsubscribeStored: () => void;
  /** Where the stream's consumers live and whether this node runs them. */
  placement: ConsumerStatePlacement;
}

/** Interest retention scans at most this many messages per read when a consumer goes away. */
const INTEREST_SCAN_BATCH = 1024;

export class ConsumerService implements ConsumerHost {
  private readonly streams = new Map<string, StreamConsumers>();
  private readonly api: ConsumerApi;
  /**
   * Per stream, the tail of its create/delete/start work (see serial()): keyed by the stream's entry
   * (by name while it has none), so work stuck on a deleted incarnation never holds up the next one.
   */
  private readonly mutations = new KeyedSerialQueue<StreamConsumers | string>();

  /** `placements`: for streams added without a placement of their own (a single node's local files). */
  constructor(
    readonly ctx: JetStreamContext,
    readonly clock: Clock = systemClock,
    private readonly placements?: ConsumerStatePlacements,
  ) {
    this.api = new ConsumerApi(this);
  }

  /**
   * `$JS.API.CONSUMER.…` requests; `tokens` are the subject's tokens after `$JS.API` (e.g.
   * ['CONSUMER', 'CREATE', 'S', 'C']). Returns false for subjects it does not serve (no reply is sent).
   */
  handleApi(tokens: readonly string[], msg: BusMessage): boolean {
    return this.api.handle(tokens, msg);
  }

  /**
   * A stream was created, or loaded at start, or (cluster) joined its Raft group here: its consumers live
   * where `placement` keeps them (by default, the service's placements), which loads them and decides when
   * they run. Added again with another placement (a later incarnation of the name, a stream that moved into
   * a Raft group), the new one takes over.
   */
  async streamAdded(stream: StreamHandle, placement?: ConsumerStatePlacement): Promise<void> {
    const existing = this.streams.get(stream.name);
    if (existing !== undefined) {
      if (placement === undefined || placement === existing.placement) return;
      this.streams.delete(stream.name);
      existing.unsubscribeStored();
      await existing.placement.handOver();
    }
    const placed = placement ?? this.defaultPlacement(stream);
    const entry: StreamConsumers = { stream, consumers: new Map(), unsubscribeStored: () => undefined, placement: placed };
    this.streams.set(stream.name, entry);
    entry.unsubscribeStored = stream.onStored((seq, subject) => {
      placed.messageStored(seq);
      for (const c of entry.consumers.values()) c.onStored(seq, subject);
    });
    await placed.open(this.runnerOf(entry));
  }

  private defaultPlacement(stream: StreamHandle): ConsumerStatePlacement {
    // A wiring mistake (the composition root gives single-node services their placements), not a request's.
    if (this.placements === undefined) throw new Error(`no consumer state placement for stream ${stream.name}`);
    return this.placements.forStream(stream);
  }

  /** The placement the stream's consumers are registered under; undefined for a stream not added. */
  placementOf(streamName: string): ConsumerStatePlacement | undefined {
    return this.streams.get(streamName)?.placement;
  }

  /** The stream was updated (limits, retention or subjects may have changed). */
  streamUpdated(stream: StreamHandle): void {
    const entry = this.streams.get(stream.name);
    if (!entry || entry.stream !== stream) return;
    for (const c of entry.consumers.values()) c.kick();
  }

  /** Messages were purged or deleted (or, cluster, a snapshot replaced the store): consumers move their floors. */
  streamPurged(stream: StreamHandle): void {
    const entry = this.streams.get(stream.name);
    if (!entry || entry.stream !== stream) return;
    for (const c of entry.consumers.values()) c.onPurged();
    entry.placement.messagesRemoved();
  }

  /** The stream is being deleted: stop and remove its consumers (state included). */
  async streamRemoved(stream: StreamHandle): Promise<void> {
    const entry = this.streams.get(stream.name);
    // Another incarnation of the name registered meanwhile: it stays.
    if (!entry || entry.stream !== stream) return;
    this.streams.delete(stream.name);
    entry.unsubscribeStored();
    await entry.placement.streamDeleted();
  }

  /** Consumers stored for the stream, running here or not. */
  consumerCount(streamName: string): number {
    return this.streams.get(streamName)?.placement.consumerCount() ?? 0;
  }

  /**
   * True when this node serves the stream's consumer requests: its consumers run here (cluster: it leads the
   * stream and has started them; before that, INFO would wrongly say "consumer not found").
   */
  leads(streamName: string): boolean {
    return this.streams.get(streamName)?.placement.serving ?? true;
  }

  /** The stream's consumers may have num_replicas > 1, and LEADER.STEPDOWN moves them. */
  isReplicated(streamName: string): boolean {
    return this.streams.get(streamName)?.placement.acceptsReplicas === true;
  }

  /** `$JS.API.CONSUMER.LEADER.STEPDOWN.<S>.<C>`: the placement hands the consumers to another node. */
  async stepDown(streamName: string, name: string): Promise<void> {
    const entry = this.streams.get(streamName);
    if (!entry) throw E.streamNotFound();
    if (!entry.consumers.has(name) && !entry.placement.isStored(name)) throw E.notFound();
    await entry.placement.stepDown();
  }

  /**
   * Interest retention: true when some consumer of the stream would take a message on `subject`. With
   * none, nats-server does not store the message (the stream may skip it).
   */
  hasInterest(streamName: string, subject: string): boolean {
    const entry = this.streams.get(streamName);
    if (!entry) return false;
    const starting = entry.placement.interestWhileStarting(subject);
    if (starting !== undefined) return starting;
    for (const c of entry.consumers.values()) if (c.matches(subject)) return true;
    return false;
  }

  /** Stops timers and flushes consumer state. */
  async stop(): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const entry of this.streams.values()) {
      entry.unsubscribeStored();
      closing.push(entry.placement.close());
    }
    await Promise.all(closing);
    this.streams.clear();
  }

  /** The service's side of one stream, for its placement. */
  private runnerOf(entry: StreamConsumers): ConsumerRunner {
    return {
      startStored: (stored, current) => this.startStored(entry, stored, current),
      running: () => [...entry.consumers.values()],
      get runningCount() {
        return entry.consumers.size;
      },
      isRunning: (name) => entry.consumers.has(name),
      forgetAll: () => entry.consumers.clear(),
      inTurn: (fn, waitAtMostMs) => (waitAtMostMs === undefined ? this.serial(entry.stream.name, fn) : this.serial(entry.stream.name, waitAtMostMs, fn)),
    };
  }

  /** Makes the stored consumers, then starts them together (none once `current()` is false). */
  private async startStored(entry: StreamConsumers, stored: readonly StoredConsumer[], current: () => boolean): Promise<string[] | null> {
    if (this.streams.get(entry.stream.name) !== entry || !current()) return null;
    const started: Consumer[] = [];
    for (const s of stored) {
      try {
        const c = this.makeConsumer(entry, s.meta.name, s.meta.config, s.meta.created);
        await c.initPosition(s.state);
        if (!current()) return null;
        entry.consumers.set(c.name, c);
        started.push(c);
      } catch (err) {
        this.ctx.log.error({ stream: entry.stream.name, consumer: s.meta.name, err: String(err) }, 'consumer could not be started');
      }
    }
    for (const c of started) c.start();
    return started.map((c) => c.name);
  }

  // ---- used by the API ---------------------------------------------------------------------------

  consumer(streamName: string, name: string): Consumer | undefined {
    return this.streams.get(streamName)?.consumers.get(name);
  }

  consumersOf(streamName: string): Consumer[] {
    return [...(this.streams.get(streamName)?.consumers.values() ?? [])];
  }

  /**
   * ConsumerInfo of every consumer of the stream: the running ones' own; on a follower (nothing runs here),
   * from the replicated config and state this node applied (/jsz lists consumers on followers too).
   */
  consumerInfos(streamName: string): Array<Record<string, unknown>> {
    const entry = this.streams.get(streamName);
    if (entry === undefined) return [];
    if (entry.consumers.size > 0 || entry.placement.serving) return [...entry.consumers.values()].map((c) => c.info());
    const stored = entry.placement.storedConsumers?.() ?? [];
    const cluster = entry.placement.clusterInfo();
    return stored.sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0)).map((c) => followerConsumerInfo(entry.stream, c, cluster));
  }

  pullRequest(streamName: string, name: string, msg: BusMessage): void {
    // A pull on a missing stream or consumer gets no reply, as on nats-server.
    this.consumer(streamName, name)?.onPullRequest(msg.reply, msg.data, msg.header);
  }

  /** Creates or updates (nats-server's addConsumerWithAction); resolves with the ConsumerInfo body. */
  createConsumer(req: CreateRequest): Promise<Record<string, unknown>> {
    return this.serial(req.stream, async () => {
      const entry = this.streams.get(req.stream);
      if (!entry) throw E.streamNotFound();
      const stream = entry.stream;
      const config = req.config;
      const accountMaxAckPending = this.ctx.accountLimits?.maxAckPendingOf(stream.config) ?? -1;
      if (req.pedantic === true) {
        const refusal = pedanticConsumerError(config, stream.config);
        if (refusal !== null) throw refusal;
      }
      applyConsumerDefaults(config, stream.config, accountMaxAckPending);
      // setStaticConsumerMetadata: the stored metadata carries the level the config needs.
      config.metadata = staticMetadata(config.metadata, requiredConsumerLevel(config));
      const invalid = checkConsumerConfig(config, stream.config, accountMaxAckPending);
      if (invalid) throw invalid;
      if (!filtersWithinStream(config, stream.config)) throw E.filterNotSubset();

      const name = config.durable_name ?? config.name ?? '';
      const existing = name !== '' ? entry.consumers.get(name) : undefined;
      if (existing) {
        if (req.action === 'create' && !configsEqual(withLevelOf(config, existing.config), existing.config)) throw E.alreadyExists();
        if (stream.config.retention === 'workqueue' && !this.partitionUnique(entry, name, consumerFilters(config))) {
          throw E.wqNotUnique();
        }
        const refusal = updateRefusal(existing.config, config, existing.hasDeliveryInterest());
        if (refusal !== null) throw typeof refusal === 'string' ? E.createFailed(refusal) : refusal;
        if (!existing.isDurable && !config.inactive_threshold) config.inactive_threshold = DEFAULT_EPHEMERAL_INACTIVE_NS;
        existing.updateConfig(config);
        await existing.saveMeta();
        return existing.info();
      }
      if (req.action === 'update') throw E.doesNotExist();
      // The stream's max_consumers, or the account's when that is lower (nats-server: per stream, too).
      const max = this.ctx.accountLimits?.maxConsumersOf(stream.config) ?? stream.config.max_consumers;
      if (max > 0 && entry.consumers.size >= max) throw E.maxConsumers();
      if (stream.config.retention === 'workqueue') {
        if (config.ack_policy !== 'explicit') throw E.wqRequiresExplicitAck();
        if (entry.consumers.size > 0) {
          const filters = consumerFilters(config);
          if (filters.length === 0) throw E.wqMultipleUnfiltered();
          if (!this.partitionUnique(entry, name, filters)) throw E.wqNotUnique();
        }
        if (config.deliver_policy !== 'all') throw E.wqNotDeliverAll();
      }
      let finalName = name;
      if (config.durable_name) {
        const bad = checkConsumerName(config.durable_name);
        if (bad) throw bad;
      } else if (finalName === '') {
        // Legacy ephemeral without a name: 8 random characters, unique in this stream.
        for (let i = 0; i < 100 && (finalName === '' || entry.consumers.has(finalName)); i++) finalName = randomId(8);
        config.name = finalName;
      } else {
        const bad = checkConsumerName(finalName);
        if (bad) throw bad;
      }
      // Ephemerals always have an inactivity threshold (the config shows the default without jitter).
      if (!config.durable_name && !config.inactive_threshold) config.inactive_threshold = DEFAULT_EPHEMERAL_INACTIVE_NS;
      const created = new Date(this.clock.nowMs()).toISOString();
      const consumer = this.makeConsumer(entry, finalName, config, created);
      await entry.placement.storeNew(consumer);
      if (!this.streams.has(stream.name) || entry.consumers.has(finalName)) throw E.nameExists();
      entry.consumers.set(finalName, consumer);
      const info = consumer.info();
      // Deliveries start after the create response is on its way (the caller responds synchronously).
      queueMicrotask(() => consumer.start());
      this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.CREATED.${stream.name}.${finalName}`, {
        type: 'io.nats.jetstream.advisory.v1.consumer_action',
        id: randomId(22),
        timestamp: created,
        stream: stream.name,
        consumer: finalName,
        action: 'create',
        ...(this.ctx.options.domain ? { domain: this.ctx.options.domain } : {}),
      });
      return info;
    });
  }

  /**
   * `$JS.API.CONSUMER.PAUSE`: the consumer's config with `pauseUntil` (undefined resumes), stored as an
   * update is (cluster: the `meta` entry in the stream's Raft group, so a new leader stays paused).
   * Resolves with the response's fields.
   */
  pauseConsumer(streamName: string, name: string, pauseUntil: string | undefined): Promise<Record<string, unknown>> {
    return this.serial(streamName, async () => {
      const entry = this.streams.get(streamName);
      if (!entry) throw E.streamNotFound();
      const c = entry.consumers.get(name);
      if (!c) throw E.notFound();
      const next = { ...c.config };
      if (pauseUntil === undefined) delete next.pause_until;
      else next.pause_until = pauseUntil;
      next.metadata = staticMetadata(next.metadata, requiredConsumerLevel(next));
      c.updateConfig(next);
      await c.saveMeta();
      return pauseResponse(next.pause_until, this.clock.nowMs());
    });
  }

  deleteConsumer(streamName: string, name: string): Promise<void> {
    return this.serial(streamName, async () => {
      const entry = this.streams.get(streamName);
      if (!entry) throw E.streamNotFound();
      const c = entry.consumers.get(name);
      if (!c) throw E.notFound();
      await this.removeConsumer(entry, c);
    });
  }

  private async removeConsumer(entry: StreamConsumers, c: Consumer): Promise<void> {
    // A later leadership may have started its own consumer of this name meanwhile: that one stays.
    await entry.placement.remove(c, () => {
      if (entry.consumers.get(c.name) === c) entry.consumers.delete(c.name);
    });
    this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.DELETED.${entry.stream.name}.${c.name}`, {
      type: 'io.nats.jetstream.advisory.v1.consumer_action',
      id: randomId(22),
      timestamp: new Date(this.clock.nowMs()).toISOString(),
      stream: entry.stream.name,
      consumer: c.name,
      action: 'delete',
      ...(this.ctx.options.domain ? { domain: this.ctx.options.domain } : {}),
    });
    if (entry.stream.config.retention === 'interest') await this.dropUninterested(entry, c.state.asflr + 1);
  }

  /** After a consumer left an interest stream: remove messages no remaining consumer needs. */
  private async dropUninterested(entry: StreamConsumers, fromSeq: number): Promise<void> {
    const store = entry.stream.store;
    const last = store.state().last_seq;
    let seq = Math.max(fromSeq, store.state().first_seq);
    for (let guard = 0; guard < 1_000_000 && seq <= last; guard++) {
      const batch = await store.readRange(seq, INTEREST_SCAN_BATCH);
      if (batch.length === 0) break;
      // Removals of one batch go together (the store makes them durable in one group).
      const removals: Array<Promise<boolean>> = [];
      for (const m of batch) {
        if (m.seq > last) break;
        if (!this.someoneNeeds(entry, m.seq, m.subject, null)) removals.push(entry.stream.removeMessage(m.seq).catch(() => false));
      }
      await Promise.all(removals);
      if (batch[batch.length - 1]!.seq >= last) return;
      seq = batch[batch.length - 1]!.seq + 1;
    }
  }

  private partitionUnique(entry: StreamConsumers, name: string, filters: string[]): boolean {
    for (const other of entry.consumers.values()) {
      if (other.name === name) continue;
      if (other.filters.length === 0) return false;
      for (const f of filters) for (const g of other.filters) if (subjectsCollide(f, g)) return false;
    }
    return true;
  }

  private makeConsumer(entry: StreamConsumers, name: string, config: Consumer['config'], created: string): Consumer {
    let consumer: Consumer | null = null;
    const storage = entry.placement.storageFor(name, config, () => consumer!.state.snapshot());
    consumer = new Consumer(this, entry.stream, name, config, created, storage);
    return consumer;
  }

  // ---- ConsumerHost ---------------------------------------------------------------------------------

  clusterInfo(consumer: Consumer): object | undefined {
    return this.streams.get(consumer.stream.name)?.placement.clusterInfo();
  }

  settled(consumer: Consumer, seqs: readonly number[], subjects: ReadonlyMap<number, string>): void {
    const entry = this.streams.get(consumer.stream.name);
    if (!entry) return;
    const retention = entry.stream.config.retention;
    if (retention === 'limits') return;
    for (const seq of seqs) {
      if (retention === 'workqueue') {
        void entry.stream.removeMessage(seq).catch(() => false);
        continue;
      }
      const subject = subjects.get(seq);
      if (subject !== undefined) {
        if (!this.someoneNeeds(entry, seq, subject, consumer)) void entry.stream.removeMessage(seq).catch(() => false);
        continue;
      }
      // A rejection here (store error; cluster: the removal's proposal refused) must not go unhandled.
      void entry.stream.store
        .get(seq)
        .then((m) => {
          if (m && !this.someoneNeeds(entry, seq, m.subject, consumer)) return entry.stream.removeMessage(seq);
          return false;
        })
        .catch(() => false);
    }
  }

  async skippedForward(consumer: Consumer, fromSeq: number): Promise<void> {
    const entry = this.streams.get(consumer.stream.name);
    if (!entry || entry.consumers.get(consumer.name) !== consumer) return;
    if (entry.stream.config.retention === 'interest') await this.dropUninterested(entry, fromSeq);
  }

  inactive(consumer: Consumer): void {
    void this.serial(consumer.stream.name, async () => {
      const entry = this.streams.get(consumer.stream.name);
      if (!entry || entry.consumers.get(consumer.name) !== consumer) return;
      this.ctx.log.debug({ stream: consumer.stream.name, consumer: consumer.name }, 'consumer removed after inactivity');
      await this.removeConsumer(entry, consumer);
    }).catch((err: unknown) =>
      // Cluster: the removal could not be committed (leadership lost); the next leader's timer tries again.
      this.ctx.log.warn({ stream: consumer.stream.name, consumer: consumer.name, err: String(err) }, 'inactive consumer not removed'),
    );
  }

  private someoneNeeds(entry: StreamConsumers, seq: number, subject: string, except: Consumer | null): boolean {
    for (const c of entry.consumers.values()) {
      if (c !== except && c.needsAck(seq, subject)) return true;
    }
    return false;
  }

  /**
   * A stream's consumer create/delete (and its placement's work, such as a leadership's start) run one at a
   * time so name checks and table changes do not interleave. Per stream: one waiting on its Raft group does not hold up the others.
   */
  private serial<T>(streamName: string, fn: () => Promise<T>): Promise<T>;
  /** `waitAtMostMs`: runs after the earlier work, or after this long if that has not finished by then. */
  private serial<T>(streamName: string, waitAtMostMs: number, fn: () => Promise<T>): Promise<T>;
  private serial<T>(streamName: string, a: number | (() => Promise<T>), b?: () => Promise<T>): Promise<T> {
    const fn = typeof a === 'function' ? a : b!;
    const key = this.streams.get(streamName) ?? streamName;
    return this.mutations.run(key, fn, typeof a === 'number' ? (tail) => settledWithin(tail, a) : undefined);
  }
}

