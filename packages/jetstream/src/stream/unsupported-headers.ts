// Publish headers a nats-server 2.11–2.14 stream acts on only when the stream allows the feature
// (allow_atomic). Flotilla refuses that field
// (unsupported-config-fields.ts), so every stream here is one that does not allow it, and a message using
// it gets the PubAck error nats-server sends on such a stream, instead of being stored as if the header
// meant nothing. (Nats-Incr: msg-counter.ts, Nats-TTL: message-ttl.ts and the Nats-Schedule* headers:
// msg-schedule.ts are implemented, checked after the batch check in that order, as 2.14 does.)
// Errors and their order follow 2.14's processJetStreamMsg / checkMsgHeadersPreClusteredProposal
// (stream.go, jetstream_batching.go):
//   Nats-Batch-Id (non-empty)      → 10174 atomic publish is disabled (after sealed, as its batch path does)
// Headers 2.14 ignores on a plain publish stay ignored, as there: Nats-Batch-Sequence and Nats-Batch-Commit
// without Nats-Batch-Id, the other Nats-Schedule-* headers without Nats-Schedule, and Nats-Required-Api-Level
// (2.14 checks it on API requests and inside batches only: requiredApiLevelError below is that API-side check,
// for the endpoint dispatch to call). Fast batches are announced by a reply subject
// ending in `.$FI`, not a header; they are not detected here.
import { decodeHeaders } from '@flotilla/protocol';
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

/** The error a 2.14 stream without atomic batches answers `h` with, or null when it would go on. */
export function unsupportedBatchError(h: FeatureHeaders, sealed: boolean): ApiError | null {
  if (h.batchId) return sealed ? JsErrors.streamSealed() : JsErrors.atomicPublishDisabled();
  return null;
}

/**
 * The JetStream API level Flotilla implements: 0, that of nats-server 2.10 (2.11 is 1, 2.14 is 4). It rises
 * as issue 20 lands the 2.11+ features.
 */
export const JS_API_LEVEL = 0;

/** Go's strconv.Atoi. */
const GO_ATOI = /^[+-]?[0-9]+$/;

/**
 * 2.14's errorOnRequiredApiLevel for a `$JS.API` request's header block: a `Nats-Required-Api-Level` above
 * ours, or not an integer, is 412 / 10185. Null when the request may proceed (no header, or a level we have).
 */
export function requiredApiLevelError(header: Uint8Array | null): ApiError | null {
  if (header === null || header.length === 0) return null;
  let level: string | undefined;
  try {
    level = decodeHeaders(header).entries.find(([k]) => k === 'Nats-Required-Api-Level')?.[1];
  } catch {
    return null;
  }
  if (level === undefined || level === '') return null;
  return !GO_ATOI.test(level) || Number.parseInt(level, 10) > JS_API_LEVEL ? JsErrors.requiredApiLevel() : null;
}
