// nats-server's restore counts the archive's bytes as they arrive and checks them against the account's
// storage limit with the other streams' use and reservations (stream.go RestoreStream → checkAllLimits):
// over it, the restore fails with 10047 (file) or 10028 (memory), that error itself, not 10062.
import { JsErrors } from '../api/api-errors.js';
import type { ApiError } from '../api/api-error.js';
import type { AccountLimits } from '../catalogue/account-limits.js';
import type { OpenStreams } from '../catalogue/open-streams.js';
import type { StreamConfig } from '../stream/stream-config-types.js';

export function restoreBytesError(limits: AccountLimits, streams: OpenStreams, cfg: StreamConfig, bytes: number): ApiError | null {
  const limit = cfg.storage === 'memory' ? limits.max_memory : limits.max_storage;
  if (limit < 0) return null;
  let used = 0;
  for (const s of streams.values()) {
    if (s.name === cfg.name || s.config.storage !== cfg.storage) continue;
    used += Math.max(s.store.state().bytes, s.config.max_bytes > 0 ? s.config.max_bytes : 0);
  }
  if (used + bytes <= limit) return null;
  return cfg.storage === 'memory' ? JsErrors.memoryResourcesExceeded() : JsErrors.storageResourcesExceeded();
}
