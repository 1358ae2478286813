/**
 * Per-sequence metadata of live messages in typed-array chunks (no object per message): subject id,
 * accounted size, timestamp and links to the previous/next message of the same subject. Subject id 0 marks
 * a hole (deleted or never stored). Chunks, not one doubling array: growing never copies, trimming the front
 * drops whole chunks, and dropped chunks are reused, so steady state touches no fresh memory (a page fault
 * costs ~50 µs on this project's VMs).
 */
const CHUNK_BITS = 16;
const CHUNK_SLOTS = 1 << CHUNK_BITS;
const SLOT_MASK = CHUNK_SLOTS - 1;
/** Emptied chunks kept for reuse. */
const SPARE_CHUNKS = 4;

class Chunk {
  readonly subj = new Uint32Array(CHUNK_SLOTS);
  readonly size = new Uint32Array(CHUNK_SLOTS);
  readonly ts = new BigInt64Array(CHUNK_SLOTS);
  readonly next = new Float64Array(CHUNK_SLOTS);
  readonly prev = new Float64Array(CHUNK_SLOTS);
}

export class SeqIndex {
  /** Sequence of slot 0 of the first chunk. */
  private base = 1;
  /** Slots in use: sequences base .. base + used - 1. */
  private used = 0;
  /** Sparse: a chunk that would hold only holes (a long skip) is never allocated. */
  private chunks: (Chunk | undefined)[] = [];
  private readonly spare: Chunk[] = [];

  reset(base: number): void {
    for (const c of this.chunks) this.recycle(c);
    this.chunks = [];
    this.base = base;
    this.used = 0;
  }

  isLive(seq: number): boolean {
    return this.subjOf(seq) !== 0;
  }

  /** Subject id of `seq`, 0 when it is a hole or outside the window. */
  subjOf(seq: number): number {
    const i = seq - this.base;
    if (i < 0 || i >= this.used) return 0;
    const c = this.chunks[i >>> CHUNK_BITS];
    return c === undefined ? 0 : c.subj[i & SLOT_MASK];
  }

  /** The accessors below are for sequences known to be live. */
  sizeOf(seq: number): number {
    const i = seq - this.base;
    return (this.chunks[i >>> CHUNK_BITS] as Chunk).size[i & SLOT_MASK];
  }

  tsOf(seq: number): bigint {
    const i = seq - this.base;
    return (this.chunks[i >>> CHUNK_BITS] as Chunk).ts[i & SLOT_MASK];
  }

  nextOf(seq: number): number {
    const i = seq - this.base;
    return (this.chunks[i >>> CHUNK_BITS] as Chunk).next[i & SLOT_MASK];
  }

  prevOf(seq: number): number {
    const i = seq - this.base;
    return (this.chunks[i >>> CHUNK_BITS] as Chunk).prev[i & SLOT_MASK];
  }

  /** Adds `seq` (>= base + used; the gap stays holes). `prevSeq` is the subject's previous live message. */
  add(seq: number, subjectId: number, size: number, ts: bigint, prevSeq: number): void {
    if (this.used === 0) {
      for (const c of this.chunks) this.recycle(c);
      this.chunks = [];
      this.base = seq;
    }
    const i = seq - this.base;
    const k = i >>> CHUNK_BITS;
    if (k >= this.chunks.length) this.chunks.length = k + 1;
    let c = this.chunks[k];
    if (c === undefined) {
      c = this.spare.pop() ?? new Chunk();
      this.chunks[k] = c;
    }
    const j = i & SLOT_MASK;
    c.subj[j] = subjectId;
    c.size[j] = size;
    c.ts[j] = ts;
    c.prev[j] = prevSeq;
    c.next[j] = 0;
    if (prevSeq !== 0) {
      const p = prevSeq - this.base;
      (this.chunks[p >>> CHUNK_BITS] as Chunk).next[p & SLOT_MASK] = seq;
    }
    this.used = i + 1;
  }

  /** Unlinks live `seq` from its subject chain and marks it a hole. */
  remove(seq: number): void {
    const i = seq - this.base;
    const c = this.chunks[i >>> CHUNK_BITS] as Chunk;
    const j = i & SLOT_MASK;
    const p = c.prev[j];
    const n = c.next[j];
    if (p !== 0) {
      const pi = p - this.base;
      if (pi >= 0) (this.chunks[pi >>> CHUNK_BITS] as Chunk).next[pi & SLOT_MASK] = n;
    }
    if (n !== 0) {
      const ni = n - this.base;
      (this.chunks[ni >>> CHUNK_BITS] as Chunk).prev[ni & SLOT_MASK] = p;
    }
    c.subj[j] = 0;
  }

  /** Drops the chunks that lie wholly below `firstSeq` (all holes by then). */
  trimBelow(firstSeq: number): void {
    let drop = 0;
    while (drop < this.chunks.length - 1 && firstSeq - this.base >= (drop + 1) * CHUNK_SLOTS) drop++;
    if (drop === 0) return;
    for (const c of this.chunks.splice(0, drop)) this.recycle(c);
    this.base += drop * CHUNK_SLOTS;
    this.used -= drop * CHUNK_SLOTS;
  }

  private recycle(c: Chunk | undefined): void {
    if (c === undefined || this.spare.length >= SPARE_CHUNKS) return;
    c.subj.fill(0); // holes everywhere; the other arrays are only read for live slots
    this.spare.push(c);
  }
}
