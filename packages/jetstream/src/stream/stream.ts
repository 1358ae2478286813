// One stream on this node: its config, store, de-duplication window and subscriptions. Publishes on its
// subjects and API purges/deletes go to its StreamWriter (stream-writer.ts), which orders them, applies them
// through the methods below and answers; the stream itself does not know whether that writer is local or
// replicated.
import { bigNsToMs, msToBigNs, nsToMs, type MessageStore, type StoredMessage, type StoreLimits } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import type { BusMessage, JetStreamLogger, MessageBus } from '../message-bus.js';
import { DedupeWindow } from './dedupe-window.js';
import { DeleteMarkers } from './delete-markers.js';
import { CounterCache, type CounterBase } from './msg-counter.js';
import { MsgSchedules, SCHEDULE_NEXT_HEADER, SCHEDULER_HEADER } from './msg-schedule.js';
import { headerValue } from './msg-counter.js';
import { readPublishHeaders } from './publish-checks.js';
import type { PublishRulesView } from './publish-rules.js';
import type { StreamConfig } from './stream-config-types.js';
import type { StreamHandle } from './stream-handle.js';
import { apiErrorOfStore } from '../api/store-api-error.js';
import type { IngestResult, SourcedMessage, StreamMutation, StreamWriter, StreamWriterFactory } from './stream-writer.js';
import { ingestTransform } from './ingest-transform.js';
import { Republisher } from './republish.js';
import type { CompiledTransform } from '../topology/subject-transform.js';
import { StreamTopology } from '../topology/stream-topology.js';

/** What a stream needs from the service that owns it. */
export interface StreamHost {
  readonly bus: MessageBus;
  readonly log: JetStreamLogger;
  readonly domain: string | undefined;
  /** Messages left the stream other than by limits or consumers (purge, delete, rollup). */
  streamPurged(stream: Stream): void;
  /** True while this storage type is over the server's max_file_store / max_memory_store. */
  storageExceeded(kind: 'file' | 'memory'): boolean;
  /**
   * True when storing this message would take the stream's account over its limit; absent: no account limits.
   * `replicas`: the stream's replica count (in a cluster the message is stored once per replica).
   */
  accountLimitExceeded?(kind: 'file' | 'memory', subject: string, headerBytes: number, dataBytes: number, replicas: number): boolean;
  /** Interest retention: true when some consumer of `stream` would take a message on `subject`. */
  hasConsumerInterest(stream: Stream, subject: string): boolean;
}

/** What the API asks of a stream's messages: a publish (as if on its subjects), a purge or a delete. */
export type StreamEntry = { op: 'msg'; subject: string; header: Buffer | null; data: Buffer; reply: string | null } | StreamMutation;

/** A message at the sequence a sequencing writer assigned, as every copy applies it (cluster/stream-entry-codec.ts). */
export interface ReplicatedMsg {
  /** Sequence the leader assigned; a replica whose store already holds it skips the entry (replay). */
  seq: number;
  timestampNs: bigint;
  subject: string;
  header: Buffer | null;
  data: Buffer;
  /** Nats-Msg-Id, recorded in every replica's dedupe window. */
  msgId: string | undefined;
  rollup: 'sub' | 'all' | undefined;
  /** Interest retention with no interested consumer at the leader: consume the sequence, store nothing. */
  noInterest: boolean;
}

/** What applying a replicated message did: stored (or replayed) at `seq`, or refused by the store. */
export type ReplicatedMsgResult = { seq: number; error?: undefined } | { seq: 0; error: ApiError };

/** A purge as a replicated entry: `bound` is the last sequence it may remove, so a replay cannot touch later messages. */
export interface ReplicatedPurge {
  filter?: string;
  seq?: number;
  keep?: number;
  bound: number;
}

export function storeLimitsOf(cfg: StreamConfig): StoreLimits {
  return {
    maxMsgs: cfg.max_msgs,
    maxBytes: cfg.max_bytes,
    maxAgeNs: BigInt(cfg.max_age),
    maxMsgsPerSubject: cfg.max_msgs_per_subject,
    maxMsgSize: cfg.max_msg_size,
    discard: cfg.discard,
    discardNewPerSubject: cfg.discard_new_per_subject === true,
    msgTtl: cfg.allow_msg_ttl === true,
    expiryReports: (cfg.subject_delete_marker_ttl ?? 0) > 0,
  };
}

