/** One stored message. `header`/`data` may be views into a shared block buffer: treat them as read-only. */
export interface StoredMessage {
  seq: number;
  subject: string;
  header: Uint8Array;
  data: Uint8Array;
  /** Unix time in nanoseconds (bigint: safe beyond 2^53). */
  timestampNs: bigint;
}

export type DiscardPolicy = 'old' | 'new';

/** JetStream limits as the store enforces them. Values <= 0 mean "unlimited", like nats-server's -1. */
export interface StoreLimits {
  maxMsgs: number;
  maxBytes: number;
  /** 0n = unlimited. */
  maxAgeNs: bigint;
  maxMsgsPerSubject: number;
  /** Header + payload bytes; <= 0 = unlimited. */
  maxMsgSize: number;
  discard: DiscardPolicy;
  /** With discard new: reject a message whose subject is at max_msgs_per_subject (`MAX_MSGS_PER_SUBJECT`). */
  discardNewPerSubject: boolean;
  /** Messages expire by the TTL their header carries (StoreCoreOptions.messageTtl reads it). */
  msgTtl: boolean;
  /** Messages past max_age or their TTL are reported to the onExpired listener instead of removed here. */
  expiryReports: boolean;
}

export const DEFAULT_LIMITS: StoreLimits = {
  maxMsgs: -1,
  maxBytes: -1,
  maxAgeNs: 0n,
  maxMsgsPerSubject: -1,
  maxMsgSize: -1,
  discard: 'old',
  discardNewPerSubject: false,
  msgTtl: false,
  expiryReports: false,
};

/** Field names follow JetStream's StreamState so the API layer can copy them. */
export interface StoreState {
  messages: number;
  bytes: number;
  first_seq: number;
  /** ns; 0n when the store holds no message. */
  first_ts: bigint;
  last_seq: number;
  last_ts: bigint;
  num_subjects: number;
  num_deleted: number;
  /** Interior deleted sequences, only when asked for. */
  deleted?: number[];
}

export interface AppendOptions {
  /** Must equal last_seq + 1 when given (replicas apply the leader's sequence). */
  seq?: number;
  /** Defaults to now. */
  timestampNs?: bigint;
}

export interface AppendResult {
  seq: number;
  timestampNs: bigint;
}

export interface AppendInput {
  subject: string;
  header?: Uint8Array;
  data: Uint8Array;
  seq?: number;
  timestampNs?: bigint;
}

/** JetStream STREAM.PURGE request: `seq` purges below it (exclusive), `keep` keeps the newest N matching. */
export interface PurgeOptions {
  filter?: string;
  seq?: number;
  keep?: number;
}

/** Messages, first and last sequence for a filter (consumer num_pending). */
export interface FilteredState {
  msgs: number;
  first: number;
  last: number;
}
