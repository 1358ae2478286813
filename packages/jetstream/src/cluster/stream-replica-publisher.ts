// The replicated StreamWriter, on the stream's leader: decides each publish with the shared rules on a view that
// counts the proposals still in flight, assigns each message its sequence, batches everything arriving in one
// tick into one packed Raft entry, and sends the PubAck only once the entry is committed (a quorum has it on
// disk) and applied here. API purges/deletes are proposed the same way (stream-replica-apply.ts applies them).
import { isRaftError } from '@flotilla/raft';
import { msToBigNs } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import type { BusMessage, BusTrace, JetStreamLogger } from '../message-bus.js';
import { PubAckEncoder } from '../stream/pub-ack.js';
import { decidePublish, type PublishRulesView } from '../stream/publish-rules.js';
import { tracedRuling } from '../stream/traced-ruling.js';
import type { ReplicatedMsgResult, Stream, StreamHost } from '../stream/stream.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type { IngestResult, SourcedMessage, StreamMutation, StreamWriter } from '../stream/stream-writer.js';
import { encodeConsumerEntry, encodeDeleteEntry, encodeMsgEntry, encodePurgeEntry } from './stream-entry-codec.js';
import { unavailableError } from './stream-replica-errors.js';
import { DiscardNewGate } from './stream-replica-limits.js';

/** What the publisher needs of the Raft node (RaftNode in production). */
export interface ProposalTarget {
  proposeBatch(items: readonly Uint8Array[]): Promise<{ first: number; results: unknown[] }>;
  /** Index of the last log entry: tells a proposal refused outright from one appended then lost. */
  lastIndex(): number;
}

/** One packed entry carries at most this many proposals / bytes (the rest go into the next entry). */
const MAX_ITEMS_PER_ENTRY = 4096;
const MAX_BYTES_PER_ENTRY = 1024 * 1024;
/** Proposals queued or in flight beyond this many are refused (back-pressure to publishers). */
const MAX_OUTSTANDING = 100_000;
/** Publishes waiting for the messages in flight before a discard-new limit can be decided (then refused). */
const MAX_HELD = 10_000;

interface Item {
  data: Uint8Array;
  /** Sequence this item assigned (messages only; 0 otherwise). */
  seq: number;
  msgId: string | undefined;
  subject: string | undefined;
  settle(result: unknown): void;
  /** `error`: what the publisher may be told (null: no reply — another leader may store it, or it may commit yet). */
  fail(error: ApiError | null, appended: boolean): void;
}

interface InFlightId {
  seq: number;
  /** Reply subjects of duplicates that arrived while the original was in flight. */
  waiters: string[];
}

export interface PublisherOptions {
  /** Test-only deliberate bug (FLOTILLA_TEST_BUGS=pub-ack-before-commit): ack at proposal time. */
  ackBeforeCommit: boolean;
  log: JetStreamLogger;
  /** Called with the seconds from proposal to applied, per packed entry. */
  committed?: (seconds: number) => void;
}

export class StreamPublisher implements StreamWriter, PublishRulesView {
  private readonly acks: PubAckEncoder;
  private queue: Item[] = [];
  private flushScheduled = false;
  private active = false;
  /** Incremented on every activate/deactivate: settles from an earlier leadership do not touch this one's state. */
  private epoch = 0;
  /** Last sequence assigned (store's last_seq plus the messages in flight). */
  private nextSeq = 0;
  /** Items queued or proposed and not settled. */
  private outstanding = 0;
  private readonly inFlightIds = new Map<string, InFlightId>();
  private readonly inFlightSubjectSeq = new Map<string, number>();
  private lastInFlightId: { id: string; seq: number } | null = null;
  private lastTimestampNs = 0n;
  private readonly limits: DiscardNewGate;
  /** Publishes that arrived while a limit waited for the messages in flight, in arrival order. */
  private held: BusMessage[] = [];

  constructor(
    private readonly stream: Stream,
    private readonly host: StreamHost,
    private readonly target: ProposalTarget,
    private readonly options: PublisherOptions,
  ) {
    this.acks = new PubAckEncoder(stream.name, host.domain);
    this.limits = new DiscardNewGate(stream.store);
  }

