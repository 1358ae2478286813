// Consumers of every stream: the `$JS.API.CONSUMER.*` endpoints, the consumer table, retention
// (workqueue / interest removal) and loading persisted consumers when a stream comes up.
//
// Cluster mode (per stream, `replicaAdded` instead of `streamAdded`): a replicated stream's consumers run
// on the stream's leader only, and their config and state travel through the stream's Raft group as
// consumer entries (`cluster/consumer-replication-*.ts`). Every replica applies them (`applyConsumerEntry`);
// a node that becomes leader starts the consumers from what it applied, one that stops leading releases them.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
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
import { FileConsumerStorage, MemoryConsumerStorage, readConsumerFiles, type ConsumerStorage } from './consumer-storage.js';
import { Consumer, type ConsumerHost } from './consumer.js';
import { randomId } from './random-id.js';
import { settledWithin } from './settled-within.js';
import { subjectsCollide } from '@flotilla/protocol';
import * as S from './status-headers.js';
import { AppliedConsumers } from '../cluster/consumer-replication-state.js';
import { encodeConsumerEntry } from '../cluster/consumer-replication-entry.js';
import { StreamConsumerReplication } from '../cluster/consumer-replication-stream.js';
import { ReplicatedConsumerStorage, type ConsumerReplicationGroup } from '../cluster/consumer-replication-storage.js';

interface StreamConsumers {
  stream: StreamHandle;
  /** The running consumers (cluster: only while this node leads the stream). */
  consumers: Map<string, Consumer>;
  unsubscribeStored: () => void;
  /** Cluster mode: the stream's replication; null on a single node. */
  replica: StreamConsumerReplication | null;
}

/**
 * What identifies a stream replica in the stream group's hooks (StreamReplica has both). `stream`, when
 * given, must be the registered one: a stream deleted and created again under the same name is another
 * replica, and the old one's late hooks must not touch the new one's consumers.
 */
export interface ReplicaRef {
  readonly name: string;
  readonly stream?: StreamHandle;
}

/** Interest retention scans at most this many messages per read when a consumer goes away. */
const INTEREST_SCAN_BATCH = 1024;
/**
 * A new leader waits this long at most for the stream's earlier consumer work (an earlier leadership's create,
 * delete or resync, which may wait on a commit that never comes) before it starts its consumers anyway.
 */
export const LEADERSHIP_START_WAIT_MS = 1_000;

export class ConsumerService implements ConsumerHost {
  private readonly streams = new Map<string, StreamConsumers>();
  private readonly api: ConsumerApi;
  /**
   * Per stream, the tail of its create/delete/leadership work (see serial()): keyed by the stream's entry
   * (by name while it has none), so work stuck on a deleted incarnation never holds up the next one.
   */
  private readonly mutations = new KeyedSerialQueue<StreamConsumers | string>();

