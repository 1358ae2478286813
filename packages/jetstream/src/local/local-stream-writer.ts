// The single-node StreamWriter: decides each publish on the store's own state, appends it at once (the store
// assigns the sequence in call order) and acknowledges it after the store's flush, many messages per flush
// (DurableQueue). API purges/deletes apply to the store directly. No Raft here: this is the R1 hot path.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import type { BusTrace, MessageBus } from '../message-bus.js';
import { DurableQueue, type DurableSink } from '../stream/durable-queue.js';
import { PubAckEncoder } from '../stream/pub-ack.js';
import { AtomicBatches, batchIdOf } from '../stream/atomic-batch.js';
import { FastBatches, parseFastBatchReply, type FastBatchRef } from '../stream/fast-batch.js';
import { acksBeforeDurable } from '../stream/persist-mode.js';
import { decidePublish } from '../stream/publish-rules.js';
import { tracedRuling } from '../stream/traced-ruling.js';
import { apiErrorOfStore, type Stream, type StreamHost } from '../stream/stream.js';
import type { IngestResult, SourcedMessage, StreamMutation, StreamWriter, StreamWriterFactory } from '../stream/stream-writer.js';

/** What a staged batch message is answered with. */
const EMPTY = Buffer.alloc(0);
/** A counter publish whose subject's last message keeps changing while it is read is refused after this many reads. */
const MAX_COUNTER_LOADS = 3;

/** The factory the composition root hands a single-node Stream. */
export function localStreamWriter(host: Pick<StreamHost, 'bus' | 'domain'>): StreamWriterFactory {
  return (stream) => new LocalStreamWriter(stream, host.bus, host.domain);
}

export class LocalStreamWriter implements StreamWriter, DurableSink {
  private readonly acks: PubAckEncoder;
  private readonly batches = new AtomicBatches();
  private readonly fastBatches: FastBatches;
  /** Stored messages waiting for durability before their ack and onStored (in sequence order). */
  private readonly pending: DurableQueue;
  /** Dedupe ids from this sequence on were dropped after a failed write (a run of failures drops once). */
  private dedupeForgottenFrom = Infinity;
  /** The store flush the last ingested message waits for, and the result promise shared by its batch. */
  private ingestFlush: Promise<void> | null = null;
  private ingestStored: Promise<IngestResult> = Promise.resolve('stored');
  /** A counter stream's totals for the PubAcks waiting in `pending`, by sequence. */
  private readonly counterTotals = new Map<number, string>();

  constructor(
    private readonly stream: Stream,
    private readonly bus: MessageBus,
    domain: string | undefined,
  ) {
    this.acks = new PubAckEncoder(stream.name, domain);
    this.pending = new DurableQueue(this);
    this.fastBatches = new FastBatches(this.acks, (reply, body) => this.send(reply, body));
  }

  publish(subject: string, published: Buffer | null, data: Buffer, replyTo: string | null, trace?: BusTrace): void {
    this.publishAfterLoads(subject, published, data, replyTo, 0, trace);
  }