  /** This node now leads and has applied every earlier entry: start sequencing from the store. */
  activate(): void {
    this.epoch++;
    this.active = true;
    this.resetInFlight();
  }

  /** Leadership lost. Queued proposals were never appended; their publishers get no reply, since the new
   * leader (also subscribed by now) may store the same publish and its ack must be the one the client sees. */
  deactivate(): void {
    if (!this.active) return;
    this.epoch++;
    this.active = false;
    const queued = this.queue;
    this.queue = [];
    for (const item of queued) item.fail(null, false);
    this.held = []; // no reply, as queued ones: the new leader may be the one to store them
    this.resetInFlight();
  }

  get isActive(): boolean {
    return this.active;
  }

  // ---- PublishView: the stream's state plus the proposals in flight ---------------------------------

  get name(): string {
    return this.stream.name;
  }
  get config(): Readonly<StreamConfig> {
    return this.stream.config;
  }
  storageExceeded(): boolean {
    return this.stream.storageExceeded();
  }
  /** The account's limits over its usage on every node (messages still in flight are not counted yet). */
  accountLimitExceeded(subject: string, headerBytes: number, dataBytes: number): boolean {
    return this.stream.accountLimitExceeded(subject, headerBytes, dataBytes);
  }
  hasInterest(subject: string): boolean {
    return this.stream.hasInterest(subject);
  }
  get sealed(): boolean {
    return this.stream.config.sealed;
  }
  get allowRollup(): boolean {
    return this.stream.config.allow_rollup_hdrs;
  }
  get denyPurge(): boolean {
    return this.stream.config.deny_purge;
  }
  get allowMsgTtl(): boolean {
    return this.stream.config.allow_msg_ttl === true;
  }
  lastSeq(): number {
    this.resyncIfIdle();
    return this.nextSeq;
  }
  lastSeqForSubject(subject: string): number {
    return this.inFlightSubjectSeq.get(subject) ?? this.stream.lastSeqForSubject(subject);
  }
  lastMsgId(): string {
    const last = this.lastSeq();
    const rec = this.lastInFlightId;
    if (rec !== null && rec.seq === last) return rec.id;
    return this.stream.lastSeq() === last ? this.stream.lastMsgId() : '';
  }
  duplicateOf(msgId: string): number | undefined {
    return this.inFlightIds.get(msgId)?.seq ?? this.stream.duplicateOf(msgId);
  }

  // ---- StreamWriter -----------------------------------------------------------------------------

  publish(subject: string, header: Buffer | null, data: Buffer, reply: string | null, trace?: BusTrace): void {
    if (!this.active) return trace?.stored(subject, false, null); // not leading (a step-down in progress): the leader answers
    if (trace !== undefined) {
      const ruling = decidePublish(this, subject, header !== null && header.length > 0 ? header : null, data.length);
      if (!tracedRuling(trace, subject, ruling)) return;
      // Replicated, the hop is reported when the leader proposes it, not once a quorum applied it.
      if (ruling.kind === 'store') trace.stored(subject, false, null);
      if (header !== null && header.length > 0) header = trace.storedHeader(header);
    }
    if (this.held.length === 0 && this.admit(subject, header, data, reply)) return;
    if (this.held.length >= MAX_HELD) {
      return this.reject(this.stream.config.no_ack === true ? null : reply, JsErrors.insufficientResources());
    }
    this.held.push({ subject, reply, header, data });
  }

