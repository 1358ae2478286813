/** MessageStore held in process memory (JetStream `storage: memory`). */
import { StoreCore, type StoreCoreOptions } from './store-core.js';
import type { StoredMessage } from './types.js';

const RESOLVED = Promise.resolve();
const NO_BYTES = new Uint8Array(0);
/**
 * Messages are copied into shared slabs rather than one allocation each: a separate ArrayBuffer per
 * message cost ~20 µs here (allocation, page faults, GC bookkeeping). A slab is freed by the GC once no
 * record (or reader) refers to it.
 */
const SLAB_BYTES = 64 * 1024;
/** The record array drops its dead front once it is this long and mostly dead. */
const TRIM_MIN_SLOTS = 4096;

/** Where a message's bytes are: header then payload, `off` into `buf`. Views are made on read. */
interface MemoryRecord {
  buf: Buffer;
  off: number;
  headerLen: number;
  dataLen: number;
}

export class MemoryStore extends StoreCore {
  readonly kind = 'memory' as const;
  /** records[seq - recordBase]; undefined = not stored. */
  private records: (MemoryRecord | undefined)[] = [];
  private recordBase = 1;
  private slab: Buffer = Buffer.alloc(0);
  private slabUsed = 0;

  constructor(opts: StoreCoreOptions = {}) {
    super(opts);
  }

  /** nats-server memstore: subject + header + payload + 16. */
  protected accountedSize(subjectBytes: number, headerLen: number, dataLen: number): number {
    return subjectBytes + headerLen + dataLen + 16;
  }

  protected keepRecord(seq: number, _ts: bigint, _subjectId: number, header: Uint8Array, data: Uint8Array): void {
    // One copy: the caller may reuse its buffers.
    const need = header.length + data.length;
    let buf: Buffer;
    let off: number;
    if (need > SLAB_BYTES / 4) {
      buf = Buffer.allocUnsafeSlow(need);
      off = 0;
    } else {
      if (this.slabUsed + need > this.slab.length) {
        this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
        this.slabUsed = 0;
      }
      buf = this.slab;
      off = this.slabUsed;
      this.slabUsed += need;
    }
    buf.set(header, off);
    buf.set(data, off + header.length);
    if (this.records.length === 0) this.recordBase = seq;
    const i = seq - this.recordBase;
    while (this.records.length < i) this.records.push(undefined); // skipped sequences
    this.records.push({ buf, off, headerLen: header.length, dataLen: data.length });
  }

  protected forgetRecord(seq: number): void {
    const i = seq - this.recordBase;
    if (i < 0 || i >= this.records.length) return;
    this.records[i] = undefined;
    // Drop the dead front in one go once it dominates (amortised O(1) per removal).
    const dead = this.firstSeq - this.recordBase;
    if (dead >= TRIM_MIN_SLOTS && dead > this.records.length / 2) {
      this.records = this.records.slice(dead);
      this.recordBase += dead;
    }
  }

  protected forgetAll(): void {
    this.records = [];
  }

  protected sequencesMoved(): void {}

  protected async readRecords(seqs: readonly number[]): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const { index, subjects } = this;
    for (const seq of seqs) {
      const rec = this.records[seq - this.recordBase];
      const id = index.subjOf(seq);
      if (rec === undefined || id === 0) continue;
      out.push({ seq, subject: subjects.names[id], ...this.views(rec), timestampNs: index.tsOf(seq) });
    }
    return out;
  }

  private views(rec: MemoryRecord): { header: Uint8Array; data: Uint8Array } {
    const base = rec.buf.byteOffset + rec.off;
    return {
      header: rec.headerLen === 0 ? NO_BYTES : new Uint8Array(rec.buf.buffer, base, rec.headerLen),
      data: new Uint8Array(rec.buf.buffer, base + rec.headerLen, rec.dataLen),
    };
  }

  protected durable(): Promise<void> {
    return RESOLVED;
  }

  protected async wipeStorage(): Promise<void> {
    this.records = [];
  }

  protected snapshotSource(): AsyncGenerator<Buffer> {
    // Copy the live set now so the snapshot is one consistent cut even while appends continue.
    const live: Buffer[] = [];
    for (let i = 0; i < this.records.length; i++) {
      const rec = this.records[i];
      if (rec === undefined) continue;
      const { header, data } = this.views(rec);
      live.push(this.encodeLive(this.recordBase + i, header, data));
    }
    return this.frameSnapshot({ firstSeq: this.firstSeq, lastSeq: this.lastSeq, lastTs: this.lastTs }, live);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopAgeTimer();
    this.records = [];
  }
}
