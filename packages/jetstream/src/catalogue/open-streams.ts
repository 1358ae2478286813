// The streams open on this node, by name: every stream on a single node, this node's replicas' streams in
// a cluster. Lookups for the stream's own requests (INFO, PURGE, MSG.*, DIRECT.GET) and the storage sums.
import type { Stream } from '../stream/stream.js';
import { addStreamUsage, type AccountUsage } from './catalogue.js';
import { tierName, type StorageUsage } from './account-limits.js';

export interface ConsumerCounts {
  consumerCount(stream: string): number;
}

export class OpenStreams {
  private readonly byName = new Map<string, Stream>();

  get(name: string): Stream | undefined {
    return this.byName.get(name);
  }

  values(): IterableIterator<Stream> {
    return this.byName.values();
  }

  get size(): number {
    return this.byName.size;
  }

  set(stream: Stream): void {
    this.byName.set(stream.name, stream);
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  /** Removes `stream` unless another stream took its name meanwhile (a replica re-created under the same name). */
  deleteIfCurrent(stream: Stream): void {
    if (this.byName.get(stream.name) === stream) this.byName.delete(stream.name);
  }

  /** Stops every stream taking publishes (stores stay open for the consumers' last writes). */
  stopAll(): void {
    for (const s of this.byName.values()) s.stop();
  }

  /** Flushes and closes every store, then forgets the streams. */
  async closeAll(): Promise<void> {
    for (const s of this.byName.values()) {
      await s.store.flush().catch(() => undefined);
      await s.store.close().catch(() => undefined);
    }
    this.byName.clear();
  }

  /** Bytes per storage type over the streams open here. */
  storageBytes(): StorageUsage {
    let memory = 0;
    let storage = 0;
    const tiers: Record<string, { memory: number; storage: number }> = {};
    for (const s of this.byName.values()) {
      const bytes = s.store.state().bytes;
      const t = (tiers[tierName(s.config.num_replicas)] ??= { memory: 0, storage: 0 });
      if (s.config.storage === 'memory') {
        memory += bytes;
        t.memory += bytes;
      } else {
        storage += bytes;
        t.storage += bytes;
      }
    }
    return { memory, storage, tiers };
  }

  /** Bytes per storage type and consumers over the streams open here. */
  usage(consumers: ConsumerCounts): AccountUsage {
    const usage: AccountUsage = { memory: 0, storage: 0, streams: 0, consumers: 0, tiers: {} };
    for (const s of this.byName.values()) {
      addStreamUsage(usage, tierName(s.config.num_replicas), s.config.storage, s.store.state().bytes, consumers.consumerCount(s.name));
    }
    return usage;
  }
}
