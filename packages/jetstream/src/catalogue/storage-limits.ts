// The server's max_memory_store / max_file_store over the streams open on this node (every account's): the
// publish path's "storage exceeded" check and the reservation check of a new or grown stream.
import { JsErrors } from '../api/api-errors.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type { AccountStreams } from './account-limits.js';
import type { OpenStreams } from './open-streams.js';

export interface StorageLimitsOptions {
  /** -1 = unlimited */
  readonly maxMemoryStoreBytes: number;
  /** -1 = unlimited */
  readonly maxFileStoreBytes: number;
}

/** A usage sum this old answers the publish path: summing every stream per message would cost O(streams). */
const USAGE_STALE_MS = 50;

export class StorageLimits {
  private usageCheckedAtMs = 0;
  private fileOver = false;
  private memoryOver = false;

  constructor(
    private readonly options: StorageLimitsOptions,
    /** This account's streams: the one `checkReservation` is about is in here. */
    private readonly own: OpenStreams,
    /** Every account's streams on this node (this account's alone without accounts). */
    private readonly streams: AccountStreams = own,
  ) {}

  /** True while this storage type is over the server's limit. */
  exceeded(kind: 'file' | 'memory'): boolean {
    const limit = this.limitOf(kind);
    if (limit < 0) return false;
    const now = Date.now();
    if (now - this.usageCheckedAtMs > USAGE_STALE_MS) {
      this.usageCheckedAtMs = now;
      let file = 0;
      let memory = 0;
      for (const s of this.streams.values()) {
        if (s.config.storage === 'memory') memory += s.store.state().bytes;
        else file += s.store.state().bytes;
      }
      this.fileOver = this.options.maxFileStoreBytes >= 0 && file > this.options.maxFileStoreBytes;
      this.memoryOver = this.options.maxMemoryStoreBytes >= 0 && memory > this.options.maxMemoryStoreBytes;
    }
    return kind === 'memory' ? this.memoryOver : this.fileOver;
  }

  /** nats-server's reservation check: the max_bytes of every stream of a kind must fit the server limit. */
  checkReservation(cfg: StreamConfig): void {
    const limit = this.limitOf(cfg.storage);
    if (limit < 0) return;
    let reserved = 0;
    for (const s of this.streams.values()) {
      if (!(s.name === cfg.name && this.own.get(s.name) === s) && s.config.storage === cfg.storage && s.config.max_bytes > 0) reserved += s.config.max_bytes;
    }
    if (reserved + Math.max(cfg.max_bytes, 1) > limit) {
      throw cfg.storage === 'memory' ? JsErrors.memoryResourcesExceeded() : JsErrors.storageResourcesExceeded();
    }
  }

  private limitOf(kind: 'file' | 'memory'): number {
    return kind === 'memory' ? this.options.maxMemoryStoreBytes : this.options.maxFileStoreBytes;
  }
}
