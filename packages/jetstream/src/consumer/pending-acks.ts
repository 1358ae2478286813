// A consumer's pending acks by stream sequence. Keys arrive in ascending order (first deliveries) and mostly
// leave from the front (acks in order), so they live in an array window indexed by `sseq - base`: a V8 Map
// used that way with max_ack_pending-sized contents costs 0.4–0.8 µs per set/delete (its table is rebuilt
// over and over), the window a few ns. Keys far apart (a filter matching rarely) or one below the window
// switch to a Map, as before, until the set is empty again. Iteration is in ascending key order in the
// window (= insertion order, as the Map's) and in insertion order in the Map.

export interface PendingAck {
  /** Consumer sequence of the first delivery (nats-server keeps the original). */
  dseq: number;
  /** Time of the latest delivery (ms). */
  tsMs: number;
}

/** Empty window slots allowed per pending entry before the keys count as sparse. */
const MAX_HOLES_PER_ENTRY = 4;
const MIN_WINDOW_SLOTS = 4096;
/** Leading free slots dropped at once (amortises the copy). */
const COMPACT_AT = 1024;

export class PendingAcks implements Iterable<[number, PendingAck]> {
  private slots: (PendingAck | undefined)[] = [];
  /** Key of slots[0]. */
  private base = 0;
  /** First slot that may be in use. */
  private start = 0;
  private n = 0;
  /** Non-null while the keys are sparse or out of order: the plain Map. */
  private map: Map<number, PendingAck> | null = null;

  get size(): number {
    return this.map !== null ? this.map.size : this.n;
  }

  get(sseq: number): PendingAck | undefined {
    if (this.map !== null) return this.map.get(sseq);
    const i = sseq - this.base;
    return i >= this.start && i < this.slots.length ? this.slots[i] : undefined;
  }

  has(sseq: number): boolean {
    return this.get(sseq) !== undefined;
  }

  set(sseq: number, p: PendingAck): this {
    if (this.map !== null) {
      this.map.set(sseq, p);
      return this;
    }
    if (this.n === 0) this.reset(sseq);
    const i = sseq - this.base;
    if (i < this.start || !Number.isSafeInteger(i)) return this.toMap().set(sseq, p), this;
    const slots = this.slots;
    if (i < slots.length) {
      if (slots[i] === undefined) this.n++;
      slots[i] = p;
      return this;
    }
    if (i - this.start > Math.max(MIN_WINDOW_SLOTS, this.n * MAX_HOLES_PER_ENTRY)) return this.toMap().set(sseq, p), this;
    while (slots.length < i) slots.push(undefined);
    slots.push(p);
    this.n++;
    return this;
  }

  delete(sseq: number): boolean {
    if (this.map !== null) {
      const deleted = this.map.delete(sseq);
      if (this.map.size === 0) this.clear();
      return deleted;
    }
    const i = sseq - this.base;
    const slots = this.slots;
    if (i < this.start || i >= slots.length || slots[i] === undefined) return false;
    slots[i] = undefined;
    this.n--;
    if (this.n === 0) {
      this.reset(0);
      return true;
    }
    if (i === this.start) {
      let s = this.start + 1;
      while (s < slots.length && slots[s] === undefined) s++; // n > 0: an entry lies ahead
      this.start = s;
      if (s >= COMPACT_AT && s * 2 >= slots.length) {
        this.slots = slots.slice(s);
        this.base += s;
        this.start = 0;
      }
    }
    return true;
  }

  clear(): void {
    this.map = null;
    this.reset(0);
  }

  *entries(): IterableIterator<[number, PendingAck]> {
    if (this.map !== null) {
      yield* this.map.entries();
      return;
    }
    const slots = this.slots;
    for (let i = this.start; i < slots.length; i++) {
      const p = slots[i];
      if (p !== undefined) yield [this.base + i, p];
    }
  }

  *keys(): IterableIterator<number> {
    for (const [k] of this.entries()) yield k;
  }

  [Symbol.iterator](): IterableIterator<[number, PendingAck]> {
    return this.entries();
  }

  private reset(base: number): void {
    this.slots = [];
    this.base = base;
    this.start = 0;
    this.n = 0;
  }

  private toMap(): Map<number, PendingAck> {
    const map = new Map<number, PendingAck>();
    for (const [k, p] of this.entries()) map.set(k, p);
    this.reset(0);
    this.map = map;
    return map;
  }
}
