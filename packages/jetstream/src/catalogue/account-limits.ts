// One account's JetStream limits (nats-server's JetStreamAccountLimits, configured as `accounts { A: {
// jetstream: {...} } }`) and the checks they make: on stream create/update (max streams, max_consumers,
// reservations of max_bytes, max_bytes required or capped), on a publish (the account's stored bytes) and on
// consumer create (per-stream max consumers, max_ack_pending). The error order is nats-server 2.14's
// (jsNonClusteredStreamLimitsCheck, checkStreamCfg, configUpdateCheck, wouldExceedLimits, checkConsumerCfg).
import { JsErrors } from '../api/api-errors.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type { Stream } from '../stream/stream.js';

/** The JSON of `$JS.API.INFO`'s `limits`; -1 (or 0) = no limit. */
export interface AccountLimits {
  readonly max_memory: number;
  readonly max_storage: number;
  readonly max_streams: number;
  readonly max_consumers: number;
  readonly max_ack_pending: number;
  readonly memory_max_stream_bytes: number;
  readonly storage_max_stream_bytes: number;
  readonly max_bytes_required: boolean;
}

/** nats-server's dynamicJSAccountLimits: the global account without accounts, `jetstream: enabled`. */
export const UNLIMITED_ACCOUNT_LIMITS: AccountLimits = {
  max_memory: -1,
  max_storage: -1,
  max_streams: -1,
  max_consumers: -1,
  max_ack_pending: -1,
  memory_max_stream_bytes: -1,
  storage_max_stream_bytes: -1,
  max_bytes_required: false,
};

/** The streams of the account (every stream of its JetStream). */
export interface AccountStreams {
  values(): IterableIterator<Stream>;
}

/** nats-server's memStoreMsgSize / fileStoreMsgSize: what a message adds to the account's usage. */
export function accountedMessageBytes(storage: 'file' | 'memory', subjectBytes: number, headerBytes: number, dataBytes: number): number {
  if (storage === 'memory') return subjectBytes + headerBytes + dataBytes + 16;
  return headerBytes === 0 ? 30 + subjectBytes + dataBytes : 34 + subjectBytes + headerBytes + dataBytes;
}

/** The configs of the account's streams, for the create/update checks (in a cluster: the meta catalogue's). */
export interface AccountStreamConfigs {
  values(): IterableIterator<{ readonly name: string; readonly config: Readonly<StreamConfig> }>;
}

export class AccountLimitsCheck {
  /**
   * `configs`: where create/update count streams and reservations; the open streams unless given.
   * `replicated` (a cluster): a stream reserves its max_bytes once per replica, as nats-server's
   * accountReservation counts un-tiered limits.
   */
  constructor(
    readonly limits: AccountLimits,
    private readonly streams: AccountStreams,
    private readonly configs: AccountStreamConfigs = streams,
    private readonly replicated = false,
  ) {}

  private reservationOf(cfg: Readonly<StreamConfig>, bytes: number): number {
    return this.replicated && cfg.num_replicas > 1 ? bytes * cfg.num_replicas : bytes;
  }

  /** STREAM.CREATE: max streams (the stream's own name not counted), then the stream's limits. */
  checkCreate(cfg: StreamConfig): void {
    const l = this.limits;
    if (l.max_streams > 0) {
      let others = 0;
      for (const s of this.configs.values()) if (s.name !== cfg.name) others++;
      if (others >= l.max_streams) throw JsErrors.maximumStreams();
    }
    this.checkStreamLimits(cfg, Math.max(cfg.max_bytes, 0));
    this.checkMaxBytes(cfg);
  }

  /** STREAM.UPDATE, after checkMaxBytes and the update rules: the stream's limits with its new max_bytes. */
  checkUpdate(next: StreamConfig): void {
    this.checkStreamLimits(next, Math.max(next.max_bytes, 0));
  }

  /** nats-server's checkLimits: the stream's max_consumers, and its max_bytes reserved with the others'. */
  private checkStreamLimits(cfg: StreamConfig, addBytes: number): void {
    const l = this.limits;
    if (cfg.max_consumers > 0 && l.max_consumers > 0 && cfg.max_consumers > l.max_consumers) throw JsErrors.maximumConsumers();
    const limit = cfg.storage === 'memory' ? l.max_memory : l.max_storage;
    if (limit < 0) return;
    let reserved = 0;
    for (const s of this.configs.values()) {
      if (s.name !== cfg.name && s.config.storage === cfg.storage && s.config.max_bytes > 0) reserved += this.reservationOf(s.config, s.config.max_bytes);
    }
    if (reserved > limit || this.reservationOf(cfg, addBytes) > limit - reserved) {
      throw cfg.storage === 'memory' ? JsErrors.memoryResourcesExceeded() : JsErrors.storageResourcesExceeded();
    }
  }

  /** nats-server's checkStreamCfg part: max_bytes required by the account, or over its per-stream cap. */
  checkMaxBytes(cfg: StreamConfig): void {
    const l = this.limits;
    if (l.max_bytes_required && cfg.max_bytes <= 0) throw JsErrors.streamMaxBytesRequired();
    const cap = cfg.storage === 'memory' ? l.memory_max_stream_bytes : l.storage_max_stream_bytes;
    if (cap > 0 && cfg.max_bytes > cap) throw JsErrors.streamMaxBytesExceedsAccount();
  }

  /** In a cluster: the account's bytes on every node (cluster/account-usage-gossip.ts), for publishExceeds. */
  clusterUsage: (() => { readonly memory: number; readonly storage: number }) | undefined;

  /**
   * True when storing this message would take the account over its limit for `storage` (10002). In a cluster
   * the usage is every replica's and the message counts once per replica (nats-server's wouldExceedLimits,
   * un-tiered limits).
   */
  publishExceeds(storage: 'file' | 'memory', subject: string, headerBytes: number, dataBytes: number, replicas = 1): boolean {
    const limit = storage === 'memory' ? this.limits.max_memory : this.limits.max_storage;
    if (limit < 0) return false;
    let used = 0;
    if (this.clusterUsage !== undefined) {
      const u = this.clusterUsage();
      used = storage === 'memory' ? u.memory : u.storage;
    } else {
      // Exact, O(streams of this account), and only for an account with a limit on this storage type.
      for (const s of this.streams.values()) if (s.config.storage === storage) used += s.store.state().bytes;
    }
    const copies = this.replicated ? Math.max(1, replicas) : 1;
    return used + accountedMessageBytes(storage, Buffer.byteLength(subject), headerBytes, dataBytes) * copies > limit;
  }

  /** The max_bytes of the account's streams, per storage type (`$JS.API.INFO`'s reserved_*). */
  reserved(): { memory: number; storage: number } {
    let memory = 0;
    let storage = 0;
    for (const s of this.configs.values()) {
      const bytes = Math.max(s.config.max_bytes, 0);
      if (s.config.storage === 'memory') memory += bytes;
      else storage += bytes;
    }
    return { memory, storage };
  }

  /** How many consumers a stream may have: its own max_consumers or the account's, whichever is lower. */
  maxConsumersOf(cfg: Readonly<StreamConfig>): number {
    const own = cfg.max_consumers;
    const account = this.limits.max_consumers;
    return own <= 0 || (account > 0 && account < own) ? account : own;
  }

  /** The account's max_ack_pending (0 or less: none). */
  get maxAckPending(): number {
    return this.limits.max_ack_pending;
  }
}