// Re-exported for the callers that take it from here (cluster/stream-replica-limits.ts); see api/store-api-error.ts.
export { apiErrorOfStore };

/** Messages read back per step when rebuilding the de-duplication window at load. */
const DEDUPE_SCAN_STEP = 1024;
/** At most this many messages are read back for the window (older ids are forgotten). */
const DEDUPE_SCAN_MAX_MSGS = 1_000_000;

export class Stream implements StreamHandle, PublishRulesView {
  private cfg: StreamConfig;
  private readonly unsubscribes: Array<() => void> = [];
  private readonly listeners = new Set<(seq: number, subject: string) => void>();
  private readonly dedupe: DedupeWindow;
  /** Nats-Msg-Id of the last message stored with one, and its sequence (lastMsgId is valid only if last). */
  private lastIdRecord: { id: string; seq: number } | null = null;
  private stopped = false;
  /** Subscribed to the subjects: while its writer accepts publishes here (a replicated stream's leader). */
  private serving = false;
  private readonly writer: StreamWriter;
  private readonly markers: DeleteMarkers;
  /** Its mirror or sources, run while it serves (topology/). */
  readonly topology: StreamTopology;
  /** A counter stream's last total per subject (msg-counter.ts). */
  readonly counters = new CounterCache();
  /** A schedule stream's schedules, fired while this node serves (msg-schedule.ts). */
  readonly schedules: MsgSchedules;
  /** `subject_transform`: what a publish or sourced message is stored under (ingest-transform.ts). */
  private ingestTr: CompiledTransform | null = null;
  /** `republish` (republish.ts), and per appended sequence the subject's sequence before it. */
  private republisher: Republisher | null = null;
  private readonly republishLastSeq = new Map<number, number>();
  private republishDue: Array<{ seq: number; lastSeq: number }> = [];
  private republishing = false;

  constructor(
    private readonly host: StreamHost,
    config: StreamConfig,
    readonly created: string,
    readonly dir: string,
    readonly store: MessageStore,
    writerFor: StreamWriterFactory,
  ) {
    this.cfg = config;
    this.dedupe = new DedupeWindow(nsToMs(config.duplicate_window));
    this.writer = writerFor(this);
    // Subject delete markers: the store reports what passed max_age or its TTL, the writer removes it.
    this.markers = new DeleteMarkers(this, () => this.writer, (err) =>
      host.log.error({ stream: config.name, err: String(err) }, 'expired message removal failed'),
    );
    store.onExpired(this.markers.expired);
    this.topology = new StreamTopology(this, host.bus, host.log);
    this.schedules = new MsgSchedules(store, (err) => host.log.error({ stream: config.name, err: String(err) }, 'message schedule failed'));
    this.topologyOfConfig(config);
  }

  /** The ingest transform and republisher of a (new) config. */
  private topologyOfConfig(cfg: StreamConfig): void {
    this.ingestTr = ingestTransform(cfg);
    this.republisher = cfg.republish === undefined ? null : new Republisher(cfg.name, cfg.republish, this.host.bus);
  }

  get name(): string {
    return this.cfg.name;
  }

  get config(): Readonly<StreamConfig> {
    return this.cfg;
  }

  // ---- PublishRulesView -------------------------------------------------------------------------

