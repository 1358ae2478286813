// How every replica applies a committed stream entry to its local Stream, in log order, at the sequence the
// leader assigned. Replays after a restart are harmless: a message already in the store only records its id,
// and a purge never removes anything above the bound its proposal carried.
import { bigNsToMs } from '@flotilla/store';
import { JsErrors } from '../api/api-errors.js';
import type { JetStreamLogger } from '../message-bus.js';
import { counterStateOf } from '../stream/msg-counter.js';
import { apiErrorOfStore, type ReplicatedMsg, type ReplicatedMsgResult, type ReplicatedPurge, type Stream } from '../stream/stream.js';

/**
 * Applies a committed message entry. Synchronous in effect (the store updates its in-memory view at once);
 * the result is a promise only when the store refused the message, whose sequence is then consumed anyway
 * so every later entry's sequence still lines up.
 */
export function applyReplicatedMsg(stream: Stream, log: JetStreamLogger, m: ReplicatedMsg): ReplicatedMsgResult | Promise<ReplicatedMsgResult> {
  const store = stream.store;
  const failed = (err: unknown): void => log.error({ stream: stream.name, err: String(err) }, 'replicated entry apply failed');
  const last = stream.lastSeq();
  if (m.seq <= last) {
    // Already in the store: a replay after restart. Its id still belongs in the window.
    recordMsgId(stream, m);
    return { seq: m.seq };
  }
  if (m.seq > last + 1) {
    // Cannot happen while every replica applies the same entries; keep sequences aligned regardless.
    log.warn({ stream: stream.name, expected: last + 1, got: m.seq }, 'replicated stream sequence gap filled');
    store.skipMsgs(last + 1, m.seq - last - 1).catch(failed);
  }
  if (m.noInterest) {
    store.skipMsgs(m.seq, 1).catch(failed);
    recordMsgId(stream, m);
    return { seq: m.seq };
  }
  stream.noteAppending(m.subject, m.seq);
  const appended = store.append(m.subject, m.header ?? undefined, m.data, { seq: m.seq, timestampNs: m.timestampNs });
  if (stream.lastSeq() !== m.seq) {
    store.skipMsgs(m.seq, 1).catch(failed);
    return appended.then(
      () => ({ seq: 0, error: JsErrors.storeFailed('message refused') }),
      (err: unknown) => ({ seq: 0, error: apiErrorOfStore(err) }),
    );
  }
  appended.catch(failed);
  recordMsgId(stream, m);
  // Every replica keeps its counters' totals, so a new leader adds to them without reading the store.
  if (stream.config.allow_msg_counter === true) stream.counters.stored(m.subject, m.seq, counterStateOf(m.header, m.data));
  if (stream.config.allow_msg_schedules === true) stream.scheduleStored(m.seq, m.subject, m.header, bigNsToMs(m.timestampNs));
  if (m.rollup !== undefined) stream.rollup(m.rollup, m.subject, m.seq);
  // Committed: the Raft log is the durable record, so consumers may deliver it now.
  stream.announceStored(m.seq, m.subject);
  return { seq: m.seq };
}

/**
 * A committed atomic batch: every message in order, at the sequences the leader assigned. The result is the
 * last message's, or the first refusal by the store (the rules already passed the batch as a whole).
 */
export function applyReplicatedBatch(stream: Stream, log: JetStreamLogger, msgs: readonly ReplicatedMsg[]): ReplicatedMsgResult | Promise<ReplicatedMsgResult> {
  let last: ReplicatedMsgResult | Promise<ReplicatedMsgResult> = { seq: 0, error: JsErrors.atomicPublishIncomplete() };
  let refused: Promise<ReplicatedMsgResult> | null = null;
  for (const m of msgs) {
    last = applyReplicatedMsg(stream, log, m);
    if (refused === null && last instanceof Promise) refused = last;
  }
  return refused ?? last;
}

/** A committed purge: never removes anything above `bound`, so replaying it is harmless. */
export function applyReplicatedPurge(stream: Stream, p: ReplicatedPurge): Promise<number> {
  const replay = stream.lastSeq() > p.bound;
  const keep = p.keep !== undefined && p.keep > 0 ? p.keep : undefined;
  // `keep` counts every matching message, later ones included: on a replay its effect is already there.
  if (keep !== undefined && replay) return Promise.resolve(0);
  const cap = p.bound + 1;
  let seq: number | undefined;
  if (p.seq !== undefined && p.seq > 0) seq = replay ? Math.min(p.seq, cap) : p.seq;
  else if (keep === undefined) seq = cap;
  const whole = (p.filter === undefined || p.filter === '' || p.filter === '>') && keep === undefined && (p.seq ?? 0) <= 0;
  // A whole-stream purge forgets the dedupe ids (replayed messages after it record theirs again).
  if (whole) stream.forgetMsgIds();
  return stream.apply({ op: 'purge', filter: p.filter, seq, keep }) as Promise<number>;
}

export function applyReplicatedDelete(stream: Stream, seq: number, erase: boolean): Promise<boolean> {
  return stream.apply({ op: 'delete', seq, erase }) as Promise<boolean>;
}

function recordMsgId(stream: Stream, m: ReplicatedMsg): void {
  if (m.msgId !== undefined) stream.recordMsgId(m.msgId, m.seq, bigNsToMs(m.timestampNs));
}
