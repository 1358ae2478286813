// The rules that decide what happens to a publish, once for both writers: server storage, the header checks
// (screenPublish: dedupe, expected-*, rollup, sealed), the stream's max_msg_size, interest retention and the
// account's byte limits. The
// local writer passes the stream itself as the view; the replicated one a view that also counts the proposals
// in flight. Discard-new limits are not here: the store enforces them (the replicated writer projects them
// before a sequence is taken, see cluster/stream-replica-limits.ts).
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { messageTtlOf, raiseTtlHeader } from './message-ttl.js';
import { applyIncrement, headerValue, INCR_HEADER, parseIncr, type CounterBase, type CounterState } from './msg-counter.js';
import { screenPublish, type PublishView } from './publish-checks.js';
import type { StreamConfig } from './stream-config-types.js';

/** What the rules read of a stream beyond the header checks' view. */
export interface PublishRulesView extends PublishView {
  readonly config: Readonly<StreamConfig>;
  /** True while this stream's storage type is over the server's limit. */
  storageExceeded(): boolean;
  /** Interest retention: some consumer would take a message on `subject`. */
  hasInterest(subject: string): boolean;
  /** The account's byte limit would be passed by this message (absent: no account limits, as in a cluster). */
  accountLimitExceeded?(subject: string, headerBytes: number, dataBytes: number): boolean;
  /** A counter stream: the subject's counter as its last message (stored or in flight) holds it. */
  counterBase?(subject: string): CounterBase;
}

/** A counter increment's result: what the subject's counter becomes, and the PubAck's `val`. */
export interface CounterOutcome {
  state: CounterState;
  total: string;
}

export type PublishRuling =
  /**
   * Store it; `msgId` enters the dedupe window, `rollup` purges the older messages once it is stored; `header`,
   * when set, is stored instead of the one published (a TTL raised to the delete-marker TTL).
   */
  | {
      kind: 'store';
      msgId: string | undefined;
      rollup: 'sub' | 'all' | undefined;
      header?: Buffer;
      /** A counter increment: the body to store instead of the published one, and the new total. */
      data?: Buffer;
      counter?: CounterOutcome;
    }
  /** Interest retention with nobody interested: consume the sequence, store nothing (the id is still recorded). */
  | { kind: 'skip'; msgId: string | undefined }
  /** A Nats-Msg-Id seen within the window: answer with the original's sequence. */
  | { kind: 'duplicate'; seq: number; msgId: string }
  | { kind: 'reject'; error: ApiError }
  /** nats-server drops a message with an unknown Nats-Rollup value without a reply. */
  | { kind: 'drop' }
  /** A counter's last message is not in memory: load it (CounterCache.load), then decide again. */
  | { kind: 'load' };

const SKIP_PLAIN: PublishRuling = { kind: 'skip', msgId: undefined };

/**
 * Decides a publish; `header` is null when the message has none. A plain message on a stream without
 * interest retention allocates nothing here (the hot path). `sourced`: a message a source feed brings, which
 * its origin already validated (as nats-server, its TTL, counter and schedule headers are stored verbatim,
 * except on a counter stream, which adds the origin's total to its own: msg-counter.ts).
 */
export function decidePublish(
  view: PublishRulesView,
  subject: string,
  header: Uint8Array | null,
  dataLen: number,
  sourced = false,
  /** The body itself: read only on a counter stream (a sourced total). */
  data?: Buffer,
): PublishRuling {
  if (view.storageExceeded()) return { kind: 'reject', error: JsErrors.insufficientResources() };
  const decision = screenPublish(view, subject, header, sourced, dataLen);
  if (decision.kind !== 'store') return decision;
  const cfg = view.config;
  if (cfg.allow_msg_counter === true) return decideIncrement(view, decision, subject, header, data);
  if (cfg.max_msg_size > 0 && (header === null ? 0 : header.length) + dataLen > cfg.max_msg_size) {
    return { kind: 'reject', error: JsErrors.messageSizeExceeds() };
  }
  if (cfg.retention === 'interest' && !view.hasInterest(subject)) {
    return decision.msgId === undefined ? SKIP_PLAIN : { kind: 'skip', msgId: decision.msgId };
  }
  // After the interest skip, as nats-server's wouldExceedLimits: a skipped message stores nothing.
  if (view.accountLimitExceeded?.(subject, header === null ? 0 : header.length, dataLen) === true) {
    return { kind: 'reject', error: JsErrors.accountResourcesExceeded() };
  }
  const markerTtlNs = cfg.subject_delete_marker_ttl ?? 0;
  if (markerTtlNs > 0 && header !== null) {
    const ttl = messageTtlOf(header);
    const raised = typeof ttl === 'number' ? raiseTtlHeader(Buffer.from(header), ttl, markerTtlNs, cfg.max_msgs_per_subject) : null;
    if (raised !== null) return { ...decision, header: raised };
  }
  return decision;
}

/**
 * A counter stream's message (after the header checks): without Nats-Incr it is refused (10169); otherwise
 * the stored body becomes the new total. Counter streams have limits retention and no TTLs (msg-counter.ts).
 */
function decideIncrement(
  view: PublishRulesView,
  decision: { kind: 'store'; msgId: string | undefined; rollup: 'sub' | 'all' | undefined },
  subject: string,
  header: Uint8Array | null,
  data: Buffer | undefined,
): PublishRuling {
  const text = headerValue(header, INCR_HEADER);
  const incr = text === undefined || text === '' ? null : parseIncr(text);
  if (incr === null || header === null) return { kind: 'reject', error: JsErrors.messageIncrMissing() };
  const base = view.counterBase?.(subject) ?? 'load';
  if (base === 'load') return { kind: 'load' };
  if (base === 'broken') return { kind: 'reject', error: JsErrors.counterBroken() };
  const result = applyIncrement(base, incr, Buffer.from(header.buffer, header.byteOffset, header.byteLength), data ?? EMPTY);
  if (!('data' in result)) return { kind: 'reject', error: result };
  const maxMsgSize = view.config.max_msg_size;
  if (maxMsgSize > 0 && result.header.length + result.data.length > maxMsgSize) {
    return { kind: 'reject', error: JsErrors.messageSizeExceeds() };
  }
  return { ...decision, header: result.header, data: result.data, counter: { state: result.state, total: result.total } };
}

const EMPTY = Buffer.alloc(0);
