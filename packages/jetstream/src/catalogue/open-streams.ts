// The streams open on this node, by name: every stream on a single node, this node's replicas' streams in
// a cluster. Lookups for the stream's own requests (INFO, PURGE, MSG.*, DIRECT.GET) and the storage sums.
import type { Stream } from '../stream/stream.js';
import type { AccountUsage } from './catalogue.js';

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
  storageBytes(): { memory: number; storage: number } {
    let memory = 0;
    let storage = 0;
    for (const s of this.byName.values()) {
      const bytes = s.store.state().bytes;
      if (s.config.storage === 'memory') memory += bytes;
      else storage += bytes;
    }
    return { memory, storage };
  }

  /** Bytes per storage type and consumers over the streams open here. */
  usage(consumers: ConsumerCounts): AccountUsage {
    let memory = 0;
    let storage = 0;
    let count = 0;
    for (const s of this.byName.values()) {
      const bytes = s.store.state().bytes;
      if (s.config.storage === 'memory') memory += bytes;
      else storage += bytes;
      count += consumers.consumerCount(s.name);
    }
    return { memory, storage, streams: this.byName.size, consumers: count };
  }
}
