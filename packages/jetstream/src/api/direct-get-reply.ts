// What a direct get replies with (nats-server 2.14 stream.go's dg/dgb/eob/eobm formats): the stored headers
// with the stream's appended, in a batch also Nats-Num-Pending / Nats-Last-Sequence, and the 204 EOB status
// that ends a batch.
import { encodeStatusHeaders } from '@flotilla/protocol';
import type { StoredMessage } from '@flotilla/store';
import { formatTimeNs } from './time-format.js';

export const NOT_FOUND = encodeStatusHeaders(404, 'Message Not Found');
export const NO_RESULTS = encodeStatusHeaders(404, 'No Results');
export const TOO_MANY_RESULTS = encodeStatusHeaders(413, 'Too Many Results');

/** nats-server's default max_bytes for a batch: its max_pending default (MAX_PENDING_SIZE, 64 MiB). */
export const DEFAULT_BATCH_MAX_BYTES = 64 * 1024 * 1024;
/** Most subjects one multi_last request may match (getDirectMulti's maxAllowedResponses); more is a 413. */
export const MAX_MULTI_LAST_RESULTS = 1024;
/** Messages a batch sends per event-loop turn before it yields, so thousands of replies do not block I/O. */
export const BATCH_MESSAGES_PER_TURN = 256;

export interface BatchPosition {
  /** Messages still pending after this one. */
  numPending: number;
  /** Sequence of the message sent before this one in the batch, 0 for the first. */
  lastSeq: number;
}

/** The reply's header block; `batch` adds the batch headers. */
export function directGetHeaders(stream: string, m: StoredMessage, batch: BatchPosition | null): Buffer {
  let extra =
    `Nats-Stream: ${stream}\r\nNats-Subject: ${m.subject}\r\nNats-Sequence: ${m.seq}\r\n` +
    `Nats-Time-Stamp: ${formatTimeNs(m.timestampNs)}\r\n`;
  if (batch !== null) extra += `Nats-Num-Pending: ${batch.numPending}\r\nNats-Last-Sequence: ${batch.lastSeq}\r\n`;
  extra += '\r\n';
  if (m.header.length >= 4) {
    // The stored block ends with the blank line: insert ours before it.
    const own = Buffer.from(m.header.buffer, m.header.byteOffset, m.header.byteLength - 2);
    return Buffer.concat([own, Buffer.from(extra)]);
  }
  return Buffer.from(`NATS/1.0\r\n${extra}`);
}

/** The end-of-batch status; a multi_last batch also says the sequence it read up to. */
export function endOfBatch(numPending: number, lastSeq: number, upToSeq: number | null): Buffer {
  const upTo = upToSeq === null ? '' : `Nats-UpTo-Sequence: ${upToSeq}\r\n`;
  return Buffer.from(`NATS/1.0 204 EOB\r\nNats-Num-Pending: ${numPending}\r\nNats-Last-Sequence: ${lastSeq}\r\n${upTo}\r\n`);
}

/** Bytes a sent message counts against max_bytes (nats-server: subject + stored header + payload). */
export function countedBytes(m: StoredMessage): number {
  return Buffer.byteLength(m.subject) + m.header.length + m.data.length;
}

export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
