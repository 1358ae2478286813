// The write-ahead side of the Raft log store: numbers batches, writes their records in order, and makes a
// synced batch durable with one write. Records of non-synced batches wait in memory (their LevelDB batch holds
// them meanwhile) and go out in front of the next synced record, in the same write: a durable record always
// has every earlier record durable before it.
import { WalSegment, listSegments, removeSegments, type WalSyncMode } from './wal-segment.js';

export interface RaftWalOptions {
  dir: string;
  syncMode: WalSyncMode;
  /** A segment holding this much asks for a checkpoint before its next record. */
  segmentBytes: number;
  /** Zeroed space is added this much at a time. */
  chunkBytes: number;
  /** Non-synced records kept in memory beyond this are written out (synced) with the next batch. */
  maxPendingBytes: number;
}

export class RaftWal {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** End of the records written to the current segment. */
  private writeOffset = 0;

  private constructor(
    private readonly options: RaftWalOptions,
    private segment: WalSegment,
    /** Sequence number of the next batch. */
    private seq: number,
  ) {}

  /** Starts a fresh segment at `nextSeq`; the directory must hold no segments (recovery removed them). */
  static async create(options: RaftWalOptions, nextSeq: number): Promise<RaftWal> {
    const segment = await WalSegment.create(options.dir, nextSeq, options.syncMode, options.chunkBytes);
    return new RaftWal(options, segment, nextSeq);
  }

  get nextSeq(): number {
    return this.seq;
  }

  /** Whether a record of `bytes` should go into a new segment: checkpoint first. */
  needsCheckpoint(bytes: number): boolean {
    const used = this.writeOffset + this.pendingBytes;
    return used > 0 && used + bytes > this.options.segmentBytes;
  }

  /**
   * Takes the record of batch `nextSeq` (encoded with that number). Synced: resolves once it (and every earlier
   * record) is durable. Not synced: kept in memory, null — unless the memory bound forces a write.
   */
  append(record: Buffer, sync: boolean): Promise<void> | null {
    this.seq++;
    this.pending.push(record);
    this.pendingBytes += record.length;
    if (!sync && this.pendingBytes < this.options.maxPendingBytes) return null;
    const buf = this.pending.length === 1 ? record : Buffer.concat(this.pending, this.pendingBytes);
    const offset = this.writeOffset;
    this.writeOffset += buf.length;
    this.pending = [];
    this.pendingBytes = 0;
    return this.segment.writeAt(buf, offset);
  }

  /**
   * Second half of a checkpoint: the caller has made LevelDB durable through batch nextSeq - 1, so no record
   * is needed any more. A new segment is created before the old one is removed; recovery copes with both.
   * `afterCreate` is a test hook (it may throw to stop the rotation there).
   */
  async rotate(afterCreate?: () => void): Promise<void> {
    const old = this.segment;
    this.segment = await WalSegment.create(this.options.dir, this.seq, this.options.syncMode, this.options.chunkBytes);
    this.writeOffset = 0;
    this.pending = [];
    this.pendingBytes = 0;
    await old.close();
    afterCreate?.();
    const stale = (await listSegments(this.options.dir)).filter((s) => s.path !== this.segment.path);
    await removeSegments(
      this.options.dir,
      stale.map((s) => s.path),
    );
  }

  async close(): Promise<void> {
    await this.segment.close();
  }
}
