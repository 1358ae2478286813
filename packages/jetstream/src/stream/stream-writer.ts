// The port through which everything that changes a stream's messages enters it: publishes on its subjects and
// the API's purge/delete. A writer owns their order and answers each publish (PubAck or error) once the change
// is durable. The composition root picks the implementation: local/ applies to the store at once, cluster/
// proposes through the stream's Raft group. Both decide a publish with publish-rules.ts.
import type { BusTrace } from '../message-bus.js';
import type { Stream } from './stream.js';

/** An API mutation of a stream's messages. */
export type StreamMutation = { op: 'purge'; filter?: string; seq?: number; keep?: number } | { op: 'delete'; seq: number; erase: boolean };

/**
 * A message a mirror or source brings in (topology/): stored without a PubAck. `seq` and `timestampNs`
 * (mirrors) keep the origin's sequence and time, the sequences between skipped as deletes; without them
 * (sources) the publish rules decide and the stream numbers it.
 */
export interface SourcedMessage {
  subject: string;
  header: Buffer | null;
  data: Buffer;
  seq?: number;
  timestampNs?: bigint;
}

/** `duplicate`: nothing stored (already held, or a Nats-Msg-Id seen within the window). */
export type IngestResult = 'stored' | 'duplicate';

export interface StreamWriter {
  /**
   * A message arrived on one of the stream's subjects. `reply` (null: no answer wanted) receives the PubAck
   * once the message is durable, or the error that refused it; some refusals get no answer at all (see drop).
   * `trace`: a traced message (ADR-41) reports its `js` hop there; a trace-only one is ruled on, never stored.
   */
  publish(subject: string, header: Buffer | null, data: Buffer, reply: string | null, trace?: BusTrace): void;
  /** Purge: resolves with the number of messages removed; delete: with whether the message existed. Rejects with an ApiError. */
  mutate(mutation: StreamMutation): Promise<number | boolean>;
  /** Retention (workqueue ack, interest all-acked) removes a message: resolves false when nothing was removed here. */
  removeMessage(seq: number): Promise<boolean>;
  /**
   * Stores a sourced message in order with the publishes; resolves once it is durable (committed). Throws
   * the ApiError at once when refused at once, so the feed stops before the next message.
   */
  ingest(msg: SourcedMessage): Promise<IngestResult>;
}

/** Builds a stream's writer once the stream exists (the writer reads the stream's state). */
export type StreamWriterFactory = (stream: Stream) => StreamWriter;
