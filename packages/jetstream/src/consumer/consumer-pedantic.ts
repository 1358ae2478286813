// Pedantic mode of a consumer create or update request (2.11+, the request's `pedantic: true`): where
// nats-server would silently adjust or default a value (setConsumerConfigDefaults), it refuses the request with
// 400 10157 `pedantic mode: <reason>` instead. Checked before applyConsumerDefaults, in 2.14.5's order.
// 2.14's remaining pedantic cases do not arise here: the server-wide `max_request_batch` limit (Flotilla has
// no such JetStream limit) and `ack_policy: flow_control` (refused by name).
import type { ApiError } from '../api/api-error.js';
import { jsError } from '../api/js-error-table.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { DEFAULT_ACK_WAIT_NS, type ConsumerConfig } from './consumer-config.js';

const pedantic = (err: string): ApiError => jsError('JSPedanticErrF', { err });

/** The refusal pedantic mode gives `cfg` on `stream`, or null when nothing would be adjusted. */
export function pedanticConsumerError(cfg: ConsumerConfig, stream: Readonly<StreamConfig>): ApiError | null {
  const neg = (v: number | undefined): boolean => v !== undefined && v < 0;
  if (cfg.max_deliver !== undefined && cfg.max_deliver < -1) return pedantic('max_deliver must be set to -1');
  if (neg(cfg.max_waiting)) return pedantic('max_waiting must not be negative');
  if (cfg.max_ack_pending !== undefined && cfg.max_ack_pending < -1) return pedantic('max_ack_pending must be set to -1');
  if (neg(cfg.max_batch)) return pedantic('max_batch must not be negative');
  if (neg(cfg.max_expires)) return pedantic('max_expires must not be negative');
  if (neg(cfg.max_bytes)) return pedantic('max_bytes must not be negative');
  if (neg(cfg.idle_heartbeat)) return pedantic('idle_heartbeat must not be negative');
  if (neg(cfg.inactive_threshold)) return pedantic('inactive_threshold must not be negative');
  if (neg(cfg.priority_timeout)) return pedantic('priority_timeout must not be negative');
  if (cfg.backoff !== undefined && cfg.backoff.length > 0) {
    // The ack wait the defaults would give it first (30s for explicit/all acks), then compared.
    const acks = cfg.ack_policy === 'explicit' || cfg.ack_policy === 'all';
    const ackWait = !cfg.ack_wait && acks ? DEFAULT_ACK_WAIT_NS : (cfg.ack_wait ?? 0);
    if (ackWait !== cfg.backoff[0]) return pedantic('first backoff value has to equal batch AckWait');
  }
  if (!cfg.max_ack_pending && (stream.consumer_limits?.max_ack_pending ?? 0) > 0) {
    return pedantic("max_ack_pending must be set if it's configured in stream limits");
  }
  if (!cfg.inactive_threshold && (stream.consumer_limits?.inactive_threshold ?? 0) > 0) {
    return pedantic("inactive_threshold must be set if it's configured in stream limits");
  }
  return null;
}
