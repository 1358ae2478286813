// The rules that decide what happens to a publish, once for both writers: server storage, the header checks
// (screenPublish: dedupe, expected-*, rollup, sealed), the stream's max_msg_size, interest retention and the
// account's byte limits. The
// local writer passes the stream itself as the view; the replicated one a view that also counts the proposals
// in flight. Discard-new limits are not here: the store enforces them (the replicated writer projects them
// before a sequence is taken, see cluster/stream-replica-limits.ts).
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { messageTtlOf, raiseTtlHeader } from './message-ttl.js';
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
}

export type PublishRuling =
  /**
   * Store it; `msgId` enters the dedupe window, `rollup` purges the older messages once it is stored; `header`,
   * when set, is stored instead of the one published (a TTL raised to the delete-marker TTL).
   */
  | { kind: 'store'; msgId: string | undefined; rollup: 'sub' | 'all' | undefined; header?: Buffer }
  /** Interest retention with nobody interested: consume the sequence, store nothing (the id is still recorded). */
  | { kind: 'skip'; msgId: string | undefined }
  /** A Nats-Msg-Id seen within the window: answer with the original's sequence. */
  | { kind: 'duplicate'; seq: number; msgId: string }
  | { kind: 'reject'; error: ApiError }
  /** nats-server drops a message with an unknown Nats-Rollup value without a reply. */
  | { kind: 'drop' };

const SKIP_PLAIN: PublishRuling = { kind: 'skip', msgId: undefined };

/**
 * Decides a publish; `header` is null when the message has none. A plain message on a stream without
 * interest retention allocates nothing here (the hot path). `sourced`: a message a source feed brings, which
 * its origin already validated (as nats-server, its TTL, counter and schedule headers are stored verbatim).
 */
export function decidePublish(
  view: PublishRulesView,
  subject: string,
  header: Uint8Array | null,
  dataLen: number,
  sourced = false,
): PublishRuling {
  if (view.storageExceeded()) return { kind: 'reject', error: JsErrors.insufficientResources() };
  const decision = screenPublish(view, subject, header, sourced);
  if (decision.kind !== 'store') return decision;
  const cfg = view.config;
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
