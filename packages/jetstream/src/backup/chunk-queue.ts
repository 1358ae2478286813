// The restore's incoming chunks as an async source with a bound: a chunk is acknowledged (its reply sent)
// once the restore has taken it, as nats-server acks after its pipe write; a client that sends more than
// `maxQueued` chunks without waiting for acks is refused.
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  private readonly queued: Array<{ data: Uint8Array; taken: () => void }> = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  private failure: Error | null = null;
  bytes = 0;

  constructor(private readonly maxQueued: number) {}

  /** False when the bound is exceeded (the caller fails the restore). */
  push(data: Uint8Array, taken: () => void): boolean {
    if (this.ended || this.failure !== null) return false;
    if (this.queued.length >= this.maxQueued) return false;
    this.queued.push({ data, taken });
    this.bytes += data.length;
    this.wake();
    return true;
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: Error): void {
    if (this.failure === null) this.failure = err;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.failure !== null) throw this.failure;
      const next = this.queued.shift();
      if (next !== undefined) {
        next.taken();
        yield next.data;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}