  /** `loads`: how often a counter's last message was read for this publish (a bounded number of times). */
  private publishAfterLoads(subject: string, published: Buffer | null, publishedData: Buffer, replyTo: string | null, loads: number, trace?: BusTrace): void {
    const stream = this.stream;
    let header = published;
    let data = publishedData;
    if (stream.isStopped) return trace?.stored(subject, false, 'stream closed');
    const reply = stream.config.no_ack === true ? null : replyTo;
    const fast = parseFastBatchReply(replyTo);
    if (fast !== null) return this.publishFast(subject, header, data, replyTo!, fast);
    const plain = header === null || header.length === 0;
    if (!plain && stream.config.allow_atomic === true && batchIdOf(header) !== '') return this.publishBatched(subject, header!, data, reply);
    const ruling = decidePublish(stream, subject, plain ? null : header, data.length);
    const store = stream.store;
    // A counter's load decides again afterwards: the trace hears the ruling that decision makes.
    if (trace !== undefined && ruling.kind !== 'load' && !tracedRuling(trace, subject, ruling)) return;
    switch (ruling.kind) {
      case 'drop':
        return;
      case 'load':
        if (loads >= MAX_COUNTER_LOADS) return this.reject(reply, JsErrors.insufficientResources());
        stream.counters.load(store, subject).then(
          () => this.publishAfterLoads(subject, published, publishedData, replyTo, loads + 1, trace),
          (err: unknown) => this.reject(reply, apiErrorOfStore(err)),
        );
        return;
      case 'reject':
        return this.reject(reply, ruling.error);
      case 'duplicate': {
        const seq = ruling.seq;
        // The original may still be on its way to disk: answer once everything so far is durable.
        if (reply !== null) store.flush().then(() => this.send(reply, this.acks.duplicate(seq)), () => undefined);
        return;
      }
      case 'skip': {
        const skipped = this.skip(reply);
        if (ruling.msgId !== undefined) stream.recordMsgId(ruling.msgId, skipped);
        return;
      }
      case 'store':
        if (ruling.header !== undefined) header = ruling.header;
        if (ruling.data !== undefined) data = ruling.data;
        break;
    }
    // nats-server stores a traced message with tracing switched off, so its deliveries start no trace
    if (trace !== undefined && header !== null) header = trace.storedHeader(header);
    let seq: number;
    try {
      // Plain messages (the hot path) carry no header block at all.
      stream.noteAppending(subject, stream.lastSeq() + 1);
      seq = store.appendNoWait(subject, plain || header === null ? undefined : header, data);
    } catch (err) {
      // Refused by a limit: the rejection carries the reason.
      const error = apiErrorOfStore(err);
      trace?.stored(subject, false, `${error.description} (${error.errCode})`);
      return this.reject(reply, error);
    }
    if (!plain) {
      if (ruling.msgId !== undefined) stream.recordMsgId(ruling.msgId, seq);
      // The purge applies now, in the same tick as the append, so the same group commit makes both
      // durable; the ack waits in the queue with the others to keep acks and onStored in sequence order.
      if (ruling.rollup !== undefined) stream.rollup(ruling.rollup, subject, seq);
    }
    if (stream.config.allow_msg_schedules === true) stream.scheduleStored(seq, subject, plain ? null : header, Date.now());
    const counter = ruling.counter;
    if (counter !== undefined) {
      stream.counters.stored(subject, seq, counter.state);
      // The ack carries the new total; it is sent once the message is durable, as every ack.
      if (reply !== null) this.counterTotals.set(seq, counter.total);
    }
    // persist_mode async (ADR-56): the ack goes out now; the group commit and onStored follow as usual.
    const ackNow = counter === undefined && reply !== null && acksBeforeDurable(stream.config);
    if (ackNow && reply !== null) this.send(reply, this.acks.ack(seq));
    const flushed = store.flush();
    this.pending.push(seq, subject, ackNow ? null : reply, flushed);
    if (trace !== undefined) flushed.then(() => trace.stored(subject, false, null), (err: unknown) => trace.stored(subject, false, String(err)));
  }

  /** A message of an atomic batch: staged, refused, or the commit that appends the whole batch in this tick. */
  private publishBatched(subject: string, header: Buffer, data: Buffer, reply: string | null): void {
    const stream = this.stream;
    const step = this.batches.offer(stream, subject, header, data);
    if (step.kind === 'staged') return void (reply !== null && this.send(reply, EMPTY));
    if (step.kind === 'reject') return this.reject(reply, step.error);
    const store = stream.store;
    let last = 0;
    try {
      for (const m of step.msgs) {
        if (m.noInterest) {
          last = this.skip(null);
        } else {
          last = store.appendNoWait(m.subject, m.header, m.data);
          this.pending.push(last, m.subject, null, store.flush());
        }
        if (m.msgId !== undefined) stream.recordMsgId(m.msgId, last);
        if (m.rollup !== undefined) stream.rollup(m.rollup, m.subject, last);
      }
    } catch (err) {
      return this.reject(reply, apiErrorOfStore(err));
    }
    if (reply === null) return;
    const count = step.msgs.length;
    // One group commit covers the batch (appended in this tick): the ack once it is on disk.
    store.flush().then(
      () => this.send(reply, this.acks.batch(last, step.batchId, count)),
      (err: unknown) => this.reject(reply, apiErrorOfStore(err)),
    );
  }

  /** A message of a fast batch (stream/fast-batch.ts): stored now, reported to the batch once durable. */
  private publishFast(subject: string, header: Buffer | null, data: Buffer, reply: string, ref: FastBatchRef | 'invalid'): void {
    const stream = this.stream;
    const step = this.fastBatches.offer(stream, subject, reply, header !== null && header.length > 0 ? header : null, data, ref);
    if (step.kind === 'done') return;
    const store = stream.store;
    let seq: number;
    try {
      if (step.noInterest) {
        seq = stream.lastSeq() + 1;
        store.skipMsgs(seq, 1).then(
          () => this.fastBatches.stored(step.ref, reply, seq),
          (err: unknown) => this.fastBatches.failed(step.ref, reply, apiErrorOfStore(err)),
        );
      } else {
        seq = store.appendNoWait(subject, step.header ?? undefined, data);
        // Acks and onStored in sequence order with the other publishes; the batch hears of it on the same flush.
        const flushed = store.flush();
        this.pending.push(seq, subject, null, flushed);
        flushed.then(
          () => this.fastBatches.stored(step.ref, reply, seq),
          (err: unknown) => this.fastBatches.failed(step.ref, reply, apiErrorOfStore(err)),
        );
      }
    } catch (err) {
      return this.fastBatches.failed(step.ref, reply, apiErrorOfStore(err));
    }
    if (step.msgId !== undefined) stream.recordMsgId(step.msgId, seq);
    if (step.rollup !== undefined) stream.rollup(step.rollup, subject, seq);
  }

