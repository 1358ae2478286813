import type { ExpiredMessage } from './message-expiry.js';
import type {
  AppendInput,
  AppendOptions,
  AppendResult,
  FilteredState,
  PurgeOptions,
  StoreLimits,
  StoreState,
  StoredMessage,
} from './types.js';

/**
 * A stream's message store. Mutations apply to the in-memory view at once (so sequence numbers are
 * assigned synchronously and in call order) and their promises resolve when the change is durable
 * under the store's sync policy. Reads see every applied mutation. Errors are `StoreError`.
 */
export interface MessageStore {
  readonly kind: 'file' | 'memory';

  limits(): StoreLimits;
  /** Applies new limits (stream update) and enforces them at once. */
  updateLimits(limits: Partial<StoreLimits>): Promise<void>;

  append(subject: string, header: Uint8Array | undefined, data: Uint8Array, opts?: AppendOptions): Promise<AppendResult>;
  /**
   * The hot path's append: applied at once, no promise per message. Returns the sequence or throws
   * StoreError (a limit); the message is durable once a `flush()` called after it resolves.
   */
  appendNoWait(subject: string, header: Uint8Array | undefined, data: Uint8Array, timestampNs?: bigint): number;
  /** Appends in order; stops at the first rejected message (its error rejects the promise). */
  appendBatch(msgs: readonly AppendInput[]): Promise<AppendResult[]>;
  /** Consumes sequences `seq .. seq+count-1` without storing (they count as deleted). */
  skipMsgs(seq: number, count: number): Promise<void>;

  get(seq: number): Promise<StoredMessage | null>;
  /** Newest message whose subject matches `filter` (wildcards allowed). */
  lastBySubject(filter: string): Promise<StoredMessage | null>;
  /** First message with sequence >= startSeq matching `filter` ('' or '>' = all). */
  nextMatching(filter: string, startSeq: number): Promise<StoredMessage | null>;
  /** Up to `maxMsgs` messages from `startSeq` on, in stream order (consumers, catch-up). */
  readRange(startSeq: number, maxMsgs: number, filter?: string): Promise<StoredMessage[]>;
  /** First sequence whose message is at or after `timestampNs` (deliver_policy by_start_time); last_seq + 1 if none. */
  seqFromTime(timestampNs: bigint): number;
  /** Newest sequence of each subject matching `filter`, ascending (deliver_policy last_per_subject). */
  lastSeqsPerSubject(filter: string): number[];
  /** Sequence of the newest message on exactly `subject`, 0 if none (Nats-Expected-Last-Subject-Sequence). */
  lastSeqForSubject(subject: string): number;

  /** Removes one message; `erase` (the default) also overwrites its bytes on disk. False if absent. */
  delete(seq: number, opts?: { erase?: boolean }): Promise<boolean>;
  /** JetStream purge; returns the number of messages removed. */
  purge(opts?: PurgeOptions): Promise<number>;
  /** Removes everything below `seq`; past the end it moves the sequence on (next append gets `seq`). */
  compact(seq: number): Promise<number>;

  state(opts?: { deleted?: boolean }): StoreState;
  filteredState(filter: string, startSeq: number): FilteredState;
  subjectCounts(filter?: string): Map<string, number>;

  /** Whole-store stream for replica catch-up; `restore` replaces this store's contents with one. */
  snapshot(): AsyncIterable<Uint8Array>;
  restore(source: AsyncIterable<Uint8Array>): Promise<void>;

  /** Resolves when every mutation so far is durable under the sync policy (an interval store: written). */
  flush(): Promise<void>;
  /** Resolves when every mutation so far is synced to disk, whatever the sync policy. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /**
   * Receives the messages due to expire while limits.expiryReports is set (they stay until removed by the
   * caller; each is reported again after a while if it stays). Null stops the reports.
   */
  onExpired(listener: ((due: readonly ExpiredMessage[]) => void) | null): void;
  /** Damaged runs of records found (and left out) when the store opened; file stores only. */
  damageFound?(): number;
}
