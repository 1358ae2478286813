// `$JS.API.INFO`'s body: the catalogue's usage, the account's limits (one default tier: configured accounts
// have no tiers, so nats-server shows none), the API statistics.
import type { AccountUsage } from '../catalogue/catalogue.js';
import { UNLIMITED_ACCOUNT_LIMITS, type AccountLimits } from '../catalogue/account-limits.js';
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

export function accountInfoJson(
  usage: AccountUsage,
  api: ApiStats,
  domain: string | undefined,
  limits: AccountLimits = UNLIMITED_ACCOUNT_LIMITS,
  reserved: ReservedBytes = NONE_RESERVED,
): object {
  return {
    memory: usage.memory,
    storage: usage.storage,
    reserved_memory: reserved.memory,
    reserved_storage: reserved.storage,
    streams: usage.streams,
    consumers: usage.consumers,
    limits: {
      max_memory: limits.max_memory,
      max_storage: limits.max_storage,
      max_streams: limits.max_streams,
      max_consumers: limits.max_consumers,
      max_ack_pending: limits.max_ack_pending,
      memory_max_stream_bytes: limits.memory_max_stream_bytes,
      storage_max_stream_bytes: limits.storage_max_stream_bytes,
      max_bytes_required: limits.max_bytes_required,
    },
    ...(domain ? { domain } : {}),
    api: { level: JS_API_LEVEL, total: api.total, errors: api.errors },
  };
}
