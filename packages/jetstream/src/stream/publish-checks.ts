// The checks a message passes before a stream stores it, in nats-server's order (reference §9).
// Pure: the stream supplies a view of its state, so the rules are unit-tested without a store.
import { decodeHeaders, type NatsHeaders } from '@flotilla/protocol';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { messageTtlHeaderError } from './message-ttl.js';
import { counterHeaderError } from './msg-counter.js';
import { SCHEDULE_HEADER_KEYS, scheduleHeaderVerdict, type ScheduleHeaders } from './msg-schedule.js';
import { setHeader } from './msg-counter.js';
import { FEATURE_HEADER_KEYS, unsupportedBatchError, type FeatureHeaders } from './unsupported-headers.js';

/** nats-server refuses header blocks above 64 KiB. */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface PublishHeaders extends FeatureHeaders, ScheduleHeaders {
  msgId?: string;
  expectedStream?: string;
  expectedLastSeq?: string;
  expectedLastSubjectSeq?: string;
  expectedLastSubjectSeqSubject?: string;
  expectedLastMsgId?: string;
  rollup?: string;
  ttl?: string;
  batchSeq?: string;
  batchCommit?: string;
}

const KEYS: Record<string, keyof PublishHeaders> = {
  'Nats-Msg-Id': 'msgId',
  'Nats-Expected-Stream': 'expectedStream',
  'Nats-Expected-Last-Sequence': 'expectedLastSeq',
  'Nats-Expected-Last-Subject-Sequence': 'expectedLastSubjectSeq',
  'Nats-Expected-Last-Subject-Sequence-Subject': 'expectedLastSubjectSeqSubject',
  'Nats-Expected-Last-Msg-Id': 'expectedLastMsgId',
  'Nats-Rollup': 'rollup',
  'Nats-TTL': 'ttl',
  'Nats-Batch-Sequence': 'batchSeq',
  'Nats-Batch-Commit': 'batchCommit',
  ...FEATURE_HEADER_KEYS,
  ...SCHEDULE_HEADER_KEYS,
};

/** The JetStream headers of a header block (first value of each, exact case); null if unparsable. */
export function readPublishHeaders(block: Uint8Array): PublishHeaders | null {
  let parsed: NatsHeaders;
  try {
    parsed = decodeHeaders(block);
  } catch {
    return null;
  }
  const out: PublishHeaders = {};
  for (const [key, value] of parsed.entries) {
    const field = KEYS[key];
    if (field !== undefined && out[field] === undefined) out[field] = value;
  }
  return out;
}

/** What a check needs to know of the stream. */
export interface PublishView {
  readonly name: string;
  readonly sealed: boolean;
  readonly allowRollup: boolean;
  readonly denyPurge: boolean;
  lastSeq(): number;
  lastSeqForSubject(subject: string): number;
  lastMsgId(): string;
  duplicateOf(msgId: string): number | undefined;
  /** The stream's allow_msg_ttl (absent: false). */
  readonly allowMsgTtl?: boolean;
  /** Deciding a committed atomic batch's message (stream/atomic-batch.ts): its Nats-Batch-Id is expected. */
  readonly allowAtomic?: boolean;
  /** The stream's allow_msg_counter (absent: false). */
  readonly allowMsgCounter?: boolean;
  /** The stream's allow_msg_schedules (absent: false). */
  readonly allowMsgSchedules?: boolean;
  /** The stream's subjects (a schedule's target must be one of them); absent: none. */
  readonly subjects?: readonly string[];
}

export type PublishDecision =
  /** `header`: the block to store instead of the published one (a schedule gets `Nats-Rollup: sub`). */
  | { kind: 'store'; msgId: string | undefined; rollup: 'sub' | 'all' | undefined; header?: Buffer }
  | { kind: 'duplicate'; seq: number; msgId: string }
  | { kind: 'reject'; error: ApiError }
  /** nats-server drops a message with an unknown Nats-Rollup value without a reply. */
  | { kind: 'drop' };

const STORE_PLAIN: PublishDecision = { kind: 'store', msgId: undefined, rollup: undefined };

