// The single-node StreamWriter: decides each publish on the store's own state, appends it at once (the store
// assigns the sequence in call order) and acknowledges it after the store's flush, many messages per flush
// (DurableQueue). API purges/deletes apply to the store directly. No Raft here: this is the R1 hot path.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import type { BusTrace, MessageBus } from '../message-bus.js';
import { DurableQueue, type DurableSink } from '../stream/durable-queue.js';
import { PubAckEncoder } from '../stream/pub-ack.js';
import { decidePublish } from '../stream/publish-rules.js';
import { tracedRuling } from '../stream/traced-ruling.js';
import { apiErrorOfStore, type Stream, type StreamHost } from '../stream/stream.js';
import type { IngestResult, SourcedMessage, StreamMutation, StreamWriter, StreamWriterFactory } from '../stream/stream-writer.js';

/** The factory the composition root hands a single-node Stream. */
export function localStreamWriter(host: Pick<StreamHost, 'bus' | 'domain'>): StreamWriterFactory {
  return (stream) => new LocalStreamWriter(stream, host.bus, host.domain);
}

export class LocalStreamWriter implements StreamWriter, DurableSink {
  private readonly acks: PubAckEncoder;
  /** Stored messages waiting for durability before their ack and onStored (in sequence order). */
  private readonly pending: DurableQueue;
  /** Dedupe ids from this sequence on were dropped after a failed write (a run of failures drops once). */
  private dedupeForgottenFrom = Infinity;
  /** The store flush the last ingested message waits for, and the result promise shared by its batch. */
  private ingestFlush: Promise<void> | null = null;
  private ingestStored: Promise<IngestResult> = Promise.resolve('stored');

  constructor(
    private readonly stream: Stream,
    private readonly bus: MessageBus,
    domain: string | undefined,
  ) {
    this.acks = new PubAckEncoder(stream.name, domain);
    this.pending = new DurableQueue(this);
  }

  publish(subject: string, published: Buffer | null, data: Buffer, replyTo: string | null, trace?: BusTrace): void {
    const stream = this.stream;
    let header = published;
    if (stream.isStopped) return trace?.stored(subject, false, 'stream closed');
    const reply = stream.config.no_ack === true ? null : replyTo;
    const plain = header === null || header.length === 0;
    const ruling = decidePublish(stream, subject, plain ? null : header, data.length);
    const store = stream.store;
    if (trace !== undefined && !tracedRuling(trace, subject, ruling)) return;
    switch (ruling.kind) {
      case 'drop':
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
        break;
    }
    // nats-server stores a traced message with tracing switched off, so its deliveries start no trace
    if (trace !== undefined && header !== null) header = trace.storedHeader(header);
    let seq: number;
    try {
      // Plain messages (the hot path) carry no header block at all.
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
    const flushed = store.flush();
    this.pending.push(seq, subject, reply, flushed);
    if (trace !== undefined) flushed.then(() => trace.stored(subject, false, null), (err: unknown) => trace.stored(subject, false, String(err)));
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
        seq = store.appendNoWait(m.subject, header ?? undefined, m.data, m.timestampNs);
      } catch (err) {
        throw apiErrorOfStore(err);
      }
    } else {
      const ruling = decidePublish(stream, m.subject, header, m.data.length, true);
      switch (ruling.kind) {
        case 'drop':
        case 'duplicate':
          return Promise.resolve('duplicate');
        case 'reject':
          throw ruling.error;
        case 'skip': {
          const skipped = this.skip(null);
          if (ruling.msgId !== undefined) stream.recordMsgId(ruling.msgId, skipped);
          return store.flush().then(() => 'stored');
        }
        case 'store':
          break;
      }
      try {
        seq = store.appendNoWait(m.subject, header ?? undefined, m.data);
      } catch (err) {
        throw apiErrorOfStore(err);
      }
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
    if (reply !== null) this.send(reply, this.acks.ack(seq));
  }

  /**
   * A message whose write failed: the store has rolled it back (its sequence will be reused), so its
   * Nats-Msg-Id must not answer a retry as a duplicate.
   */
  failed(seq: number, reply: string | null, err: unknown): void {
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
