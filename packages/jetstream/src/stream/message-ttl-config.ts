// The stream config rules of per-message TTL and subject delete markers, as 2.14's checkStreamCfg applies them
// to a request that is not pedantic (a pedantic one is refused first: stream-pedantic.ts): a marker TTL turns allow_msg_ttl and
// allow_rollup_hdrs on (and deny_purge off), since a marker is a TTL'd roll-up. Mirrors may not have markers
// (each would take a sequence the origin does not have). Turning allow_msg_ttl off is refused by the update
// check (stream-config.ts).
import { JsErrors } from '../api/api-errors.js';
import type { StreamConfig } from './stream-config-types.js';

const NS_PER_S = 1_000_000_000;

export interface MessageTtlConfig {
  allowMsgTtl: boolean;
  markerTtlNs: number;
  allowRollup: boolean;
  denyPurge: boolean;
}

export function messageTtlConfig(req: Partial<StreamConfig>): MessageTtlConfig {
  const markerTtlNs = req.subject_delete_marker_ttl ?? 0;
  const out: MessageTtlConfig = {
    allowMsgTtl: req.allow_msg_ttl === true,
    markerTtlNs,
    allowRollup: req.allow_rollup_hdrs ?? false,
    denyPurge: req.deny_purge ?? false,
  };
  if (markerTtlNs > 0) {
    if (markerTtlNs < NS_PER_S) throw JsErrors.streamInvalidConfig('subject delete marker TTL must be at least 1 second');
    out.allowMsgTtl = true;
    if (!out.allowRollup) {
      out.allowRollup = true;
      out.denyPurge = false;
    }
  } else if (markerTtlNs < 0) {
    throw JsErrors.streamInvalidConfig('subject delete marker TTL must not be negative');
  }
  if (markerTtlNs > 0 && req.mirror !== undefined) throw JsErrors.streamInvalidConfig('subject delete markers forbidden on mirrors');
  return out;
}