function parseSeq(text: string): number {
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

export function checkPublish(headers: PublishHeaders | null, subject: string, view: PublishView): PublishDecision {
  let msgId: string | undefined;
  let rollup: 'sub' | 'all' | undefined;
  if (headers !== null) {
    if (headers.expectedStream !== undefined && headers.expectedStream !== view.name) {
      return { kind: 'reject', error: JsErrors.expectedStreamMismatch() };
    }
    if (headers.msgId !== undefined && headers.msgId !== '') {
      msgId = headers.msgId;
      const seq = view.duplicateOf(msgId);
      if (seq !== undefined) return { kind: 'duplicate', seq, msgId };
    }
    if (headers.expectedLastSubjectSeq !== undefined) {
      // 2.11+: the check may name another subject than the one published to.
      const actual = view.lastSeqForSubject(headers.expectedLastSubjectSeqSubject || subject);
      if (parseSeq(headers.expectedLastSubjectSeq) !== actual) {
        return { kind: 'reject', error: JsErrors.wrongLastSequence(actual) };
      }
    } else if (headers.expectedLastSubjectSeqSubject) {
      return { kind: 'reject', error: JsErrors.expectedLastSubjectSeqMissing() };
    }
    if (headers.expectedLastSeq !== undefined) {
      const actual = view.lastSeq();
      if (parseSeq(headers.expectedLastSeq) !== actual) return { kind: 'reject', error: JsErrors.wrongLastSequence(actual) };
    }
    if (headers.expectedLastMsgId !== undefined) {
      const actual = view.lastMsgId();
      if (headers.expectedLastMsgId !== actual) return { kind: 'reject', error: JsErrors.wrongLastMsgId(actual) };
    }
    if (headers.rollup !== undefined) {
      if (headers.rollup !== 'sub' && headers.rollup !== 'all') return { kind: 'drop' };
      if (!view.allowRollup || view.denyPurge) return { kind: 'reject', error: JsErrors.rollupNotPermitted() };
      rollup = headers.rollup;
    }
  }
  if (view.sealed) return { kind: 'reject', error: JsErrors.streamSealed() };
  if (msgId === undefined && rollup === undefined) return STORE_PLAIN;
  return { kind: 'store', msgId, rollup };
}

/**
 * The checks a publish passes before it is stored (one node) or proposed (a stream leader), after the
 * resource check: a message without headers (the hot path) only meets `sealed`; one with headers is bounded
 * in size, then read and checked. `header` is null when the message has none.
 */
export function screenPublish(view: PublishView, subject: string, header: Uint8Array | null, sourced = false, dataLen = 0): PublishDecision {
  if (header === null) return view.sealed ? { kind: 'reject', error: JsErrors.streamSealed() } : STORE_PLAIN;
  if (header.length > MAX_HEADER_BYTES) return { kind: 'reject', error: JsErrors.headersTooLarge() };
  const headers = readPublishHeaders(header);
  const unsupported =
    headers === null
      ? null
      : sourced
        ? counterHeaderError(headers.incr, headers, view.allowMsgCounter === true, dataLen, true)
        : (unsupportedBatchError(headers, view.sealed, view.allowAtomic === true) ??
          counterHeaderError(headers.incr, headers, view.allowMsgCounter === true, dataLen, false) ??
          messageTtlHeaderError(headers.ttl, view.allowMsgTtl === true));
  if (unsupported !== null) return { kind: 'reject', error: unsupported };
  if (headers === null || sourced) return checkPublish(headers, subject, view);
  const schedule = scheduleHeaderVerdict(headers, subject, view.allowMsgSchedules === true, view.allowMsgTtl === true, view.subjects ?? [], Date.now());
  if ('error' in schedule) return { kind: 'reject', error: schedule.error };
  if (!schedule.rollupNeeded) return checkPublish(headers, subject, view);
  // A schedule replaces the older schedule of its subject: stored as a Nats-Rollup: sub message.
  const decision = checkPublish({ ...headers, rollup: 'sub' }, subject, view);
  return decision.kind === 'store' ? { ...decision, header: setHeader(header, 'Nats-Rollup', 'sub') } : decision;
}