  /** Runs the rules and proposes (or answers) a publish; false when a limit must wait for the messages in flight. */
  private admit(subject: string, rawHeader: Buffer | null, payload: Buffer, replyTo: string | null): boolean {
    const cfg = this.stream.config;
    const reply = cfg.no_ack === true ? null : replyTo;
    if (this.outstanding >= MAX_OUTSTANDING) return this.reject(reply, JsErrors.insufficientResources()), true;
    let header = rawHeader !== null && rawHeader.length > 0 ? rawHeader : null;
    const ruling = decidePublish(this, subject, header, payload.length);
    switch (ruling.kind) {
      case 'drop':
        return true;
      case 'reject':
        return this.reject(reply, ruling.error), true;
      case 'duplicate':
        return this.duplicate(reply, ruling.msgId, ruling.seq), true;
      case 'store':
        if (ruling.header !== undefined) header = ruling.header;
        break;
      case 'skip':
        break;
    }
    const noInterest = ruling.kind === 'skip';
    // Limits before a sequence is taken: a refused message must leave no trace on any replica. A skipped one
    // adds nothing to the store, so no limit applies to it.
    const gated = !noInterest;
    let bytes = 0;
    let perSubject = false;
    if (gated) {
      const limit = this.limits.decide(cfg, subject, header?.length ?? 0, payload.length);
      if (limit.kind === 'wait') return false;
      if (limit.kind === 'refuse') return this.reject(reply, limit.error), true;
      bytes = this.limits.sizeOf(subject, header?.length ?? 0, payload.length);
      perSubject = cfg.max_msgs_per_subject > 0 && cfg.discard_new_per_subject === true;
      this.limits.added(subject, bytes, perSubject);
    }
    const msgId = ruling.msgId;
    const rollup = ruling.kind === 'store' ? ruling.rollup : undefined;
    const seq = this.lastSeq() + 1;
    this.nextSeq = seq;
    // Strictly increasing, so every replica stores the same, ordered timestamps.
    const nowNs = msToBigNs(Date.now());
    this.lastTimestampNs = nowNs > this.lastTimestampNs ? nowNs : this.lastTimestampNs + 1n;
    const data = encodeMsgEntry({
      seq,
      timestampNs: this.lastTimestampNs,
      subject,
      header,
      data: payload,
      msgId,
      rollup,
      noInterest,
    });
    if (msgId !== undefined) {
      this.inFlightIds.set(msgId, { seq, waiters: [] });
      this.lastInFlightId = { id: msgId, seq };
    }
    if (!noInterest) this.inFlightSubjectSeq.set(subject, seq);
    const epoch = this.epoch;
    const ackEarly = this.options.ackBeforeCommit;
    if (ackEarly && reply !== null) this.send(reply, this.acks.ack(seq));
    this.enqueue({
      data,
      seq,
      msgId,
      subject,
      settle: (result) => {
        void Promise.resolve(result as ReplicatedMsgResult | Promise<ReplicatedMsgResult> | undefined).then(
          (r) => {
            const stored = r !== undefined && r.error === undefined ? r.seq : 0;
            this.forget(epoch, seq, msgId, subject, stored);
            if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
            if (r?.error !== undefined) this.reject(reply, r.error);
            else if (stored > 0 && reply !== null && !ackEarly) this.send(reply, this.acks.ack(stored));
          },
          (err: unknown) => {
            this.forget(epoch, seq, msgId, subject, 0);
            if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
            this.options.log.error({ stream: this.stream.name, err: String(err) }, 'replicated publish apply failed');
          },
        );
      },
      fail: (error, appended) => {
        this.forget(epoch, seq, msgId, subject, 0);
        if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
        // Appended and lost (or outcome unknown): no reply; the client retries after its timeout, and a
        // Nats-Msg-Id retry is de-duplicated if the entry did commit after all.
        if (!appended && !ackEarly && error !== null) this.reject(reply, error);
      },
    });
    return true;
  }

  /** An admitted message settled: once none is in flight, the held publishes are decided, in order. */
  private limitSettled(epoch: number, subject: string, bytes: number, perSubject: boolean): void {
    if (epoch !== this.epoch) return;
    this.limits.settled(subject, bytes, perSubject);
    if (this.limits.messagesInFlight > 0 || this.held.length === 0) return;
    const held = this.held;
    let i = 0;
    while (i < held.length && this.active && this.admitHeld(held[i]!)) i++;
    this.held = this.active ? held.slice(i) : [];
  }

  private admitHeld(msg: BusMessage): boolean {
    return this.admit(msg.subject, msg.header, msg.data, msg.reply);
  }