  ingest(m: SourcedMessage): Promise<IngestResult> {
    const stream = this.stream;
    if (stream.isStopped) throw JsErrors.streamNotFound();
    const store = stream.store;
    const header = m.header !== null && m.header.length > 0 ? m.header : null;
    let seq: number;
    if (m.seq !== undefined) {
      // A mirror: the origin's sequence, the ones between (deleted or filtered there) skipped here.
      const last = stream.lastSeq();
      if (m.seq <= last) return Promise.resolve('duplicate');
      if (m.seq > last + 1) store.skipMsgs(last + 1, m.seq - last - 1).catch((err: unknown) => this.failedSkip(err));
      try {
        stream.noteAppending(m.subject, m.seq);
        seq = store.appendNoWait(m.subject, header ?? undefined, m.data, m.timestampNs);
      } catch (err) {
        throw apiErrorOfStore(err);
      }
    } else {
      const ruling = decidePublish(stream, m.subject, header, m.data.length, true, m.data);
      let stored = header;
      let body = m.data;
      switch (ruling.kind) {
        case 'drop':
        case 'duplicate':
          return Promise.resolve('duplicate');
        case 'load':
          return stream.counters.load(store, m.subject).then(() => this.ingest(m));
        case 'reject':
          throw ruling.error;
        case 'skip': {
          const skipped = this.skip(null);
          if (ruling.msgId !== undefined) stream.recordMsgId(ruling.msgId, skipped);
          return store.flush().then(() => 'stored');
        }
        case 'store':
          if (ruling.counter !== undefined) {
            stored = ruling.header ?? header;
            body = ruling.data ?? body;
          }
          break;
      }
      try {
        stream.noteAppending(m.subject, stream.lastSeq() + 1);
        seq = store.appendNoWait(m.subject, stored ?? undefined, body);
      } catch (err) {
        throw apiErrorOfStore(err);
      }
      if (ruling.counter !== undefined) stream.counters.stored(m.subject, seq, ruling.counter.state);
      if (stream.config.allow_msg_schedules === true) stream.scheduleStored(seq, m.subject, stored, Date.now());
      if (ruling.msgId !== undefined) stream.recordMsgId(ruling.msgId, seq);
      if (ruling.rollup !== undefined) stream.rollup(ruling.rollup, m.subject, seq);
    }
    const flushed = store.flush();
    this.pending.push(seq, m.subject, null, flushed);
    // One flush covers a turn's messages: one result promise for all of them (no promise per message).
    if (flushed !== this.ingestFlush) {
      this.ingestFlush = flushed;
      this.ingestStored = flushed.then(() => 'stored' as const);
    }
    return this.ingestStored;
  }

  private failedSkip(err: unknown): void {
    void err; // the append right after fails the same way and is reported by the feed
  }

  mutate(mutation: StreamMutation): Promise<number | boolean> {
    return this.stream.apply(mutation) as Promise<number | boolean>;
  }

  removeMessage(seq: number): Promise<boolean> {
    return this.stream.store.delete(seq, { erase: false });
  }

  // ---- DurableSink ------------------------------------------------------------------------------

  stored(seq: number, subject: string, reply: string | null): void {
    this.dedupeForgottenFrom = Infinity;
    this.stream.announceStored(seq, subject);
    if (reply === null) return;
    const total = this.counterTotals.get(seq);
    if (total === undefined) return this.send(reply, this.acks.ack(seq));
    this.counterTotals.delete(seq);
    this.send(reply, this.acks.counter(seq, total));
  }

  /**
   * A message whose write failed: the store has rolled it back (its sequence will be reused), so its
   * Nats-Msg-Id must not answer a retry as a duplicate.
   */
  failed(seq: number, reply: string | null, err: unknown): void {
    this.counterTotals.delete(seq);
    if (seq < this.dedupeForgottenFrom) {
      this.stream.forgetMsgIdsFrom(seq);
      this.dedupeForgottenFrom = seq;
    }
    this.reject(reply, apiErrorOfStore(err));
  }

  // ---- replies ----------------------------------------------------------------------------------

  /** Uses up the next sequence without storing, acks it once durable; returns the sequence. */
  private skip(reply: string | null): number {
    const seq = this.stream.lastSeq() + 1;
    this.stream.store.skipMsgs(seq, 1).then(
      () => reply !== null && this.send(reply, this.acks.ack(seq)),
      (err: unknown) => this.reject(reply, apiErrorOfStore(err)),
    );
    return seq;
  }

  private reject(reply: string | null, err: ApiError): void {
    if (reply !== null) this.send(reply, this.acks.error(err));
  }

  private send(reply: string, body: Buffer): void {
    this.bus.publish(reply, null, null, body);
  }
}
