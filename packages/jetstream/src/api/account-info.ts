// `$JS.API.INFO`'s body: the catalogue's usage, the default tier's (unlimited) limits, the API statistics.
import type { AccountUsage } from '../catalogue/catalogue.js';

export interface ApiStats {
  total: number;
  errors: number;
}

export function accountInfoJson(usage: AccountUsage, api: ApiStats, domain: string | undefined): object {
  return {
    memory: usage.memory,
    storage: usage.storage,
    reserved_memory: 0,
    reserved_storage: 0,
    streams: usage.streams,
    consumers: usage.consumers,
    limits: {
      max_memory: -1,
      max_storage: -1,
      max_streams: -1,
      max_consumers: -1,
      max_ack_pending: -1,
      memory_max_stream_bytes: -1,
      storage_max_stream_bytes: -1,
      max_bytes_required: false,
    },
    ...(domain ? { domain } : {}),
    api: { total: api.total, errors: api.errors },
  };
}
