// A direct get by sequence, start time, next_by_subj or last_by_subj, single or batched (nats-server 2.14's
// getDirectRequest). A batch is read and sent a turn's worth at a time, so thousands of replies yield to I/O.
import type { StoredMessage } from '@flotilla/store';
import type { MessageBus } from '../message-bus.js';
import type { Stream } from '../stream/stream.js';
import type { DirectGetRequest } from './direct-get-request.js';
import {
  BATCH_MESSAGES_PER_TURN,
  DEFAULT_BATCH_MAX_BYTES,
  NOT_FOUND,
  countedBytes,
  directGetHeaders,
  endOfBatch,
  nextTurn,
} from './direct-get-reply.js';

const EMPTY = Buffer.alloc(0);

async function getOne(stream: Stream, req: DirectGetRequest, seq: number): Promise<StoredMessage | null> {
  if (seq > 0 && req.nextBySubject === '') return stream.store.get(seq);
  if (req.nextBySubject !== '') return stream.store.nextMatching(req.nextBySubject, seq);
  return stream.store.lastBySubject(req.lastBySubject);
}

/** Answers `req` (not multi_last) on `reply`. */
export async function directGetBySequence(bus: MessageBus, stream: Stream, req: DirectGetRequest, reply: string): Promise<void> {
  const store = stream.store;
  let seq = req.startTimeNs !== null ? store.seqFromTime(req.startTimeNs) : req.seq;
  if (req.batch === 0) {
    const m = await getOne(stream, req, seq);
    if (m === null) return bus.publish(reply, null, NOT_FOUND, EMPTY);
    return bus.publish(reply, null, req.noHeaders ? null : directGetHeaders(stream.name, m, null), m.data);
  }
  // '' = every subject (a batch by sequence steps over deleted messages).
  const filter = req.nextBySubject;
  let numPending = store.filteredState(filter, seq).msgs;
  const validThrough = store.state().last_seq;
  const maxBytes = req.maxBytes === 0 ? DEFAULT_BATCH_MAX_BYTES : req.maxBytes;
  let lastSeq = 0;
  let sentBytes = 0;
  let sent = 0;
  let full = false;
  while (sent < req.batch && !full) {
    if (sent > 0) await nextTurn();
    const chunk = await store.readRange(seq, Math.min(req.batch - sent, BATCH_MESSAGES_PER_TURN), filter);
    if (chunk.length === 0) {
      if (sent === 0) return bus.publish(reply, null, NOT_FOUND, EMPTY);
      break;
    }
    for (const m of chunk) {
      if (numPending > 0) numPending--;
      const header = req.noHeaders ? null : directGetHeaders(stream.name, m, { numPending, lastSeq });
      lastSeq = m.seq;
      seq = m.seq + 1;
      sent++;
      bus.publish(reply, null, header, m.data);
      sentBytes += countedBytes(m);
      if (sentBytes >= maxBytes) {
        full = true;
        break;
      }
    }
  }
  // Messages stored while the batch was sent: count what is pending now.
  if (store.state().last_seq > validThrough) numPending = store.filteredState(filter, seq).msgs;
  bus.publish(reply, null, endOfBatch(numPending, lastSeq, null), EMPTY);
}
