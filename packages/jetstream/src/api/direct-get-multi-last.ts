// A direct get with multi_last (nats-server 2.14's getDirectMulti): the newest message of every subject
// matching any of the filters, as of up_to_seq / up_to_time, in sequence order, ended by the 204 EOB status
// with Nats-UpTo-Sequence. More than 1024 matching subjects is a 413.
import type { MessageStore } from '@flotilla/store';
import type { MessageBus } from '../message-bus.js';
import type { Stream } from '../stream/stream.js';
import type { DirectGetRequest } from './direct-get-request.js';
import {
  BATCH_MESSAGES_PER_TURN,
  DEFAULT_BATCH_MAX_BYTES,
  MAX_MULTI_LAST_RESULTS,
  NOT_FOUND,
  NO_RESULTS,
  TOO_MANY_RESULTS,
  countedBytes,
  directGetHeaders,
  endOfBatch,
  nextTurn,
} from './direct-get-reply.js';

const EMPTY = Buffer.alloc(0);
const TOO_MANY = Symbol('too many');

/**
 * Newest sequence per subject matching `filter` at or below `upToSeq`. When a subject has moved past
 * `upToSeq` its older newest message is found by reading the filter's messages up to `upToSeq`, a turn's
 * worth at a time (the store keeps only each subject's newest sequence).
 */
async function lastSeqsUpTo(store: MessageStore, filter: string, upToSeq: number): Promise<number[] | typeof TOO_MANY> {
  let newest: number[];
  try {
    newest = store.lastSeqsPerSubject(filter);
  } catch {
    return []; // not a valid subject filter: nothing matches it (nats-server's subject tree matches nothing)
  }
  if (newest.every((s) => s <= upToSeq)) return newest;
  const lastBySubject = new Map<string, number>();
  let seq = 1;
  for (;;) {
    const chunk = await store.readRange(seq, BATCH_MESSAGES_PER_TURN, filter);
    for (const m of chunk) {
      if (m.seq > upToSeq) break;
      lastBySubject.set(m.subject, m.seq);
      seq = m.seq + 1;
    }
    if (lastBySubject.size > MAX_MULTI_LAST_RESULTS) return TOO_MANY;
    const last = chunk[chunk.length - 1];
    if (last === undefined || last.seq > upToSeq) break;
    await nextTurn();
  }
  return [...lastBySubject.values()];
}

export async function directGetMultiLast(bus: MessageBus, stream: Stream, req: DirectGetRequest, reply: string): Promise<void> {
  const store = stream.store;
  const maxBytes = req.maxBytes === 0 ? DEFAULT_BATCH_MAX_BYTES : req.maxBytes;
  const state = store.state();
  let upToSeq = req.upToSeq;
  if (req.upToTimeNs !== null) {
    upToSeq = store.seqFromTime(req.upToTimeNs);
    // nats-server: No Results when the ceiling falls at or before the stream's first message.
    if (upToSeq <= state.first_seq) return bus.publish(reply, null, NO_RESULTS, EMPTY);
    upToSeq--; // seqFromTime is the first at or after the time: the ceiling is the one before
  }
  if (upToSeq === 0) upToSeq = state.last_seq;

  const seen = new Set<number>();
  if (state.messages > 0) {
    for (const filter of req.multiLast) {
      const seqs = await lastSeqsUpTo(store, filter, upToSeq);
      if (seqs === TOO_MANY) return bus.publish(reply, null, TOO_MANY_RESULTS, EMPTY);
      for (const s of seqs) seen.add(s);
      if (seen.size > MAX_MULTI_LAST_RESULTS) return bus.publish(reply, null, TOO_MANY_RESULTS, EMPTY);
    }
  }
  if (seen.size === 0) return bus.publish(reply, null, NO_RESULTS, EMPTY);
  const seqs = [...seen].sort((a, b) => a - b);

  // nats-server 2.14.5 sends multi_last replies with their headers whatever no_hdr says; so do we.
  let numPending = seqs.length;
  let lastSeq = 0;
  let sentBytes = 0;
  let sent = 0;
  let sinceYield = 0;
  for (const seq of seqs) {
    if (seq < req.seq) {
      if (numPending > 0) numPending--;
      continue;
    }
    if (++sinceYield > BATCH_MESSAGES_PER_TURN) {
      sinceYield = 1;
      await nextTurn();
    }
    const m = await store.get(seq);
    if (m === null) return bus.publish(reply, null, NOT_FOUND, EMPTY);
    if (numPending > 0) numPending--;
    bus.publish(reply, null, directGetHeaders(stream.name, m, { numPending, lastSeq }), m.data);
    lastSeq = m.seq;
    sentBytes += countedBytes(m);
    if (sentBytes >= maxBytes) break;
    sent++;
    if (req.batch > 0 && sent >= req.batch) break;
  }
  bus.publish(reply, null, endOfBatch(numPending, lastSeq, upToSeq), EMPTY);
}
