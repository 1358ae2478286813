// One stream on this node: subscribes its subjects, runs the publish checks, stores, and acknowledges
// once the store made the message durable. Every state change goes propose(entry) → apply(entry): on a
// single node propose applies at once; a replicated stream (cluster/stream-replica.ts) proposes through its
// Raft group and applies each committed entry, on every replica, in log order.
import { bigNsToMs, msToBigNs, nsToMs, STORE_ERROR_API, STORE_ERROR_TEXT, StoreError, type MessageStore, type StoreLimits } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import type { BusMessage, JetStreamLogger, MessageBus } from '../message-bus.js';
import { DedupeWindow } from './dedupe-window.js';
import { DurableQueue, type DurableSink } from './durable-queue.js';
import { PubAckEncoder } from './pub-ack.js';
import { readPublishHeaders, screenPublish, type PublishView } from './publish-checks.js';
import type { StreamConfig } from './stream-config-types.js';
import type { StreamHandle } from './stream-handle.js';
import { publicErrorText } from '../api/error-text.js';

/** What a stream needs from the service that owns it. */
export interface StreamHost {
  readonly bus: MessageBus;
  readonly log: JetStreamLogger;
  readonly domain: string | undefined;
  /** Messages left the stream other than by limits or consumers (purge, delete, rollup). */
  streamPurged(stream: Stream): void;
  /** True while this storage type is over the server's max_file_store / max_memory_store. */
  storageExceeded(kind: 'file' | 'memory'): boolean;
  /** Interest retention: true when some consumer of `stream` would take a message on `subject`. */
  hasConsumerInterest(stream: Stream, subject: string): boolean;
}

/**
 * The log entries a stream applies. A replica applying a committed entry passes `reply: null` (only the
 * leader answers) and the leader's `timestampNs`, so every replica stores the same message.
 */
export type StreamEntry =
  | { op: 'msg'; subject: string; header: Buffer | null; data: Buffer; reply: string | null; timestampNs?: bigint }
  | { op: 'purge'; filter?: string; seq?: number; keep?: number }
  | { op: 'delete'; seq: number; erase: boolean };

/** A replicated stream's message entry as every replica applies it (see cluster/stream-entry-codec.ts). */
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

/**
 * How a replicated stream routes publishes and mutations through its Raft group (set by
 * cluster/stream-replica.ts). Without one, the stream applies at once (R1).
 */
export interface StreamProposer {
  /** A message arrived on a stream subject (only while serving, i.e. on the leader). */
  publish(msg: BusMessage): void;
  /** An API mutation (purge, delete); resolves with the applied result once committed. */
  propose(entry: StreamEntry): Promise<unknown>;
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
  };
}

/** A StoreError as the API error a publisher or API caller sees. */
export function apiErrorOfStore(err: unknown): ApiError {
  if (err instanceof StoreError) {
    const api = STORE_ERROR_API[err.code];
    if (err.code === 'MAX_MSG_SIZE') return JsErrors.messageSizeExceeds();
    if (api !== undefined && api.errCode === 10077) return JsErrors.storeFailed(STORE_ERROR_TEXT[err.code]);
    if (err.code === 'NOT_FOUND') return JsErrors.noMessageFound();
  }
  return JsErrors.storeFailed(publicErrorText(err));
}

/** Messages read back per step when rebuilding the de-duplication window at load. */
const DEDUPE_SCAN_STEP = 1024;
/** At most this many messages are read back for the window (older ids are forgotten). */
const DEDUPE_SCAN_MAX_MSGS = 1_000_000;

export class Stream implements StreamHandle, PublishView {
  private cfg: StreamConfig;
  private readonly unsubscribes: Array<() => void> = [];
  private readonly listeners = new Set<(seq: number, subject: string) => void>();
  private readonly dedupe: DedupeWindow;
  private readonly acks: PubAckEncoder;
  /** Stored messages waiting for durability before their ack and onStored (in sequence order). */
  private readonly pending: DurableQueue;
  /** Nats-Msg-Id of the last message stored with one, and its sequence (lastMsgId is valid only if last). */
  private lastIdRecord: { id: string; seq: number } | null = null;
  /** Dedupe ids from this sequence on were dropped after a failed write (a run of failures drops once). */
  private dedupeForgottenFrom = Infinity;
  private stopped = false;
  /** Subscribed to the subjects: always for R1, only on the leader of a replicated stream. */
  private serving = false;
  private proposer: StreamProposer | null = null;

