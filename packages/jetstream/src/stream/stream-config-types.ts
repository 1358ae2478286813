// StreamConfig as JSON on the wire (snake_case, durations in ns as numbers), per
// ../shared/docs/reference/jetstream-api.md §4. Shared by the stream and consumer code.

export type RetentionPolicy = 'limits' | 'interest' | 'workqueue';
export type DiscardPolicy = 'old' | 'new';
export type StorageType = 'file' | 'memory';

export interface StreamSourceConfig {
  name: string;
  opt_start_seq?: number;
  opt_start_time?: string;
  filter_subject?: string;
  subject_transforms?: Array<{ src: string; dest: string }>;
  /** Another account's or domain's API prefix and deliver prefix (ExternalStream). */
  external?: { api: string; deliver: string };
}

export interface StreamConfig {
  name: string;
  description?: string;
  subjects: string[];
  retention: RetentionPolicy;
  max_consumers: number;
  max_msgs: number;
  max_bytes: number;
  /** ns; 0 = unlimited */
  max_age: number;
  max_msgs_per_subject: number;
  max_msg_size: number;
  discard: DiscardPolicy;
  discard_new_per_subject?: boolean;
  storage: StorageType;
  num_replicas: number;
  no_ack?: boolean;
  /** ns */
  duplicate_window: number;
  placement?: { cluster?: string; tags?: string[]; preferred?: string };
  mirror?: StreamSourceConfig;
  sources?: StreamSourceConfig[];
  sealed: boolean;
  deny_delete: boolean;
  deny_purge: boolean;
  allow_rollup_hdrs: boolean;
  allow_direct: boolean;
  mirror_direct: boolean;
  subject_transform?: { src: string; dest: string };
  republish?: { src: string; dest: string; headers_only?: boolean };
  compression?: 'none' | 's2';
  first_seq?: number;
  metadata?: Record<string, string>;
  consumer_limits?: { inactive_threshold?: number; max_ack_pending?: number };
  /** Messages may carry a Nats-TTL (message-ttl.ts); once on, it stays on. Absent: false. */
  allow_msg_ttl?: boolean;
  /** ns; > 0: a message removed by max_age or its TTL leaves a delete marker with this TTL (delete-markers.ts). */
  subject_delete_marker_ttl?: number;
  /**
   * ADR-56: `async` (R1 file streams only) acknowledges a publish once it is appended, before its group
   * commit reaches disk (persist-mode.ts). Absent: the default, fsync before every ack. Fixed at create.
   */
  persist_mode?: 'async';
  /** ADR-50 atomic batch publish (atomic-batch.ts). Absent: false. */
  allow_atomic?: boolean;
  /** A counter stream (msg-counter.ts): every message is a Nats-Incr; fixed at creation. Absent: false. */
  allow_msg_counter?: boolean;
  /** Messages may be schedules (msg-schedule.ts); once on, it stays on. Absent: false. */
  allow_msg_schedules?: boolean;
  /** Fast batch publish (2.14, stream/fast-batch.ts). */
  allow_batched?: boolean;
}
