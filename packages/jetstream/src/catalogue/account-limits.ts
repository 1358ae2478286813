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

/**
 * An account's tiered limits (an account JWT's `tiered_limits`), by tier name: `R1`, `R3`… A stream's limits
 * are its replica count's tier's, and its streams, bytes and reservations count in that tier only.
 */
export type AccountTiers = Readonly<Record<string, AccountLimits>>;

/** nats-server's tierName: the tier of a stream with `replicas` replicas. */
export function tierName(replicas: number): string {
  return `R${Math.max(1, replicas)}`;
}

/** Bytes held, per storage type. */
export interface StorageUsage {
  readonly memory: number;
  readonly storage: number;
  /** Per tier (tierName of each stream's replicas); absent from an older report. */
  readonly tiers?: Readonly<Record<string, { readonly memory: number; readonly storage: number }>>;
}

/** The limits a stream's checks use: its tier's ('' = the account's one default tier). */
export interface SelectedLimits {
  readonly limits: AccountLimits;
  readonly tier: string;
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
   * accountReservation counts un-tiered limits (a tier's limits already are per replica).
   * `tiers`: the account's tiered limits; when present `limits` is not used for streams (nats-server keeps
   * either the default tier or the tiers).
   */
  constructor(
    public limits: AccountLimits,
    private readonly streams: AccountStreams,
    private readonly configs: AccountStreamConfigs = streams,
    private readonly replicated = false,
    public tiers: AccountTiers | undefined = undefined,
  ) {}

  /** New limits taking effect (an account JWT update): the next check uses them. */
  update(limits: AccountLimits, tiers: AccountTiers | undefined): void {
    this.limits = limits;
    this.tiers = tiers;
  }

  /** nats-server's selectLimits: the default tier, else the tier of `replicas`; undefined: none applies. */
  select(replicas: number): SelectedLimits | undefined {
    if (this.tiers === undefined) return { limits: this.limits, tier: '' };
    const tier = tierName(replicas);
    const limits = this.tiers[tier];
    return limits === undefined ? undefined : { limits, tier };
  }

  private mustSelect(replicas: number): SelectedLimits {
    const s = this.select(replicas);
    if (s === undefined) throw JsErrors.noLimits();
    return s;
  }

  /** nats-server's accountReservation: un-tiered limits are flat, so on a cluster a stream reserves per replica. */
  private reservationOf(tier: string, cfg: Readonly<StreamConfig>, bytes: number): number {
    return tier === '' && this.replicated && cfg.num_replicas > 1 ? bytes * cfg.num_replicas : bytes;
  }

  private inTier(tier: string, cfg: Readonly<StreamConfig>): boolean {
    return tier === '' || tierName(cfg.num_replicas) === tier;
  }

  /** STREAM.CREATE: max streams of its tier (the stream's own name not counted), then the stream's limits. */
  checkCreate(cfg: StreamConfig): void {
    const sel = this.mustSelect(cfg.num_replicas);
    const l = sel.limits;
    if (l.max_streams > 0) {
      let others = 0;
      for (const s of this.configs.values()) if (s.name !== cfg.name && this.inTier(sel.tier, s.config)) others++;
      if (others >= l.max_streams) throw JsErrors.maximumStreams();
    }
    this.checkStreamLimits(sel, cfg, Math.max(cfg.max_bytes, 0));
    this.checkMaxBytes(cfg);
  }

  /** STREAM.UPDATE, after checkMaxBytes and the update rules: the stream's limits with its new max_bytes. */
  checkUpdate(next: StreamConfig, previousReplicas = next.num_replicas): void {
    // nats-server's stream update: the new replica count's tier, else the old one's
    const sel = this.select(next.num_replicas) ?? this.mustSelect(previousReplicas);
    this.checkStreamLimits(sel, next, Math.max(next.max_bytes, 0));
  }