  get sealed(): boolean {
    return this.cfg.sealed;
  }
  get allowRollup(): boolean {
    return this.cfg.allow_rollup_hdrs;
  }
  get denyPurge(): boolean {
    return this.cfg.deny_purge;
  }
  get allowMsgTtl(): boolean {
    return this.cfg.allow_msg_ttl === true;
  }
  get allowMsgSchedules(): boolean {
    return this.cfg.allow_msg_schedules === true;
  }
  get subjects(): readonly string[] {
    return this.cfg.subjects;
  }
  get allowMsgCounter(): boolean {
    return this.cfg.allow_msg_counter === true;
  }
  counterBase(subject: string): CounterBase {
    return this.counters.base(subject, this.store.lastSeqForSubject(subject));
  }
  lastSeq(): number {
    return this.store.state().last_seq;
  }
  lastSeqForSubject(subject: string): number {
    return this.store.lastSeqForSubject(subject);
  }
  lastMsgId(): string {
    const rec = this.lastIdRecord;
    return rec !== null && rec.seq === this.lastSeq() ? rec.id : '';
  }
  duplicateOf(msgId: string): number | undefined {
    return this.dedupe.find(msgId);
  }
  storageExceeded(): boolean {
    return this.host.storageExceeded(this.cfg.storage);
  }
  accountLimitExceeded(subject: string, headerBytes: number, dataBytes: number): boolean {
    return this.host.accountLimitExceeded?.(this.cfg.storage, subject, headerBytes, dataBytes, this.cfg.num_replicas) ?? false;
  }
  hasInterest(subject: string): boolean {
    return this.host.hasConsumerInterest(this, subject);
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  /** Rebuilds the de-duplication window from stored messages and subscribes the subjects (unless `serving` is false). */
  async start(serving = true): Promise<void> {
    await this.rebuildDedupe();
    if (this.cfg.allow_msg_schedules === true) await this.schedules.rebuild();
    this.setServing(serving);
  }

  /** Unsubscribes; the store stays open (the owner closes it). */
  stop(): void {
    this.stopped = true;
    this.store.onExpired(null);
    this.serving = false;
    this.schedules.stop();
    this.topology.stop();
    for (const u of this.unsubscribes.splice(0)) u();
  }

  /** Stopped streams take no more publishes (one may still arrive from a subscription being removed). */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Replicated streams: only the leader subscribes the subjects (others get no-responders meanwhile). */
  setServing(serving: boolean): void {
    if (this.stopped || serving === this.serving) return;
    this.serving = serving;
    if (serving) {
      this.subscribe(this.cfg.subjects);
      // What fell due while another node (or nobody) acted is acted on now.
      this.store.onExpired(this.markers.expired);
      // The leader fires the schedules, each copy a publish through this stream's writer (no reply).
      // nats-server processes the copy as a sourced message: the schedule's headers are not checked again.
      this.schedules.start((copy) => this.writer.ingest({ subject: copy.subject, header: copy.header, data: copy.data }));
    } else {
      for (const u of this.unsubscribes.splice(0)) u();
      this.schedules.stop();
    }
    this.topology.setActive(serving);
  }

  get isServing(): boolean {
    return this.serving;
  }

  onStored(listener: (seq: number, subject: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  removeMessage(seq: number): Promise<boolean> {
    return this.writer.removeMessage(seq);
  }

  /** Applies an already validated new config (subjects, limits, window). */
  async updateConfig(next: StreamConfig): Promise<void> {
    const old = this.cfg;
    this.cfg = next;
    if (this.serving && JSON.stringify(old.subjects) !== JSON.stringify(next.subjects)) {
      for (const u of this.unsubscribes.splice(0)) u();
      this.subscribe(next.subjects);
    }
    if (old.duplicate_window !== next.duplicate_window) this.dedupe.setWindowMs(nsToMs(next.duplicate_window));
    await this.store.updateLimits(storeLimitsOf(next));
    if (JSON.stringify([old.mirror, old.sources]) !== JSON.stringify([next.mirror, next.sources])) this.topology.configChanged(next);
    this.topologyOfConfig(next);
  }

  /** A mirrored or sourced message, through the writer (topology/). */
  ingest(m: SourcedMessage): Promise<IngestResult> {
    const tr = this.ingestTr;
    if (tr !== null && m.seq === undefined) m = { ...m, subject: tr.apply(m.subject) ?? m.subject };
    return this.writer.ingest(m);
  }

  private subscribe(subjects: readonly string[]): void {
    for (const subject of subjects) {
      this.unsubscribes.push(
        this.host.bus.subscribe(subject, (msg: BusMessage) => {
          try {
            const tr = this.ingestTr;
            const stored = tr === null ? msg.subject : (tr.apply(msg.subject) ?? msg.subject);
            if (msg.trace === undefined) this.writer.publish(stored, msg.header, msg.data, msg.reply);
            else {
              msg.trace.took(this.name);
              this.writer.publish(stored, msg.header, msg.data, msg.reply, msg.trace);
            }
          } catch (err) {
            // A bug here must not break the publisher's connection.
            this.host.log.error({ stream: this.name, err: String(err) }, 'stream message handling failed');
          }
        }, undefined, { traced: true }),
      );
    }
  }

  // ---- API entries: through the writer ------------------------------------------------------------

  /** A publish is answered on its reply subject (resolves at once); a purge/delete resolves with its result. */
  propose(entry: StreamEntry): Promise<unknown> {
    if (entry.op !== 'msg') return this.writer.mutate(entry);
    this.writer.publish(entry.subject, entry.header, entry.data, entry.reply);
    return Promise.resolve(undefined);
  }

  // ---- state changes (called by the writer, in its order) -----------------------------------------

  /** Applies a purge or delete to the store now and tells the host; a publish goes to the writer. */
  apply(entry: StreamEntry): Promise<unknown> {
    switch (entry.op) {
      case 'msg':
        return this.propose(entry);
      case 'purge':
        return this.applyPurge(entry.filter, entry.seq, entry.keep);
      case 'delete':
        return this.applyDelete(entry.seq, entry.erase);
    }
  }

  /** A message with `msgId` took `seq` (stored or skipped): duplicates within the window answer with it. */
  recordMsgId(msgId: string, seq: number, atMs: number = Date.now()): void {
    this.dedupe.add(msgId, seq, atMs);
    this.lastIdRecord = { id: msgId, seq };
  }

  /** The writes from `seq` on failed and were rolled back (their sequences will be reused): forget their ids. */
  forgetMsgIdsFrom(seq: number): void {
    this.dedupe.forgetFrom(seq);
    if (this.lastIdRecord !== null && this.lastIdRecord.seq >= seq) this.lastIdRecord = null;
  }

  /** Every message is gone (whole purge replayed, store replaced): no id answers as a duplicate any more. */
  forgetMsgIds(): void {
    this.dedupe.clear();
    this.lastIdRecord = null;
  }

  /** A Nats-Rollup message was stored at `seq`: purge the older messages of its subject (`sub`) or all. */
  rollup(kind: 'sub' | 'all', subject: string, seq: number): void {
    const purged = kind === 'all' ? this.store.purge({ seq }) : this.store.purge({ filter: subject, seq });
    purged.then(
      (n) => n > 0 && this.host.streamPurged(this),
      (err: unknown) => this.host.log.error({ stream: this.name, err: String(err) }, 'rollup purge failed'),
    );
  }

  /**
   * A schedule stream stored a message (a replica: applied it): record a schedule, move one on after its copy,
   * and purge a one-off schedule whose copy this is (`Nats-Schedule-Next: purge`), on every replica alike.
   */
  scheduleStored(seq: number, subject: string, header: Uint8Array | null, timestampMs: number): void {
    if (header === null || header.length === 0) {
      this.schedules.stored(seq, subject, null, timestampMs);
      return;
    }
    this.schedules.stored(seq, subject, header, timestampMs);
    const next = headerValue(header, SCHEDULE_NEXT_HEADER);
    const scheduler = headerValue(header, SCHEDULER_HEADER);
    if (next === 'purge' && scheduler !== undefined && scheduler !== '') this.rollup('sub', scheduler, seq);
  }

  /** Republish: a message is about to be appended at `seq`; remembers the subject's sequence before it. */
  noteAppending(subject: string, seq: number): void {
    if (this.republisher === null) return;
    // Bounded: entries of messages that never got stored (a failed write) are dropped wholesale.
    if (this.republishLastSeq.size > 100_000) this.republishLastSeq.clear();
    this.republishLastSeq.set(seq, this.store.lastSeqForSubject(subject));
  }

  /** The message at `seq` is stored for good (durable, or committed): consumers may deliver it. */
  announceStored(seq: number, subject: string): void {
    if (this.republisher !== null) this.republishStored(seq);
    for (const l of this.listeners) {
      try {
        l(seq, subject);
      } catch (err) {
        this.host.log.error({ stream: this.name, err: String(err) }, 'onStored listener failed');
      }
    }
  }

  /** Only the serving node (the leader) republishes, in sequence order: announced ones are read in runs. */
  private republishStored(seq: number): void {
    const lastSeq = this.republishLastSeq.get(seq) ?? 0;
    this.republishLastSeq.delete(seq);
    if (!this.serving) return;
    this.republishDue.push({ seq, lastSeq });
    if (!this.republishing) void this.drainRepublish();
  }

  private async drainRepublish(): Promise<void> {
    this.republishing = true;
    try {
      while (this.republishDue.length > 0 && this.republisher !== null) {
        const due = this.republishDue.splice(0, 1024);
        const first = due[0]!.seq;
        const span = due[due.length - 1]!.seq - first + 1;
        // One read per run of sequences (announced in order); removed meanwhile means nothing to republish.
        const msgs = span <= 4 * due.length ? await this.store.readRange(first, span) : await Promise.all(due.map((d) => this.store.get(d.seq)));
        const bySeq = new Map<number, StoredMessage>();
        for (const m of msgs) if (m !== null) bySeq.set(m.seq, m);
        const r = this.republisher;
        for (const d of due) {
          const m = bySeq.get(d.seq);
          if (m !== undefined && r !== null) r.republish(m, d.lastSeq);
        }
      }
    } catch (err) {
      this.host.log.error({ stream: this.name, err: String(err) }, 'republish failed');
    } finally {
      this.republishing = false;
    }
  }

  /** The store's content was replaced (snapshot install): rebuild what derives from it. */
  async storeReplaced(): Promise<void> {
    this.forgetMsgIds();
    await this.rebuildDedupe();
    this.counters.clear();
    if (this.cfg.allow_msg_schedules === true) await this.schedules.rebuild();
    this.host.streamPurged(this);
  }

  private async applyPurge(filter: string | undefined, seq: number | undefined, keep: number | undefined): Promise<number> {
    const opts: { filter?: string; seq?: number; keep?: number } = {};
    if (filter !== undefined && filter !== '') opts.filter = filter;
    if (seq !== undefined && seq > 0) opts.seq = seq;
    if (keep !== undefined && keep > 0) opts.keep = keep;
    const purged = await this.store.purge(opts);
    if (opts.filter === undefined && opts.seq === undefined && opts.keep === undefined) this.dedupe.clear();
    this.host.streamPurged(this);
    return purged;
  }

  private async applyDelete(seq: number, erase: boolean): Promise<boolean> {
    const removed = await this.store.delete(seq, { erase });
    if (removed) this.host.streamPurged(this);
    return removed;
  }

  // ---- load -------------------------------------------------------------------------------------

  /** nats-server rebuilds its dedupe map from the messages still inside the window. */
  private async rebuildDedupe(): Promise<void> {
    const windowNs = BigInt(this.cfg.duplicate_window);
    const st = this.store.state();
    if (st.messages === 0) return;
    const cutoffNs = msToBigNs(Date.now()) - windowNs;
    const found: Array<{ id: string; seq: number; atMs: number }> = [];
    let end = st.last_seq;
    let scanned = 0;
    let lastSeen = false;
    while (end >= st.first_seq && scanned < DEDUPE_SCAN_MAX_MSGS) {
      const start = Math.max(st.first_seq, end - DEDUPE_SCAN_STEP + 1);
      const msgs = await this.store.readRange(start, end - start + 1);
      scanned += end - start + 1;
      let older = false;
      for (let i = msgs.length - 1; i >= 0; i--) {
        const m = msgs[i]!;
        const id = m.header.length > 0 ? readPublishHeaders(m.header)?.msgId : undefined;
        if (!lastSeen) {
          lastSeen = true;
          if (id) this.lastIdRecord = { id, seq: m.seq };
        }
        if (m.timestampNs < cutoffNs) {
          older = true;
          break;
        }
        if (id) found.push({ id, seq: m.seq, atMs: bigNsToMs(m.timestampNs) });
      }
      if (older || windowNs <= 0n) break;
      end = start - 1;
    }
    for (let i = found.length - 1; i >= 0; i--) this.dedupe.add(found[i]!.id, found[i]!.seq, found[i]!.atMs);
  }
}
