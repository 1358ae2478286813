// `$JS.API.INFO`'s body: the catalogue's usage, the account's limits, the API statistics. With tiered limits
// (an account JWT's tiered_limits) nats-server's JetStreamUsage: the top level holds the totals and limits
// left at zero, `tiers` each tier's usage, reservations and limits — every configured tier, and any tier a
// stream is in.
import type { AccountUsage } from '../catalogue/catalogue.js';
import { UNLIMITED_ACCOUNT_LIMITS, type AccountLimits, type AccountTiers } from '../catalogue/account-limits.js';
import { JS_API_LEVEL } from './api-level.js';

export interface ApiStats {
  total: number;
  errors: number;
}

/** The max_bytes of the account's streams per storage type (nats-server's reserved_memory / reserved_storage). */
export interface ReservedBytes {
  memory: number;
  storage: number;
}

const NONE_RESERVED: ReservedBytes = { memory: 0, storage: 0 };

/** nats-server's zero JetStreamAccountLimits: the top-level limits of an account with tiers. */
const ZERO_LIMITS: AccountLimits = {
  max_memory: 0,
  max_storage: 0,
  max_streams: 0,
  max_consumers: 0,
  max_ack_pending: 0,
  memory_max_stream_bytes: 0,
  storage_max_stream_bytes: 0,
  max_bytes_required: false,
};

/** The tiers `$JS.API.INFO` shows: the limits by tier and the reservations of a tier. */
export interface TiersView {
  readonly limits: AccountTiers;
  reserved(tier: string): ReservedBytes;
}

function limitsJson(limits: AccountLimits): object {
  return {
    max_memory: limits.max_memory,
    max_storage: limits.max_storage,
    max_streams: limits.max_streams,
    max_consumers: limits.max_consumers,
    max_ack_pending: limits.max_ack_pending,
    memory_max_stream_bytes: limits.memory_max_stream_bytes,
    storage_max_stream_bytes: limits.storage_max_stream_bytes,
    max_bytes_required: limits.max_bytes_required,
  };
}

function tiersJson(usage: AccountUsage, view: TiersView): Record<string, object> {
  const out: Record<string, object> = {};
  const names = new Set([...Object.keys(view.limits), ...Object.keys(usage.tiers ?? {})]);
  for (const name of [...names].sort()) {
    const u = usage.tiers?.[name] ?? { memory: 0, storage: 0, streams: 0, consumers: 0 };
    const r = view.reserved(name);
    out[name] = {
      memory: u.memory,
      storage: u.storage,
      reserved_memory: r.memory,
      reserved_storage: r.storage,
      streams: u.streams,
      consumers: u.consumers,
      limits: limitsJson(view.limits[name] ?? ZERO_LIMITS),
    };
  }
  return out;
}

export function accountInfoJson(
  usage: AccountUsage,
  api: ApiStats,
  domain: string | undefined,
  limits: AccountLimits = UNLIMITED_ACCOUNT_LIMITS,
  reserved: ReservedBytes = NONE_RESERVED,
  tiers?: TiersView,
): object {
  return {
    memory: usage.memory,
    storage: usage.storage,
    reserved_memory: reserved.memory,
    reserved_storage: reserved.storage,
    streams: usage.streams,
    consumers: usage.consumers,
    limits: limitsJson(tiers === undefined ? limits : ZERO_LIMITS),
    ...(domain ? { domain } : {}),
    api: { level: JS_API_LEVEL, total: api.total, errors: api.errors },
    ...(tiers !== undefined ? { tiers: tiersJson(usage, tiers) } : {}),
  };
}