  constructor(
    private readonly host: StreamHost,
    config: StreamConfig,
    readonly created: string,
    readonly dir: string,
    readonly store: MessageStore,
  ) {
    this.cfg = config;
    this.dedupe = new DedupeWindow(nsToMs(config.duplicate_window));
    this.acks = new PubAckEncoder(config.name, host.domain);
    const sink: DurableSink = {
      stored: (seq, subject, reply) => this.stored(seq, subject, reply),
      failed: (seq, reply, err) => this.failed(seq, reply, err),
    };
    this.pending = new DurableQueue(sink);
  }

  get name(): string {
    return this.cfg.name;
  }

  get config(): Readonly<StreamConfig> {
    return this.cfg;
  }

  // ---- PublishView ------------------------------------------------------------------------------

  get sealed(): boolean {
    return this.cfg.sealed;
  }
  get allowRollup(): boolean {
    return this.cfg.allow_rollup_hdrs;
  }
  get denyPurge(): boolean {
    return this.cfg.deny_purge;
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

  // ---- lifecycle --------------------------------------------------------------------------------

  /** Rebuilds the de-duplication window from stored messages and subscribes the subjects (unless `serving` is false). */
  async start(serving = true): Promise<void> {
    await this.rebuildDedupe();
    this.setServing(serving);
  }

  /** Unsubscribes; the store stays open (the owner closes it). */
  stop(): void {
    this.stopped = true;
    this.serving = false;
    for (const u of this.unsubscribes.splice(0)) u();
  }

  /** Replicated streams: only the leader subscribes the subjects (others get no-responders meanwhile). */
  setServing(serving: boolean): void {
    if (this.stopped || serving === this.serving) return;
    this.serving = serving;
    if (serving) this.subscribe(this.cfg.subjects);
    else for (const u of this.unsubscribes.splice(0)) u();
  }

  get isServing(): boolean {
    return this.serving;
  }

  /** Routes publishes and API mutations through a Raft group (null: apply at once). */
  setProposer(proposer: StreamProposer | null): void {
    this.proposer = proposer;
  }

  onStored(listener: (seq: number, subject: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  removeMessage(seq: number): Promise<boolean> {
    // Replicated: every replica must drop it, so it is a delete entry (the leader's proposal).
    if (this.proposer !== null) {
      // On a replica that does not lead the proposal is refused: nothing removed here (the leader removes it).
      return this.proposer.propose({ op: 'delete', seq, erase: false }).then(
        (r) => r === true,
        () => false,
      );
    }
    return this.store.delete(seq, { erase: false });
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
  }

  private subscribe(subjects: readonly string[]): void {
    for (const subject of subjects) {
      this.unsubscribes.push(
        this.host.bus.subscribe(subject, (msg: BusMessage) => {
          try {
            if (this.proposer !== null) this.proposer.publish(msg);
            else this.applyMsg(msg.subject, msg.header, msg.data, msg.reply, undefined);
          } catch (err) {
            // A bug here must not break the publisher's connection.
            this.host.log.error({ stream: this.name, err: String(err) }, 'stream message handling failed');
          }
        }),
      );
    }
  }

  // ---- entries ----------------------------------------------------------------------------------

  /** R1: apply at once. Replicated: the proposer replicates, and every replica applies on commit. */
  propose(entry: StreamEntry): Promise<unknown> {
    if (this.proposer !== null) return this.proposer.propose(entry);
    return this.apply(entry);
  }

  // ---- replicated entries (every replica, in log order) ---------------------------------------------

  /**
   * Applies a committed message entry at the leader's sequence. Synchronous in effect (the store updates
   * its in-memory view at once); the result is a promise only when the store refused the message, whose
   * sequence is then consumed anyway so every later entry's sequence still lines up.
   */
  applyReplicatedMsg(m: ReplicatedMsg): ReplicatedMsgResult | Promise<ReplicatedMsgResult> {
    const last = this.lastSeq();
    if (m.seq <= last) {
      // Already in the store: a replay after restart. Its id still belongs in the window.
      this.recordMsgId(m.msgId, m.seq, m.timestampNs);
      return { seq: m.seq };
    }
    if (m.seq > last + 1) {
      // Cannot happen while every replica applies the same entries; keep sequences aligned regardless.
      this.host.log.warn({ stream: this.name, expected: last + 1, got: m.seq }, 'replicated stream sequence gap filled');
      this.store.skipMsgs(last + 1, m.seq - last - 1).catch((err: unknown) => this.logApplyError(err));
    }
    if (m.noInterest) {
      this.store.skipMsgs(m.seq, 1).catch((err: unknown) => this.logApplyError(err));
      this.recordMsgId(m.msgId, m.seq, m.timestampNs);
      return { seq: m.seq };
    }
    const appended = this.store.append(m.subject, m.header ?? undefined, m.data, { seq: m.seq, timestampNs: m.timestampNs });
    if (this.lastSeq() !== m.seq) {
      this.store.skipMsgs(m.seq, 1).catch((err: unknown) => this.logApplyError(err));
      return appended.then(
        () => ({ seq: 0, error: JsErrors.storeFailed('message refused') }),
        (err: unknown) => ({ seq: 0, error: apiErrorOfStore(err) }),
      );
    }
    appended.catch((err: unknown) => this.logApplyError(err));
    this.recordMsgId(m.msgId, m.seq, m.timestampNs);
    if (m.rollup !== undefined) {
      const purged = m.rollup === 'all' ? this.store.purge({ seq: m.seq }) : this.store.purge({ filter: m.subject, seq: m.seq });
      purged.then((n) => n > 0 && this.host.streamPurged(this), (err: unknown) => this.logApplyError(err));
    }
    this.stored(m.seq, m.subject, null);
    return { seq: m.seq };
  }

  /** A committed purge: never removes anything above `bound`, so replaying it is harmless. */
  applyReplicatedPurge(p: ReplicatedPurge): Promise<number> {
    const replay = this.lastSeq() > p.bound;
    const keep = p.keep !== undefined && p.keep > 0 ? p.keep : undefined;
    // `keep` counts every matching message, later ones included: on a replay its effect is already there.
    if (keep !== undefined && replay) return Promise.resolve(0);
    const cap = p.bound + 1;
    let seq: number | undefined;
    if (p.seq !== undefined && p.seq > 0) seq = replay ? Math.min(p.seq, cap) : p.seq;
    else if (keep === undefined) seq = cap;
    const whole = (p.filter === undefined || p.filter === '' || p.filter === '>') && keep === undefined && (p.seq ?? 0) <= 0;
    // A whole-stream purge forgets the dedupe ids (replayed messages after it record theirs again).
    if (whole) {
      this.dedupe.clear();
      this.lastIdRecord = null;
    }
    return this.applyPurge(p.filter, seq, keep);
  }

  applyReplicatedDelete(seq: number, erase: boolean): Promise<boolean> {
    return this.applyDelete(seq, erase);
  }

  /** The store's content was replaced (snapshot install): rebuild what derives from it. */
  async storeReplaced(): Promise<void> {
    this.dedupe.clear();
    this.lastIdRecord = null;
    await this.rebuildDedupe();
    this.host.streamPurged(this);
  }

  private recordMsgId(msgId: string | undefined, seq: number, timestampNs: bigint): void {
    if (msgId === undefined) return;
    this.dedupe.add(msgId, seq, bigNsToMs(timestampNs));
    this.lastIdRecord = { id: msgId, seq };
  }

  private logApplyError(err: unknown): void {
    this.host.log.error({ stream: this.name, err: String(err) }, 'replicated entry apply failed');
  }

  apply(entry: StreamEntry): Promise<unknown> {
    switch (entry.op) {
      case 'msg':
        this.applyMsg(entry.subject, entry.header, entry.data, entry.reply, entry.timestampNs);
        return Promise.resolve();
      case 'purge':
        return this.applyPurge(entry.filter, entry.seq, entry.keep);
      case 'delete':
        return this.applyDelete(entry.seq, entry.erase);
    }
  }

  private applyMsg(subject: string, header: Buffer | null, data: Buffer, replyTo: string | null, timestampNs: bigint | undefined): void {
    if (this.stopped) return;
    const reply = this.cfg.no_ack === true ? null : replyTo;
    if (this.host.storageExceeded(this.cfg.storage)) return this.reject(reply, JsErrors.insufficientResources());
    const plain = header === null || header.length === 0;
    const decision = screenPublish(this, subject, plain ? null : header);
    switch (decision.kind) {
      case 'drop':
        return;
      case 'reject':
        return this.reject(reply, decision.error);
      case 'duplicate': {
        const seq = decision.seq;
        // The original may still be on its way to disk: answer once everything so far is durable.
        if (reply !== null) this.store.flush().then(() => this.send(reply, this.acks.duplicate(seq)), () => undefined);
        return;
      }
      case 'store':
        break;
    }
    if (plain) {
      // Hot path: no header; the store assigns the sequence in call order.
      if (this.noInterest(subject)) {
        this.skip(reply);
        return;
      }
      let seq: number;
      try {
        seq = this.store.appendNoWait(subject, undefined, data, timestampNs);
      } catch (err) {
        return this.reject(reply, apiErrorOfStore(err));
      }
      this.pending.push(seq, subject, reply, this.store.flush());
      return;
    }
    if (this.noInterest(subject)) {
      const skipped = this.skip(reply);
      if (decision.msgId !== undefined) {
        this.dedupe.add(decision.msgId, skipped);
        this.lastIdRecord = { id: decision.msgId, seq: skipped };
      }
      return;
    }
    let seq: number;
    try {
      seq = this.store.appendNoWait(subject, header, data, timestampNs);
    } catch (err) {
      // Refused by a limit: the rejection carries the reason.
      return this.reject(reply, apiErrorOfStore(err));
    }
    if (decision.msgId !== undefined) {
      this.dedupe.add(decision.msgId, seq);
      this.lastIdRecord = { id: decision.msgId, seq };
    }
    if (decision.rollup !== undefined) {
      // The purge applies now, in the same tick as the append, so the same group commit makes both
      // durable; the ack waits in the queue with the others to keep acks and onStored in sequence order.
      const purged = decision.rollup === 'all' ? this.store.purge({ seq }) : this.store.purge({ filter: subject, seq });
      purged.then(
        (n) => n > 0 && this.host.streamPurged(this),
        (err: unknown) => this.host.log.error({ stream: this.name, err: String(err) }, 'rollup purge failed'),
      );
    }
    this.pending.push(seq, subject, reply, this.store.flush());
  }

  /** Interest retention with no consumer that would take `subject`: nats-server consumes the sequence only. */
  private noInterest(subject: string): boolean {
    return this.cfg.retention === 'interest' && !this.host.hasConsumerInterest(this, subject);
  }

  /** Uses up the next sequence without storing, acks it once durable; returns the sequence. */
  private skip(reply: string | null): number {
    const seq = this.lastSeq() + 1;
    this.store.skipMsgs(seq, 1).then(
      () => reply !== null && this.send(reply, this.acks.ack(seq)),
      (err: unknown) => this.reject(reply, apiErrorOfStore(err)),
    );
    return seq;
  }

  private stored(seq: number, subject: string, reply: string | null): void {
    this.dedupeForgottenFrom = Infinity;
    for (const l of this.listeners) {
      try {
        l(seq, subject);
      } catch (err) {
        this.host.log.error({ stream: this.name, err: String(err) }, 'onStored listener failed');
      }
    }
    if (reply !== null) this.send(reply, this.acks.ack(seq));
  }

  /**
   * A message whose write failed: the store has rolled it back (its sequence will be reused), so its
   * Nats-Msg-Id must not answer a retry as a duplicate.
   */
  private failed(seq: number, reply: string | null, err: unknown): void {
    if (seq < this.dedupeForgottenFrom) {
      this.dedupe.forgetFrom(seq);
      this.dedupeForgottenFrom = seq;
      if (this.lastIdRecord !== null && this.lastIdRecord.seq >= seq) this.lastIdRecord = null;
    }
    this.reject(reply, apiErrorOfStore(err));
  }

  private reject(reply: string | null, err: ApiError): void {
    if (reply !== null) this.send(reply, this.acks.error(err));
  }

  private send(reply: string, body: Buffer): void {
    this.host.bus.publish(reply, null, null, body);
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
