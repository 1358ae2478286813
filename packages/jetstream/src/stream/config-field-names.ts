// Every JSON field name nats-server 2.14 decodes in stream and consumer requests (its StreamConfigRequest,
// Placement, StreamConsumerLimits, ConsumerConfig and CreateConsumerRequest structs). 2.14 decodes API
// requests strictly by default (jetstream.strict, DisallowUnknownFields), so a name outside these sets is
// refused as `invalid JSON: json: unknown field "<name>"`. Whether Flotilla implements a known field is
// stream/unsupported-config-fields.ts's business.

type Json = Record<string, unknown>;

export const STREAM_CONFIG_FIELDS: ReadonlySet<string> = new Set([
  'name', 'description', 'subjects', 'retention', 'max_consumers', 'max_msgs', 'max_bytes', 'max_age',
  'max_msgs_per_subject', 'max_msg_size', 'discard', 'storage', 'num_replicas', 'no_ack', 'duplicate_window',
  'placement', 'mirror', 'sources', 'compression', 'first_seq', 'subject_transform', 'republish', 'allow_direct',
  'mirror_direct', 'discard_new_per_subject', 'sealed', 'deny_delete', 'deny_purge', 'allow_rollup_hdrs',
  'consumer_limits', 'allow_msg_ttl', 'subject_delete_marker_ttl', 'allow_msg_counter', 'allow_atomic',
  'allow_msg_schedules', 'persist_mode', 'allow_batched', 'metadata',
  // StreamConfigRequest's own field, beside the embedded StreamConfig.
  'pedantic',
]);

export const PLACEMENT_FIELDS: ReadonlySet<string> = new Set(['cluster', 'tags', 'preferred']);

export const STREAM_CONSUMER_LIMITS_FIELDS: ReadonlySet<string> = new Set(['inactive_threshold', 'max_ack_pending']);

export const CONSUMER_CONFIG_FIELDS: ReadonlySet<string> = new Set([
  'durable_name', 'name', 'description', 'deliver_policy', 'opt_start_seq', 'opt_start_time', 'ack_policy',
  'ack_wait', 'max_deliver', 'backoff', 'filter_subject', 'filter_subjects', 'replay_policy', 'rate_limit_bps',
  'sample_freq', 'max_waiting', 'max_ack_pending', 'flow_control', 'headers_only', 'max_batch', 'max_expires',
  'max_bytes', 'deliver_subject', 'deliver_group', 'idle_heartbeat', 'inactive_threshold', 'num_replicas',
  'mem_storage', 'direct', 'sourcing', 'metadata', 'pause_until', 'priority_groups', 'priority_policy',
  'priority_timeout',
]);

export const CONSUMER_CREATE_REQUEST_FIELDS: ReadonlySet<string> = new Set(['stream_name', 'config', 'action', 'pedantic']);

/**
 * The first key of `o` that 2.14 does not know, or undefined. Names match exactly: Go's decoder would also
 * take `"Name"` for `name`, but Flotilla reads the exact key, so a differently cased key is refused rather
 * than silently dropped.
 */
export function firstUnknownField(o: Json, known: ReadonlySet<string>): string | undefined {
  for (const key in o) if (!known.has(key)) return key;
  return undefined;
}