  /**
   * A mirrored or sourced message (topology/), proposed like a publish: a mirror's at the origin's sequence
   * and time (apply skips the sequences between), a source's at the next one after the publish rules.
   */
  ingest(m: SourcedMessage): Promise<IngestResult> {
    if (!this.active) throw unavailableError();
    if (this.outstanding >= MAX_OUTSTANDING) throw JsErrors.insufficientResources();
    const header = m.header !== null && m.header.length > 0 ? m.header : null;
    let msgId: string | undefined;
    let rollup: 'sub' | 'all' | undefined;
    let noInterest = false;
    let seq: number;
    let ts: bigint;
    if (m.seq !== undefined) {
      if (m.seq <= this.lastSeq()) return Promise.resolve('duplicate');
      seq = m.seq;
      ts = m.timestampNs ?? msToBigNs(Date.now());
    } else {
      const ruling = decidePublish(this, m.subject, header, m.data.length, true);
      if (ruling.kind === 'reject') throw ruling.error;
      if (ruling.kind === 'duplicate' || ruling.kind === 'drop') return Promise.resolve('duplicate');
      msgId = ruling.msgId;
      rollup = ruling.kind === 'store' ? ruling.rollup : undefined;
      noInterest = ruling.kind === 'skip';
      seq = this.lastSeq() + 1;
      const nowNs = msToBigNs(Date.now());
      ts = nowNs > this.lastTimestampNs ? nowNs : this.lastTimestampNs + 1n;
    }
    this.nextSeq = seq;
    if (ts > this.lastTimestampNs) this.lastTimestampNs = ts;
    const data = encodeMsgEntry({ seq, timestampNs: ts, subject: m.subject, header, data: m.data, msgId, rollup, noInterest });
    if (msgId !== undefined) {
      this.inFlightIds.set(msgId, { seq, waiters: [] });
      this.lastInFlightId = { id: msgId, seq };
    }
    if (!noInterest) this.inFlightSubjectSeq.set(m.subject, seq);
    const epoch = this.epoch;
    const subject = m.subject;
    return new Promise<IngestResult>((resolve, reject) => {
      this.enqueue({
        data,
        seq,
        msgId,
        subject,
        settle: (result) => {
          void Promise.resolve(result as ReplicatedMsgResult | Promise<ReplicatedMsgResult> | undefined).then(
            (r) => {
              const stored = r !== undefined && r.error === undefined ? r.seq : 0;
              this.forget(epoch, seq, msgId, subject, stored);
              if (r?.error !== undefined) reject(r.error);
              else resolve('stored');
            },
            (err: unknown) => {
              this.forget(epoch, seq, msgId, subject, 0);
              reject(err);
            },
          );
        },
        fail: (error) => {
          this.forget(epoch, seq, msgId, subject, 0);
          reject(error ?? unavailableError());
        },
      });
    });
  }

  mutate(entry: StreamMutation): Promise<number | boolean> {
    return this.propose(entry) as Promise<number | boolean>;
  }

  /** Every replica must drop it, so it is a delete entry; refused (not leading here) means nothing removed here. */
  removeMessage(seq: number): Promise<boolean> {
    return this.propose({ op: 'delete', seq, erase: false }).then(
      (r) => r === true,
      () => false,
    );
  }

  private propose(entry: StreamMutation): Promise<unknown> {
    if (!this.active) return Promise.reject(unavailableError());
    if (entry.op === 'delete') return this.proposeItem(encodeDeleteEntry(entry.seq, entry.erase));
    const bound = this.lastSeq();
    const data = encodePurgeEntry({ filter: entry.filter, seq: entry.seq, keep: entry.keep, bound });
    const wholeStream = entry.filter === undefined || entry.filter === '' || entry.filter === '>';
    // A whole-stream purge below a sequence past the end moves the stream's sequence there (a compact):
    // messages proposed after it must be numbered from there too.
    if (wholeStream && (entry.keep ?? 0) <= 0 && entry.seq !== undefined && entry.seq > bound + 1) this.nextSeq = entry.seq - 1;
    return this.proposeItem(data);
  }

  /** A consumer-replication entry: resolves after it is committed and applied here. */
  proposeRaw(payload: Uint8Array): Promise<void> {
    if (!this.active) return Promise.reject(unavailableError());
    return this.proposeItem(encodeConsumerEntry(payload)).then(() => undefined);
  }

  private proposeItem(data: Uint8Array): Promise<unknown> {
    if (this.outstanding >= MAX_OUTSTANDING) return Promise.reject(JsErrors.insufficientResources());
    return new Promise((resolve, reject) => {
      this.enqueue({
        data,
        seq: 0,
        msgId: undefined,
        subject: undefined,
        settle: (result) => {
          this.outstanding--;
          resolve(result);
        },
        fail: (error) => {
          this.outstanding--;
          reject(error ?? unavailableError());
        },
      });
    });
  }

