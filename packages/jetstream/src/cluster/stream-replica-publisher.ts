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
import { decidePublish, type CounterOutcome, type PublishRulesView } from '../stream/publish-rules.js';
import type { CounterBase, CounterState } from '../stream/msg-counter.js';
import { tracedRuling } from '../stream/traced-ruling.js';
import type { ReplicatedMsgResult, Stream, StreamHost } from '../stream/stream.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type { IngestResult, SourcedMessage, StreamMutation, StreamWriter } from '../stream/stream-writer.js';
import { AtomicBatches, batchIdOf } from '../stream/atomic-batch.js';
import { FastBatches, parseFastBatchReply, type FastBatchRef } from '../stream/fast-batch.js';
import { encodeBatchEntry, encodeConsumerEntry, encodeDeleteEntry, encodeMsgEntry, encodePurgeEntry } from './stream-entry-codec.js';
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
/** What a staged batch message is answered with. */
const EMPTY = Buffer.alloc(0);
/** Publishes waiting for the messages in flight before a discard-new limit can be decided (then refused). */
const MAX_HELD = 10_000;
/** A counter publish whose subject's last message keeps changing while it is read is refused after this many reads. */
const MAX_COUNTER_LOADS = 3;

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
  /** A counter stream's newest total per subject among the messages in flight (msg-counter.ts). */
  private readonly inFlightCounters = new Map<string, { seq: number; state: CounterState }>();
  private lastTimestampNs = 0n;
  private readonly limits: DiscardNewGate;
  /** Publishes that arrived while a limit waited for the messages in flight, in arrival order. */
  private held: BusMessage[] = [];
  private readonly batches = new AtomicBatches();
  private readonly fastBatches: FastBatches;

  constructor(
    private readonly stream: Stream,
    private readonly host: StreamHost,
    private readonly target: ProposalTarget,
    private readonly options: PublisherOptions,
  ) {
    this.acks = new PubAckEncoder(stream.name, host.domain);
    this.limits = new DiscardNewGate(stream.store);
    this.fastBatches = new FastBatches(this.acks, (reply, body) => this.send(reply, body));
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
    this.batches.clear(); // staged batches die with the leadership (the new leader answers "incomplete")
    this.fastBatches.clear(); // so do fast batches: the new leader answers their next message "ID unknown"
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
  get allowMsgCounter(): boolean {
    return this.stream.config.allow_msg_counter === true;
  }
  get allowMsgSchedules(): boolean {
    return this.stream.config.allow_msg_schedules === true;
  }
  get subjects(): readonly string[] {
    return this.stream.config.subjects;
  }
  counterBase(subject: string): CounterBase {
    return this.inFlightCounters.get(subject)?.state ?? this.stream.counterBase(subject);
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
      if (ruling.kind !== 'load' && !tracedRuling(trace, subject, ruling)) return;
      // Replicated, the hop is reported when the leader proposes it, not once a quorum applied it.
      if (ruling.kind === 'store') trace.stored(subject, false, null);
      if (header !== null && header.length > 0) header = trace.storedHeader(header);
    }
    const fast = parseFastBatchReply(reply);
    if (fast !== null) return this.publishFast(subject, header, data, reply!, fast);
    if (header !== null && this.stream.config.allow_atomic === true && batchIdOf(header) !== '') return this.publishBatched(subject, header, data, reply);
    if (this.held.length === 0 && this.admit(subject, header, data, reply)) return;
    if (this.held.length >= MAX_HELD) {
      return this.reject(this.stream.config.no_ack === true ? null : reply, JsErrors.insufficientResources());
    }
    this.held.push({ subject, reply, header, data });
  }

  /** Runs the rules and proposes (or answers) a publish; false when a limit must wait for the messages in flight. */
  private admit(subject: string, rawHeader: Buffer | null, published: Buffer, replyTo: string | null, loads = 0): boolean {
    const cfg = this.stream.config;
    let payload = published;
    const reply = cfg.no_ack === true ? null : replyTo;
    if (this.outstanding >= MAX_OUTSTANDING) return this.reject(reply, JsErrors.insufficientResources()), true;
    let header = rawHeader !== null && rawHeader.length > 0 ? rawHeader : null;
    const ruling = decidePublish(this, subject, header, payload.length);
    switch (ruling.kind) {
      case 'drop':
        return true;
      case 'load': {
        // The subject's last counter message is on disk only: read it, then decide again (this leadership only).
        if (loads >= MAX_COUNTER_LOADS) return this.reject(reply, JsErrors.insufficientResources()), true;
        const epoch = this.epoch;
        this.stream.counters.load(this.stream.store, subject).then(
          () => epoch === this.epoch && this.admit(subject, rawHeader, published, replyTo, loads + 1),
          (err: unknown) => this.options.log.error({ stream: this.stream.name, err: String(err) }, 'counter load failed'),
        );
        return true;
      }
      case 'reject':
        return this.reject(reply, ruling.error), true;
      case 'duplicate':
        return this.duplicate(reply, ruling.msgId, ruling.seq), true;
      case 'store':
        if (ruling.header !== undefined) header = ruling.header;
        if (ruling.data !== undefined) payload = ruling.data;
        break;
      case 'skip':
        break;
    }
    const counter = ruling.kind === 'store' ? ruling.counter : undefined;
    const msgId = ruling.msgId;
    const rollup = ruling.kind === 'store' ? ruling.rollup : undefined;
    const ackEarly = this.options.ackBeforeCommit;
    const ackOf = (stored: number): Buffer => (counter !== undefined ? this.acks.counter(stored, counter.total) : this.acks.ack(stored));
    return this.proposeMsg(subject, header, payload, msgId, rollup, ruling.kind === 'skip', false, counter, (seq) => {
      if (ackEarly && reply !== null) this.send(reply, ackOf(seq));
    }, (stored, error) => {
      if (error !== undefined) this.reject(reply, error);
      else if (stored > 0 && reply !== null && !ackEarly) this.send(reply, ackOf(stored));
    }, (error, appended) => {
      // Appended and lost (or outcome unknown): no reply; the client retries after its timeout, and a
      // Nats-Msg-Id retry is de-duplicated if the entry did commit after all.
      if (!appended && !ackEarly && error !== null) this.reject(reply, error);
    });
  }

  /**
   * Proposes one decided message at the next sequence (after the discard-new gate: false when it must wait;
   * `noWait` proposes at once instead); `done` hears the applied result, `lost` a proposal that never committed.
   * `counter`: a counter increment's outcome, kept in flight so the next increment adds to it.
   */
  private proposeMsg(
    subject: string,
    header: Buffer | null,
    payload: Buffer,
    msgId: string | undefined,
    rollup: 'sub' | 'all' | undefined,
    noInterest: boolean,
    noWait: boolean,
    counter: CounterOutcome | undefined,
    assigned: (seq: number) => void,
    done: (stored: number, error: ApiError | undefined) => void,
    lost: (error: ApiError | null, appended: boolean) => void,
  ): boolean {
    const cfg = this.stream.config;
    // Limits before a sequence is taken: a refused message must leave no trace on any replica. A skipped one
    // adds nothing to the store, so no limit applies to it.
    const gated = !noInterest;
    let bytes = 0;
    let perSubject = false;
    if (gated) {
      const limit = this.limits.decide(cfg, subject, header?.length ?? 0, payload.length);
      if (limit.kind === 'wait' && !noWait) return false;
      if (limit.kind === 'refuse') return done(0, limit.error), true;
      bytes = this.limits.sizeOf(subject, header?.length ?? 0, payload.length);
      perSubject = cfg.max_msgs_per_subject > 0 && cfg.discard_new_per_subject === true;
      this.limits.added(subject, bytes, perSubject);
    }
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
    if (counter !== undefined) this.inFlightCounters.set(subject, { seq, state: counter.state });
    const epoch = this.epoch;
    assigned(seq);
    this.enqueue({
      data,
      seq,
      msgId,
      subject,
      settle: (result) =>
        this.settleReplicated(
          result,
          { epoch, seq, msgId, subject },
          (r) => {
            if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
            done(r !== undefined && r.error === undefined ? r.seq : 0, r?.error);
          },
          (err) => {
            if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
            this.options.log.error({ stream: this.stream.name, err: String(err) }, 'replicated publish apply failed');
          },
        ),
      fail: (error, appended) => {
        this.forget(epoch, seq, msgId, subject, 0);
        if (gated) this.limitSettled(epoch, subject, bytes, perSubject);
        lost(error, appended);
      },
    });
    return true;
  }

  /**
   * A message of a fast batch (stream/fast-batch.ts): proposed as an ordinary message entry, and reported to
   * the batch once committed (a quorum has it on disk) and applied here, so a flow ack covers only durable
   * messages. A discard-new limit that would wait for the messages in flight is decided on apply instead.
   */
  private publishFast(subject: string, header: Buffer | null, payload: Buffer, reply: string, ref: FastBatchRef | 'invalid'): void {
    if (this.outstanding >= MAX_OUTSTANDING) return this.reject(this.stream.config.no_ack === true ? null : reply, JsErrors.insufficientResources());
    const step = this.fastBatches.offer(this, subject, reply, header !== null && header.length > 0 ? header : null, payload, ref);
    if (step.kind === 'done') return;
    const batch = step.ref;
    this.proposeMsg(subject, step.header, payload, step.msgId, step.rollup, step.noInterest, true, undefined, () => undefined, (stored, error) => {
      if (error !== undefined || stored === 0) this.fastBatches.failed(batch, reply, error ?? JsErrors.insufficientResources());
      else this.fastBatches.stored(batch, reply, stored);
    }, (error) => this.fastBatches.failed(batch, reply, error ?? unavailableError()));
  }

  /**
   * A message of an atomic batch (stream/atomic-batch.ts): staged here, refused, or on its commit proposed as
   * ONE batch entry, so the batch commits whole on every replica or not at all; acked once applied here.
   */
  private publishBatched(subject: string, header: Buffer, payload: Buffer, replyTo: string | null): void {
    const reply = this.stream.config.no_ack === true ? null : replyTo;
    if (this.outstanding >= MAX_OUTSTANDING) return this.reject(reply, JsErrors.insufficientResources());
    const step = this.batches.offer(this, subject, header, payload);
    if (step.kind === 'staged') return void (reply !== null && this.send(reply, EMPTY));
    if (step.kind === 'reject') return this.reject(reply, step.error);
    const encoded: Buffer[] = [];
    const members: Array<{ seq: number; msgId: string | undefined; subject: string }> = [];
    let seq = this.lastSeq();
    for (const m of step.msgs) {
      seq++;
      const nowNs = msToBigNs(Date.now());
      this.lastTimestampNs = nowNs > this.lastTimestampNs ? nowNs : this.lastTimestampNs + 1n;
      encoded.push(
        encodeMsgEntry({ seq, timestampNs: this.lastTimestampNs, subject: m.subject, header: m.header, data: m.data, msgId: m.msgId, rollup: m.rollup, noInterest: m.noInterest }),
      );
      members.push({ seq, msgId: m.msgId, subject: m.subject });
      if (m.msgId !== undefined) {
        this.inFlightIds.set(m.msgId, { seq, waiters: [] });
        this.lastInFlightId = { id: m.msgId, seq };
      }
      if (!m.noInterest) this.inFlightSubjectSeq.set(m.subject, seq);
    }
    this.nextSeq = seq;
    const epoch = this.epoch;
    const { batchId } = step;
    const count = members.length;
    const forgetAll = (stored: boolean): void => {
      this.outstanding--;
      for (const m of members) this.forgetInFlight(epoch, m.seq, m.msgId, m.subject, stored ? m.seq : 0);
    };
    this.enqueue({
      data: encodeBatchEntry(encoded),
      seq: members[0]!.seq,
      msgId: undefined,
      subject: undefined,
      settle: (result) => {
        void Promise.resolve(result as ReplicatedMsgResult | Promise<ReplicatedMsgResult> | undefined).then(
          (r) => {
            const ok = r !== undefined && r.error === undefined && r.seq > 0;
            forgetAll(ok);
            if (r?.error !== undefined) this.reject(reply, r.error);
            else if (ok && reply !== null) this.send(reply, this.acks.batch(r.seq, batchId, count));
          },
          (err: unknown) => {
            forgetAll(false);
            this.options.log.error({ stream: this.stream.name, err: String(err) }, 'replicated batch apply failed');
          },
        );
      },
      fail: (error, appended) => {
        forgetAll(false);
        if (!appended && error !== null) this.reject(reply, error);
      },
    });
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
    let header = m.header !== null && m.header.length > 0 ? m.header : null;
    let body = m.data;
    let counterState: CounterState | undefined;
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
      const ruling = decidePublish(this, m.subject, header, m.data.length, true, m.data);
      if (ruling.kind === 'reject') throw ruling.error;
      if (ruling.kind === 'duplicate' || ruling.kind === 'drop') return Promise.resolve('duplicate');
      if (ruling.kind === 'load') return this.stream.counters.load(this.stream.store, m.subject).then(() => this.ingest(m));
      if (ruling.kind === 'store' && ruling.counter !== undefined) {
        header = ruling.header ?? header;
        body = ruling.data ?? body;
        counterState = ruling.counter.state;
      }
      msgId = ruling.msgId;
      rollup = ruling.kind === 'store' ? ruling.rollup : undefined;
      noInterest = ruling.kind === 'skip';
      seq = this.lastSeq() + 1;
      const nowNs = msToBigNs(Date.now());
      ts = nowNs > this.lastTimestampNs ? nowNs : this.lastTimestampNs + 1n;
    }
    this.nextSeq = seq;
    if (ts > this.lastTimestampNs) this.lastTimestampNs = ts;
    const data = encodeMsgEntry({ seq, timestampNs: ts, subject: m.subject, header, data: body, msgId, rollup, noInterest });
    if (counterState !== undefined) this.inFlightCounters.set(m.subject, { seq, state: counterState });
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
        settle: (result) =>
          this.settleReplicated(result, { epoch, seq, msgId, subject }, (r) => (r?.error !== undefined ? reject(r.error) : resolve('stored')), reject),
        fail: (error) => {
          this.forget(epoch, seq, msgId, subject, 0);
          reject(error ?? unavailableError());
        },
      });
    });
  }

  /**
   * A proposed message was applied here (or its apply failed): forgets its in-flight record — with the stored
   * sequence, so later rules read the store — then hands on what apply did. Shared by publishes and ingests.
   */
  private settleReplicated(
    result: unknown,
    m: { epoch: number; seq: number; msgId: string | undefined; subject: string },
    applied: (r: ReplicatedMsgResult | undefined) => void,
    failed: (err: unknown) => void,
  ): void {
    void Promise.resolve(result as ReplicatedMsgResult | Promise<ReplicatedMsgResult> | undefined).then(
      (r) => {
        const stored = r !== undefined && r.error === undefined ? r.seq : 0;
        this.forget(m.epoch, m.seq, m.msgId, m.subject, stored);
        applied(r);
      },
      (err: unknown) => {
        this.forget(m.epoch, m.seq, m.msgId, m.subject, 0);
        failed(err);
      },
    );
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
    this.forgetInFlight(epoch, seq, msgId, subject, storedSeq);
  }

  private forgetInFlight(epoch: number, seq: number, msgId: string | undefined, subject: string, storedSeq: number): void {
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
    if (this.inFlightCounters.get(subject)?.seq === seq) this.inFlightCounters.delete(subject);
  }

  private resetInFlight(): void {
    this.limits.reset();
    this.inFlightIds.clear();
    this.inFlightSubjectSeq.clear();
    this.inFlightCounters.clear();
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
