/**
 * A block: the records of consecutive sequences packed into one LevelDB value, keyed by the first
 * sequence, with an offset table to find one record inside it. Built in memory during an event-loop
 * tick, then written whole (one put per block instead of one per message).
 */
import type { BufferPool } from './buffer-pool.js';
import { RECORD_OVERHEAD, RecordCursor, viewOf, writeRecord } from './record-codec.js';

const INITIAL_SLOTS = 64;
const NOTHING = Buffer.alloc(0);

export class Block {
  /** Offset of each sequence's record (index seq - first), -1 when absent. */
  offsets: Int32Array;
  /** Bytes in use in `buf`. */
  end = 0;
  last: number;
  count = 0;
  /** The pooled buffer behind `buf`, returned by `release` unless a reader holds views into it. */
  pooled: Buffer | null = null;
  pool: BufferPool | null = null;
  /** Views into `buf` were handed out: it must never be reused. */
  exposed = false;
  private view: DataView;

  constructor(
    readonly first: number,
    public buf: Buffer,
    offsets?: Int32Array,
  ) {
    this.view = viewOf(buf);
    this.last = first - 1;
    this.offsets = offsets ?? new Int32Array(INITIAL_SLOTS).fill(-1);
  }

  static building(first: number, pool: BufferPool, minBytes: number): Block {
    const buf = pool.take(minBytes);
    const b = new Block(first, buf);
    if (buf.length === pool.bufferBytes) b.adopt(buf, pool);
    return b;
  }

  adopt(pooled: Buffer, pool: BufferPool): void {
    this.pooled = pooled;
    this.pool = pool;
  }

  /** Hands the pooled buffer back if no reader can see it; the block is unusable afterwards. */
  release(): void {
    if (this.pooled !== null && this.pool !== null && !this.exposed) this.pool.give(this.pooled);
    this.pooled = null;
    this.setBuffer(NOTHING);
  }

  get released(): boolean {
    return this.buf === NOTHING;
  }

  /** Bytes of memory this block holds. */
  memoryBytes(): number {
    return this.pooled?.length ?? this.buf.length;
  }

  /** Appends a record (seq > last). */
  add(seq: number, ts: bigint, subject: Uint8Array, header: Uint8Array, data: Uint8Array): void {
    const need = this.end + RECORD_OVERHEAD + subject.length + header.length + data.length;
    if (need > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < need) cap *= 2;
      const grown = Buffer.allocUnsafeSlow(cap);
      this.buf.copy(grown, 0, 0, this.end);
      if (this.pooled !== null && this.pool !== null && !this.exposed) this.pool.give(this.pooled);
      this.pooled = null;
      this.setBuffer(grown);
    }
    const slot = seq - this.first;
    if (slot >= this.offsets.length) {
      let n = this.offsets.length * 2;
      while (n <= slot) n *= 2;
      const grown = new Int32Array(n).fill(-1);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    this.offsets[slot] = this.end;
    this.end = writeRecord(this.view, this.buf, this.end, seq, ts, subject, header, data);
    this.last = seq;
    this.count++;
  }

  setBuffer(buf: Buffer): void {
    this.buf = buf;
    this.view = viewOf(buf);
  }

  /** The exact bytes to store. */
  value(): Buffer {
    return this.buf.subarray(0, this.end);
  }

  offsetOf(seq: number): number {
    const slot = seq - this.first;
    return slot >= 0 && slot < this.offsets.length ? this.offsets[slot] : -1;
  }

  /** Decodes a stored block value whose key says it starts at `first`. */
  static parse(buf: Buffer, first: number): Block {
    const cur = new RecordCursor(buf);
    let last = first - 1;
    let count = 0;
    for (let off = 0; off < buf.length; off = cur.end) {
      cur.readAt(off);
      last = cur.seq;
      count++;
    }
    const offsets = new Int32Array(Math.max(1, last - first + 1)).fill(-1);
    for (let off = 0; off < buf.length; off = cur.end) {
      cur.readAt(off);
      offsets[cur.seq - first] = off;
    }
    const b = new Block(first, buf, offsets);
    b.end = buf.length;
    b.last = last;
    b.count = count;
    return b;
  }

  /** A copy holding only the records `keep` accepts (erase, compaction of dead records). */
  filtered(keep: (seq: number) => boolean): Block {
    const cur = new RecordCursor(this.buf);
    const parts: Buffer[] = [];
    let bytes = 0;
    for (let slot = 0; slot <= this.last - this.first; slot++) {
      const off = this.offsets[slot];
      if (off < 0 || !keep(this.first + slot)) continue;
      cur.readAt(off);
      parts.push(this.buf.subarray(off, cur.end));
      bytes += cur.end - off;
    }
    return Block.parse(Buffer.concat(parts, bytes), this.first);
  }
}
