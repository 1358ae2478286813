// Publish headers a nats-server 2.11–2.14 stream acts on only when the stream allows the feature
// (allow_atomic, allow_msg_counter, allow_msg_schedules). All three are implemented now; what is left here is
// the batch check for a stream without allow_atomic (an allow_atomic stream's batch messages go to
// atomic-batch.ts first). Nats-Incr (msg-counter.ts), Nats-TTL (message-ttl.ts) and the Nats-Schedule*
// headers (msg-schedule.ts) are checked after it, in that order, as 2.14 does.
// Errors and their order follow 2.14's processJetStreamMsg / checkMsgHeadersPreClusteredProposal
// (stream.go, jetstream_batching.go):
//   Nats-Batch-Id (non-empty)      → 10174 atomic publish is disabled (after sealed, as its batch path does)
// Headers 2.14 ignores on a plain publish stay ignored, as there: Nats-Batch-Sequence and Nats-Batch-Commit
// without Nats-Batch-Id, the other Nats-Schedule-* headers without Nats-Schedule, and Nats-Required-Api-Level
// (2.14 checks it on API requests and inside batches only: requiredApiLevelError below is that API-side check,
// for the endpoint dispatch to call). Fast batches are announced by a reply subject
// ending in `.$FI`, not a header; they are not detected here.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';

/** The values readPublishHeaders collects for this check (first value of each, exact case). */
export interface FeatureHeaders {
  batchId?: string;
  incr?: string;
}

/** Header name → field, merged into readPublishHeaders' table so the block is decoded once. */
export const FEATURE_HEADER_KEYS: Readonly<Record<string, keyof FeatureHeaders>> = {
  'Nats-Batch-Id': 'batchId',
  'Nats-Incr': 'incr',
};

/**
 * The error a 2.14 stream without atomic batches answers `h` with, or null when it would go on.
 * `inAtomicBatch`: a message of a committed batch on an allow_atomic stream (stream/atomic-batch.ts).
 */
export function unsupportedBatchError(h: FeatureHeaders, sealed: boolean, inAtomicBatch = false): ApiError | null {
  if (h.batchId && !inAtomicBatch) return sealed ? JsErrors.streamSealed() : JsErrors.atomicPublishDisabled();
  return null;
}

// The API level and its request check live in api/api-level.ts (re-exported for existing importers).
export { JS_API_LEVEL, requiredApiLevelError } from '../api/api-level.js';