  /** nats-server's checkLimits: the stream's max_consumers, and its max_bytes reserved with its tier's others'. */
  private checkStreamLimits(sel: SelectedLimits, cfg: StreamConfig, addBytes: number): void {
    const l = sel.limits;
    if (cfg.max_consumers > 0 && l.max_consumers > 0 && cfg.max_consumers > l.max_consumers) throw JsErrors.maximumConsumers();
    const limit = cfg.storage === 'memory' ? l.max_memory : l.max_storage;
    if (limit < 0) return;
    let reserved = 0;
    for (const s of this.configs.values()) {
      if (s.name !== cfg.name && this.inTier(sel.tier, s.config) && s.config.storage === cfg.storage && s.config.max_bytes > 0) {
        reserved += this.reservationOf(sel.tier, s.config, s.config.max_bytes);
      }
    }
    if (reserved > limit || this.reservationOf(sel.tier, cfg, addBytes) > limit - reserved) {
      throw cfg.storage === 'memory' ? JsErrors.memoryResourcesExceeded() : JsErrors.storageResourcesExceeded();
    }
  }

  /** nats-server's checkStreamCfg part: max_bytes required by the account, or over its per-stream cap. */
  checkMaxBytes(cfg: StreamConfig): void {
    // nats-server's maxBytesLimits: no applicable tier, nothing required here (the limits check refuses it)
    const l = this.select(cfg.num_replicas)?.limits;
    if (l === undefined) return;
    if (l.max_bytes_required && cfg.max_bytes <= 0) throw JsErrors.streamMaxBytesRequired();
    const cap = cfg.storage === 'memory' ? l.memory_max_stream_bytes : l.storage_max_stream_bytes;
    if (cap > 0 && cfg.max_bytes > cap) throw JsErrors.streamMaxBytesExceedsAccount();
  }

  /** In a cluster: the account's bytes on every node (cluster/account-usage-gossip.ts), for publishExceeds. */
  clusterUsage: (() => StorageUsage) | undefined;

  /**
   * True when storing this message would take the account over its limit for `storage` (10002). In a cluster
   * the usage is every replica's and the message counts once per replica (nats-server's wouldExceedLimits);
   * a tier's usage is its streams' and its limit scales by the replicas (tiers are per replica). No tier
   * for the stream's replicas: refused.
   */
  publishExceeds(storage: 'file' | 'memory', subject: string, headerBytes: number, dataBytes: number, replicas = 1): boolean {
    const sel = this.select(replicas);
    if (sel === undefined) return true;
    const limit = storage === 'memory' ? sel.limits.max_memory : sel.limits.max_storage;
    if (limit < 0) return false;
    let used = 0;
    if (this.clusterUsage !== undefined) {
      const all = this.clusterUsage();
      const u = sel.tier === '' ? all : all.tiers?.[sel.tier];
      used = u === undefined ? 0 : storage === 'memory' ? u.memory : u.storage;
    } else {
      // Exact, O(streams of this account), and only for an account with a limit on this storage type.
      for (const s of this.streams.values()) if (s.config.storage === storage && this.inTier(sel.tier, s.config)) used += s.store.state().bytes;
    }
    const copies = this.replicated ? Math.max(1, replicas) : 1;
    const scaledLimit = sel.tier === '' ? limit : limit * copies;
    return used + accountedMessageBytes(storage, Buffer.byteLength(subject), headerBytes, dataBytes) * copies > scaledLimit;
  }

  /** The max_bytes of the account's streams (of `tier` only when given), per storage type (`$JS.API.INFO`'s reserved_*). */
  reserved(tier = ''): { memory: number; storage: number } {
    let memory = 0;
    let storage = 0;
    for (const s of this.configs.values()) {
      if (!this.inTier(tier, s.config)) continue;
      const bytes = Math.max(s.config.max_bytes, 0);
      if (s.config.storage === 'memory') memory += bytes;
      else storage += bytes;
    }
    return { memory, storage };
  }

  /** How many consumers a stream may have: its own max_consumers or the account's, whichever is lower. */
  maxConsumersOf(cfg: Readonly<StreamConfig>): number {
    const own = cfg.max_consumers;
    const account = this.select(cfg.num_replicas)?.limits.max_consumers ?? -1;
    return own <= 0 || (account > 0 && account < own) ? account : own;
  }

  /** The account's max_ack_pending for a consumer of a stream with `cfg` (its tier's; 0 or less: none). */
  maxAckPendingOf(cfg: Readonly<StreamConfig>): number {
    return this.select(cfg.num_replicas)?.limits.max_ack_pending ?? -1;
  }
}
