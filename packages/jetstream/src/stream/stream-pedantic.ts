// Pedantic mode of a stream create or update request (2.11+, `pedantic: true` in the request beside the
// config): where checkStreamCfg would silently adjust a value, it refuses the request instead — 10157
// `pedantic mode: …` for limits and the duplicate window, 10052 for subject delete markers that would turn
// TTLs or roll-ups on (2.14.5's texts and order). The mirror's inherited `mirror_direct` is checked where the
// origin is known (topology/origin-facts.ts). Cases of features Flotilla refuses by name (republish, schedules)
// cannot arise.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import type { StreamConfigRequest } from './stream-config.js';

const NS_PER_S = 1_000_000_000;
const DEFAULT_DUPLICATE_WINDOW_NS = 120 * NS_PER_S;

export const pedanticError = (err: string): ApiError => jsError('JSPedanticErrF', { err });

/** The request's `pedantic` flag; a value that is not a boolean is invalid JSON, as Go's decoder has it. */
export function pedanticFlag(body: Record<string, unknown>): boolean {
  const v = body['pedantic'];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw JsErrors.invalidJson();
  return v;
}

/** The refusal pedantic mode gives `req`, or null when checkStreamCfg would adjust nothing. */
export function pedanticStreamError(req: StreamConfigRequest): ApiError | null {
  const limits: Array<[keyof StreamConfigRequest, string]> = [
    ['max_msgs', 'max_msgs'],
    ['max_msgs_per_subject', 'max_msgs_per_subject'],
    ['max_bytes', 'max_bytes'],
    ['max_msg_size', 'max_msg_size'],
    ['max_consumers', 'max_consumers'],
  ];
  for (const [field, name] of limits) {
    const v = req[field];
    if (typeof v === 'number' && v < -1) return pedanticError(`${name} must be set to -1`);
  }
  const maxAge = req.max_age ?? 0;
  if (!req.duplicate_window && req.mirror === undefined && (req.sources?.length ?? 0) === 0 && maxAge !== 0 && maxAge < DEFAULT_DUPLICATE_WINDOW_NS) {
    return pedanticError('duplicate window cannot be bigger than max age');
  }
  const markerTtlNs = req.subject_delete_marker_ttl ?? 0;
  if (markerTtlNs >= NS_PER_S) {
    if (req.allow_msg_ttl !== true) return JsErrors.streamInvalidConfig('subject delete marker cannot be set if message TTLs are disabled');
    if (req.allow_rollup_hdrs !== true) return JsErrors.streamInvalidConfig('subject delete marker cannot be set if roll-ups are disabled');
  }
  return null;
}