  constructor(
    readonly ctx: JetStreamContext,
    readonly clock: Clock = systemClock,
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

  /** A stream was created, or loaded at start: load its persisted consumers and start them. */
  async streamAdded(stream: StreamHandle): Promise<void> {
    if (this.streams.has(stream.name)) return;
    const entry: StreamConsumers = { stream, consumers: new Map(), unsubscribeStored: () => undefined, replica: null };
    this.streams.set(stream.name, entry);
    entry.unsubscribeStored = stream.onStored((seq, subject) => {
      for (const c of entry.consumers.values()) c.onStored(seq, subject);
    });
    if (stream.config.storage !== 'file') return;
    const base = join(stream.dir, 'consumers');
    let names: string[] = [];
    try {
      names = await readdir(base);
    } catch {
      return;
    }
    for (const dirName of names) {
      const files = await readConsumerFiles(join(base, dirName));
      if (files === null) continue;
      try {
        const c = this.makeConsumer(stream, files.meta.name, files.meta.config, files.meta.created);
        await c.initPosition(files.state);
        entry.consumers.set(c.name, c);
        c.start();
      } catch (err) {
        this.ctx.log.error({ stream: stream.name, consumer: dirName, err: String(err) }, 'consumer could not be loaded');
      }
    }
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
    entry.replica?.purged();
  }

  /** The stream is being deleted: stop and remove its consumers (state included). */
  async streamRemoved(stream: StreamHandle): Promise<void> {
    const entry = this.streams.get(stream.name);
    // Another incarnation of the name registered meanwhile: it stays.
    if (!entry || entry.stream !== stream) return;
    this.streams.delete(stream.name);
    entry.unsubscribeStored();
    if (entry.replica !== null) {
      // The group goes away with the stream: nothing more is proposed; local files go with the stream dir.
      entry.replica.close();
      for (const c of entry.consumers.values()) c.release(S.CONSUMER_DELETED);
      entry.consumers.clear();
      await entry.replica.applied.drop();
      return;
    }
    for (const c of entry.consumers.values()) await c.close(true);
    entry.consumers.clear();
  }

  consumerCount(streamName: string): number {
    const entry = this.streams.get(streamName);
    if (!entry) return 0;
    return entry.replica !== null ? entry.replica.applied.size : entry.consumers.size;
  }

  // ---- cluster mode ------------------------------------------------------------------------------

  /**
   * Cluster: `stream` is replicated through `group` on this node (call it instead of streamAdded, before
   * the group applies entries or reports leadership). Loads what this node stored before; consumers start
   * only with leadershipChanged(true).
   */
  async replicaAdded(stream: StreamHandle, group: ConsumerReplicationGroup): Promise<void> {
    const existing = this.streams.get(stream.name);
    if (existing?.replica && existing.stream === stream) return;
    if (existing?.replica) {
      // A replica of an earlier incarnation of this name (deleted, then created again) is still registered:
      // keeping it would send the new stream's consumer entries to the old, stopped group (10008 forever).
      this.ctx.log.warn({ stream: stream.name }, 'consumers of an earlier replica of this stream replaced');
      this.streams.delete(stream.name);
      existing.unsubscribeStored();
      existing.replica.close();
      for (const c of existing.consumers.values()) c.release(S.LEADERSHIP_CHANGE);
      existing.consumers.clear();
      // Its files live in its own replica directory, which goes with it.
      await existing.replica.applied.close();
    } else if (existing) {
      // Added as a single-node stream first: its consumers must not run on a follower.
      for (const c of existing.consumers.values()) await c.close(false);
      existing.consumers.clear();
      existing.unsubscribeStored();
      this.streams.delete(stream.name);
    }
    const replica = new StreamConsumerReplication(group, stream, this.ctx, () => this.clock.nowMs());
    const entry: StreamConsumers = { stream, consumers: new Map(), unsubscribeStored: () => undefined, replica };
    this.streams.set(stream.name, entry);
    entry.unsubscribeStored = stream.onStored((seq, subject) => {
      replica.stored(seq);
      for (const c of entry.consumers.values()) c.onStored(seq, subject);
    });
    await replica.open();
  }

  /** Cluster: a consumer entry committed in the stream's group, applied on every replica (leader too). */
  applyConsumerEntry(replica: ReplicaRef, payload: Uint8Array): void {
    const entry = this.replicated(replica);
    if (!entry?.replica) {
      this.ctx.log.warn({ stream: replica.name }, 'consumer entry for a stream without a replica here: ignored');
      return;
    }
    if (!entry.replica.applied.applyPayload(payload)) {
      this.ctx.log.warn({ stream: replica.name, bytes: payload.length }, 'malformed consumer entry ignored');
    }
  }

  /** Cluster: consumer state for the stream group's snapshot. */
  consumerSnapshot(replica: ReplicaRef): Buffer {
    const applied = this.replicated(replica)?.replica?.applied;
    return applied ? applied.snapshot() : new AppliedConsumers(null, () => undefined).snapshot();
  }

  /** Cluster: a snapshot installed on this (follower) replica replaces its consumer state. */
  restoreConsumerSnapshot(replica: ReplicaRef, data: Uint8Array): void {
    this.replicated(replica)?.replica?.applied.restore(data);
  }

  /**
   * Cluster: this node became (true) or stopped being (false) the stream's leader. Leading starts every
   * consumer from the applied config and state (pending messages are redelivered after ack_wait with their
   * delivery count + 1); losing it answers waiting pulls with 409 Leadership Change and drops the
   * consumers' subscriptions so the new leader's take over.
   */
  async leadershipChanged(replica: ReplicaRef, leading: boolean): Promise<void> {
    const entry = this.replicated(replica);
    const rep = entry?.replica;
    if (!entry || !rep) return;
    if (!leading) {
      rep.lost();
      for (const c of entry.consumers.values()) c.release(S.LEADERSHIP_CHANGE);
      entry.consumers.clear();
      return;
    }
    if (rep.leading) return;
    const epoch = rep.gained();
    // Work still queued belongs to an earlier leadership (nothing of this one can run before its consumers
    // start): it is waited for, bounded, and checks the epoch itself when it goes on.
    await this.serial(entry.stream.name, LEADERSHIP_START_WAIT_MS, async () => {
      if (rep.epoch !== epoch || this.streams.get(entry.stream.name) !== entry) return;
      const started: Consumer[] = [];
      for (const a of rep.applied.all()) {
        try {
          const c = this.makeConsumer(entry.stream, a.meta.name, a.meta.config, a.meta.created, rep.group);
          await c.initPosition(a.state);
          if (rep.epoch !== epoch) return;
          entry.consumers.set(c.name, c);
          started.push(c);
        } catch (err) {
          this.ctx.log.error({ stream: entry.stream.name, consumer: a.meta.name, err: String(err) }, 'consumer could not be started');
        }
      }
      for (const c of started) c.start();
      // Requests that went to the old leader (or came while these consumers started): pull again.
      const replies = rep.started(
        started.map((c) => c.name),
        () => this.proposeSync(entry, epoch),
      );
      for (const reply of replies) {
        if (this.ctx.bus.hasInterest(reply)) this.ctx.bus.publish(reply, null, S.LEADERSHIP_CHANGE, EMPTY);
      }
    });
  }

  /** The registered entry of `replica`'s stream; undefined when another replica (incarnation) is registered. */
  private replicated(replica: ReplicaRef): StreamConsumers | undefined {
    const entry = this.streams.get(replica.name);
    if (entry === undefined || (replica.stream !== undefined && replica.stream !== entry.stream)) return undefined;
    return entry;
  }

  /** Leader: every consumer's config and state in one `sync` entry (a caught-up replica asked for it). */
  private proposeSync(entry: StreamConsumers, epoch: number): Promise<void> {
    return this.serial(entry.stream.name, async () => {
      const rep = entry.replica;
      if (rep === null || rep.epoch !== epoch || !rep.loaded) throw new Error('not leading');
      const consumers = [...entry.consumers.values()].map((c) => ({ meta: c.meta(), state: c.state.snapshot() }));
      await rep.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'sync', consumers }));
    });
  }

  /**
   * Cluster: true when this node serves the stream's consumer requests (always on a single node): it leads
   * the stream and its consumers are started (before that, INFO would wrongly say "consumer not found").
   */
  leads(streamName: string): boolean {
    const entry = this.streams.get(streamName);
    return entry?.replica ? entry.replica.serving : true;
  }

  /** Cluster: the stream is replicated here. */
  isReplicated(streamName: string): boolean {
    return this.streams.get(streamName)?.replica != null;
  }

  /** `$JS.API.CONSUMER.LEADER.STEPDOWN.<S>.<C>`: our consumer leader is the stream leader, so it steps down. */
  async stepDown(streamName: string, name: string): Promise<void> {
    const entry = this.streams.get(streamName);
    if (!entry) throw E.streamNotFound();
    if (!entry.consumers.has(name) && !entry.replica?.applied.get(name)) throw E.notFound();
    await entry.replica?.group.stepDown();
  }

  /**
   * Interest retention: true when some consumer of the stream would take a message on `subject`. With
   * none, nats-server does not store the message (the stream may skip it).
   */
  hasInterest(streamName: string, subject: string): boolean {
    const entry = this.streams.get(streamName);
    if (!entry) return false;
    // A new leader whose consumers are still starting: their replicated filters decide.
    if (entry.replica !== null && !entry.replica.loaded) return entry.replica.appliedInterest(subject);
    for (const c of entry.consumers.values()) if (c.matches(subject)) return true;
    return false;
  }

  /** Stops timers and flushes consumer state. */
  async stop(): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const entry of this.streams.values()) {
      entry.unsubscribeStored();
      if (entry.replica !== null) {
        entry.replica.close();
        // In parallel: each gets a bounded last proposal, and the replica's files their last write.
        closing.push(Promise.all([...entry.consumers.values()].map((c) => c.close(false))).then(() => entry.replica!.applied.close()));
        continue;
      }
      for (const c of entry.consumers.values()) await c.close(false);
    }
    await Promise.all(closing);
    this.streams.clear();
  }

  // ---- used by the API ---------------------------------------------------------------------------

  consumer(streamName: string, name: string): Consumer | undefined {
    return this.streams.get(streamName)?.consumers.get(name);
  }

  consumersOf(streamName: string): Consumer[] {
    return [...(this.streams.get(streamName)?.consumers.values() ?? [])];
  }

  pullRequest(streamName: string, name: string, msg: BusMessage): void {
    // A pull on a missing stream or consumer gets no reply, as on nats-server.
    this.consumer(streamName, name)?.onPullRequest(msg.reply, msg.data);
  }

  /** Creates or updates (nats-server's addConsumerWithAction); resolves with the ConsumerInfo body. */
  createConsumer(req: CreateRequest): Promise<Record<string, unknown>> {
    return this.serial(req.stream, async () => {
      const entry = this.streams.get(req.stream);
      if (!entry) throw E.streamNotFound();
      const stream = entry.stream;
      const config = req.config;
      applyConsumerDefaults(config, stream.config);
      const invalid = checkConsumerConfig(config, stream.config);
      if (invalid) throw invalid;
      if (!filtersWithinStream(config, stream.config)) throw E.filterNotSubset();

      const name = config.durable_name ?? config.name ?? '';
      const existing = name !== '' ? entry.consumers.get(name) : undefined;
      if (existing) {
        if (req.action === 'create' && !configsEqual(config, existing.config)) throw E.alreadyExists();
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
      const max = stream.config.max_consumers;
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
      const rep = entry.replica;
      const consumer = this.makeConsumer(stream, finalName, config, created, rep?.group ?? null);
      if (rep === null) {
        await consumer.saveMeta();
        await consumer.initPosition(null);
      } else {
        // Config, then the start position, committed in the stream group before the create is answered.
        const epoch = rep.epoch;
        try {
          await consumer.initPosition(null);
          await consumer.saveMeta();
          await consumer.persistState();
        } catch (err) {
          consumer.release(S.LEADERSHIP_CHANGE);
          throw err;
        }
        if (rep.epoch !== epoch || !rep.leading) {
          consumer.release(S.LEADERSHIP_CHANGE);
          throw E.createFailed('stream leadership changed');
        }
      }
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
    if (entry.replica !== null) {
      // Committed first: if it cannot be (leadership lost), the consumer stays as it is everywhere.
      await entry.replica.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'remove', name: c.name }));
      // A later leadership may have started its own consumer of this name meanwhile: that one stays.
      if (entry.consumers.get(c.name) === c) entry.consumers.delete(c.name);
      c.release(S.CONSUMER_DELETED);
    } else {
      entry.consumers.delete(c.name);
      await c.close(true);
    }
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

  private makeConsumer(
    stream: StreamHandle,
    name: string,
    config: Consumer['config'],
    created: string,
    group: ConsumerReplicationGroup | null = null,
  ): Consumer {
    let consumer: Consumer | null = null;
    const onError = (err: unknown): void =>
      this.ctx.log.warn({ stream: stream.name, consumer: name, err: String(err) }, 'consumer state not replicated yet');
    const storage: ConsumerStorage =
      group !== null
        ? new ReplicatedConsumerStorage(group, name, () => consumer!.state.snapshot(), onError)
        : stream.config.storage === 'file' && !config.mem_storage
        ? new FileConsumerStorage(
            join(stream.dir, 'consumers', name),
            () => consumer!.state.snapshot(),
            (err) => this.ctx.log.error({ stream: stream.name, consumer: name, err: String(err) }, 'consumer state write failed'),
          )
        : new MemoryConsumerStorage();
    consumer = new Consumer(this, stream, name, config, created, storage);
    return consumer;
  }

  // ---- ConsumerHost ---------------------------------------------------------------------------------

  clusterInfo(consumer: Consumer): object | undefined {
    return this.streams.get(consumer.stream.name)?.replica?.group.clusterInfo();
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
   * A stream's consumer create/delete (and, cluster, leadership start) run one at a time so name checks and
   * table changes do not interleave. Per stream: one waiting on its Raft group does not hold up the others.
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

const EMPTY = new Uint8Array(0);
