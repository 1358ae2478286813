// The batches in flight on a stream's leader, for atomic (atomic-batch.ts) and fast (fast-batch.ts) batches:
// keyed by batch id, each with an idle timer that abandons it, and counted against a per-server total shared by
// every stream of that kind (2.14's globalInflightAtomicBatches / globalInflightFastBatches).

/** A server-wide count of one kind of batch. */
export interface InflightTotal {
  count: number;
}

interface Entry<T> {
  value: T;
  timer: NodeJS.Timeout;
}

export class InflightBatches<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly total: InflightTotal,
    private readonly timeoutMs: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  /** Registers a new batch, its idle timer started. */
  add(id: string, value: T): void {
    const timer = setTimeout(() => this.drop(id), this.timeoutMs);
    timer.unref();
    this.total.count++;
    this.entries.set(id, { value, timer });
  }

  /** Activity: the idle timer starts over. */
  touch(id: string): void {
    this.entries.get(id)?.timer.refresh();
  }

  /** The batch is ending (waiting for its last write): it no longer times out. */
  hold(id: string): void {
    const e = this.entries.get(id);
    if (e !== undefined) clearTimeout(e.timer);
  }

  drop(id: string): void {
    const e = this.entries.get(id);
    if (e === undefined) return;
    clearTimeout(e.timer);
    this.entries.delete(id);
    this.total.count--;
  }

  clear(): void {
    for (const id of [...this.entries.keys()]) this.drop(id);
  }
}