  // ---- queue and proposals ----------------------------------------------------------------------

  private enqueue(item: Item): void {
    this.outstanding++;
    this.queue.push(item);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Proposes everything queued this tick, as few packed entries as the size bounds allow. */
  private flush(): void {
    this.flushScheduled = false;
    const items = this.queue;
    this.queue = [];
    let failedFromSeq = 0;
    for (let start = 0; start < items.length; ) {
      let end = start;
      let bytes = 0;
      while (end < items.length && end - start < MAX_ITEMS_PER_ENTRY && (end === start || bytes + items[end]!.data.length <= MAX_BYTES_PER_ENTRY)) {
        bytes += items[end]!.data.length;
        end++;
      }
      const chunk = items.slice(start, end);
      start = end;
      if (failedFromSeq > 0) {
        // An earlier chunk of this flush was refused: later ones must not commit with a gap before them.
        for (const item of chunk) item.fail(null, false);
        continue;
      }
      const before = this.target.lastIndex();
      const startedMs = performance.now();
      const proposed = this.target.proposeBatch(chunk.map((i) => i.data));
      const appended = this.target.lastIndex() !== before;
      if (!appended) {
        const firstSeq = chunk.find((i) => i.seq > 0)?.seq ?? 0;
        failedFromSeq = firstSeq > 0 ? firstSeq : Number.MAX_SAFE_INTEGER;
      }
      proposed.then(
        ({ results }) => {
          this.options.committed?.((performance.now() - startedMs) / 1000);
          for (let i = 0; i < chunk.length; i++) chunk[i]!.settle(results[i]);
        },
        (error: unknown) => {
          // Refused outright for back-pressure: say so; any other refusal means leadership moved.
          const told = !appended && isRaftError(error, 'TOO_MANY_PENDING_PROPOSALS') ? JsErrors.insufficientResources() : null;
          for (const item of chunk) item.fail(told, appended);
        },
      );
    }
    // Nothing of the refused chunks was appended: their sequences are free again.
    if (failedFromSeq > 0 && failedFromSeq !== Number.MAX_SAFE_INTEGER && this.nextSeq >= failedFromSeq) this.nextSeq = failedFromSeq - 1;
  }

  // ---- in-flight bookkeeping --------------------------------------------------------------------

  private forget(epoch: number, seq: number, msgId: string | undefined, subject: string, storedSeq: number): void {
    this.outstanding--;
    if (epoch !== this.epoch) return;
    if (msgId !== undefined) {
      const rec = this.inFlightIds.get(msgId);
      if (rec !== undefined && rec.seq === seq) {
        this.inFlightIds.delete(msgId);
        for (const w of rec.waiters) {
          // The original failed: no reply, the client's retry is then stored as new.
          if (storedSeq > 0) this.send(w, this.acks.duplicate(storedSeq));
        }
      }
      if (this.lastInFlightId?.seq === seq) this.lastInFlightId = null;
    }
    if (this.inFlightSubjectSeq.get(subject) === seq) this.inFlightSubjectSeq.delete(subject);
  }

  private resetInFlight(): void {
    this.limits.reset();
    this.inFlightIds.clear();
    this.inFlightSubjectSeq.clear();
    this.lastInFlightId = null;
    this.nextSeq = this.stream.lastSeq();
  }

  /** With nothing in flight the store is the truth (it also moves on limits, purges and skips). */
  private resyncIfIdle(): void {
    if (this.outstanding === 0) this.nextSeq = this.stream.lastSeq();
  }

  private duplicate(reply: string | null, msgId: string, seq: number): void {
    if (reply === null) return;
    const inFlight = this.inFlightIds.get(msgId);
    // The original is not committed yet: answer when it is (or fail with it).
    if (inFlight !== undefined && !this.options.ackBeforeCommit) inFlight.waiters.push(reply);
    else this.send(reply, this.acks.duplicate(seq));
  }

  private reject(reply: string | null, err: ApiError): void {
    if (reply !== null) this.send(reply, this.acks.error(err));
  }

  private send(reply: string, body: Buffer): void {
    this.host.bus.publish(reply, null, null, body);
  }
}
