/** MessageStore held in process memory (JetStream `storage: memory`). */
import { StoreCore, type StoreCoreOptions } from './store-core.js';
import type { StoredMessage } from './types.js';

interface MemoryRecord {
  header: Uint8Array;
  data: Uint8Array;
}

const RESOLVED = Promise.resolve();

export class MemoryStore extends StoreCore {
  readonly kind = 'memory' as const;
  private records = new Map<number, MemoryRecord>();

  constructor(opts: StoreCoreOptions = {}) {
    super(opts);
  }

  /** nats-server memstore: subject + header + payload + 16. */
  protected accountedSize(subjectBytes: number, headerLen: number, dataLen: number): number {
    return subjectBytes + headerLen + dataLen + 16;
  }

  protected keepRecord(seq: number, _ts: bigint, _subjectId: number, header: Uint8Array, data: Uint8Array): void {
    // One copy: the caller may reuse its buffers.
    const buf = new Uint8Array(header.length + data.length);
    buf.set(header, 0);
    buf.set(data, header.length);
    this.records.set(seq, { header: buf.subarray(0, header.length), data: buf.subarray(header.length) });
  }

  protected forgetRecord(seq: number): void {
    this.records.delete(seq);
  }

  protected forgetAll(): void {
    this.records = new Map();
  }

  protected sequencesMoved(): void {}

  protected async readRecords(seqs: readonly number[]): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const { index, subjects } = this;
    for (const seq of seqs) {
      const rec = this.records.get(seq);
      const id = index.subjOf(seq);
      if (rec === undefined || id === 0) continue;
      out.push({ seq, subject: subjects.names[id], header: rec.header, data: rec.data, timestampNs: index.tsOf(seq) });
    }
    return out;
  }

  protected durable(): Promise<void> {
    return RESOLVED;
  }

  protected async wipeStorage(): Promise<void> {
    this.records = new Map();
  }

  protected snapshotSource(): AsyncGenerator<Buffer> {
    // Copy the live set now so the snapshot is one consistent cut even while appends continue.
    const live: Buffer[] = [];
    for (const [seq, rec] of this.records) live.push(this.encodeLive(seq, rec.header, rec.data));
    live.sort((a, b) => a.readUInt32BE(0) * 2 ** 32 + a.readUInt32BE(4) - (b.readUInt32BE(0) * 2 ** 32 + b.readUInt32BE(4)));
    return this.frameSnapshot({ firstSeq: this.firstSeq, lastSeq: this.lastSeq, lastTs: this.lastTs }, live);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopAgeTimer();
    this.records = new Map();
  }
}
