/**
 * Per-sequence metadata of live messages in flat typed arrays (no object per message): subject id,
 * accounted size, timestamp and links to the previous/next message of the same subject. Slot i holds
 * sequence `base + i`; subject id 0 marks a hole (deleted or never stored).
 */
const MIN_CAPACITY = 1024;

export class SeqIndex {
  base = 1;
  /** Slots in use: sequences base .. base + used - 1. */
  used = 0;
  subj: Uint32Array;
  size: Uint32Array;
  ts: BigInt64Array;
  next: Float64Array;
  prev: Float64Array;

  constructor() {
    this.subj = new Uint32Array(MIN_CAPACITY);
    this.size = new Uint32Array(MIN_CAPACITY);
    this.ts = new BigInt64Array(MIN_CAPACITY);
    this.next = new Float64Array(MIN_CAPACITY);
    this.prev = new Float64Array(MIN_CAPACITY);
  }

  reset(base: number): void {
    this.base = base;
    this.used = 0;
    this.subj.fill(0);
    this.next.fill(0);
    this.prev.fill(0);
  }

  /** Slot for `seq` or -1 when outside the window. */
  slot(seq: number): number {
    const i = seq - this.base;
    return i >= 0 && i < this.used ? i : -1;
  }

  isLive(seq: number): boolean {
    const i = seq - this.base;
    return i >= 0 && i < this.used && this.subj[i] !== 0;
  }

  /** Adds `seq` (>= base + used; the gap stays holes). */
  add(seq: number, subjectId: number, size: number, ts: bigint, prevSeq: number): void {
    if (this.used === 0) this.base = seq;
    const i = seq - this.base;
    if (i >= this.subj.length) this.grow(i + 1);
    this.subj[i] = subjectId;
    this.size[i] = size;
    this.ts[i] = ts;
    this.prev[i] = prevSeq;
    this.next[i] = 0;
    if (prevSeq !== 0) this.next[prevSeq - this.base] = seq;
    this.used = i + 1;
  }

  /** Unlinks `seq` from its subject chain and marks it a hole. */
  remove(seq: number): void {
    const i = seq - this.base;
    const p = this.prev[i];
    const n = this.next[i];
    if (p !== 0 && p >= this.base) this.next[p - this.base] = n;
    if (n !== 0) this.prev[n - this.base] = p;
    this.subj[i] = 0;
  }

  /** Frees slots below `firstSeq` once they are a large share of the arrays (amortised O(1)). */
  trimBelow(firstSeq: number): void {
    const drop = Math.min(firstSeq - this.base, this.used);
    if (drop < MIN_CAPACITY || drop < this.used / 2) return;
    const keep = this.used - drop;
    for (const a of [this.subj, this.size, this.ts, this.next, this.prev] as const) {
      (a as Uint32Array).copyWithin(0, drop, this.used);
    }
    this.subj.fill(0, keep, this.used);
    this.base += drop;
    this.used = keep;
  }

  private grow(minSlots: number): void {
    let cap = this.subj.length * 2;
    while (cap < minSlots) cap *= 2;
    const subj = new Uint32Array(cap);
    subj.set(this.subj);
    const size = new Uint32Array(cap);
    size.set(this.size);
    const ts = new BigInt64Array(cap);
    ts.set(this.ts);
    const next = new Float64Array(cap);
    next.set(this.next);
    const prev = new Float64Array(cap);
    prev.set(this.prev);
    this.subj = subj;
    this.size = size;
    this.ts = ts;
    this.next = next;
    this.prev = prev;
  }
}
