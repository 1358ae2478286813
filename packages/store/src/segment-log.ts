/**
 * Append-only segment files holding FileStore's blocks. Each frame is
 *   magic u32 | bodyLen u32 | crc32(body) u32 | firstSeq u64 | body (the block's records)
 * A flush appends its frames with one writev and one fdatasync. On open, a frame whose header is
 * damaged or runs past the end of its file is a torn tail (the file is truncated there); a frame with a
 * sound header but a wrong checksum was erased on purpose (or damaged) and is skipped.
 */
import { writeSync, writevSync } from 'node:fs';
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { observeFsync } from './fsync-observer.js';

const FRAME_MAGIC = 0x464c5442;
export const FRAME_HEADER_BYTES = 20;
const SEGMENT_NAME = /^seg-(\d{12})\.log$/;
/**
 * Flushes up to this size are written with a synchronous writev: copying into the page cache takes tens
 * of microseconds, less than a thread-pool round trip. Larger ones go through the thread pool.
 */
const SYNC_WRITE_MAX_BYTES = 2 * 1024 * 1024;
/**
 * Zeros are written ahead of the tail so that most flushes overwrite blocks the file already has: their
 * fdatasync then flushes data only, with no file-size change to commit through the filesystem journal
 * (shared with every other writer on the disk, hence slow and erratic under load). The zeroed run grows
 * with the data, between these bounds (a larger step makes the fdatasync that carries it stall publishers
 * beyond what a 1,000-message window covers); a scan at open stops at the zeros (no frame magic) and truncates.
 */
const ZERO_AHEAD_MIN_BYTES = 64 * 1024;
const ZERO_AHEAD_MAX_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(256 * 1024);
/** Frames larger than this are taken as a damaged header, not data. */
const MAX_FRAME_BODY = 1 << 30;

export interface FrameLocation {
  segment: number;
  /** Offset of the frame body in the segment file. */
  pos: number;
  len: number;
}

export interface RecoveredFrame extends FrameLocation {
  first: number;
}

/** Bytes read per step when scanning segments (one reused buffer: fresh memory costs page faults). */
const WINDOW_BYTES = 4 * 1024 * 1024;

/** Reads frame bodies through one reused window buffer; a body is valid until the next call. */
export class FrameReader {
  private window: Buffer = Buffer.allocUnsafeSlow(WINDOW_BYTES);
  private segment = -1;
  private start = 0;
  private length = 0;

  constructor(private readonly handleOf: (segment: number) => FileHandle | undefined) {}

  /** `len` bytes at `pos` of `segment` (fewer if the file ends first). */
  async bytes(segment: number, pos: number, len: number, fileSize: number): Promise<Buffer> {
    if (segment === this.segment && pos >= this.start && pos + len <= this.start + this.length) {
      return this.window.subarray(pos - this.start, pos - this.start + len);
    }
    const fh = this.handleOf(segment);
    if (fh === undefined) throw new Error(`segment ${segment} is gone`);
    const want = Math.min(Math.max(len, WINDOW_BYTES), fileSize - pos);
    const buf = want > this.window.length ? Buffer.allocUnsafeSlow(want) : this.window;
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(buf, got, want - got, pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (buf === this.window) {
      this.segment = segment;
      this.start = pos;
      this.length = got;
    } else {
      this.segment = -1;
    }
    return buf.subarray(0, Math.min(len, got));
  }
}

interface Segment {
  id: number;
  fh: FileHandle;
  size: number;
  /** Blocks in this segment that still hold live messages (or are the current copy). */
  liveBlocks: number;
  /** The file holds zeros (or data) up to here; past `size` only zeros. */
  zeroedTo: number;
  /** Size as of the last completed flush: a failed flush is cut back to here (`rollback`). */
  committedSize: number;
}

const segmentName = (id: number): string => `seg-${String(id).padStart(12, '0')}.log`;

export class SegmentLog {
  private readonly segments = new Map<number, Segment>();
  private tail: Segment | null = null;
  private readonly unsynced = new Set<Segment>();
  private dirUnsynced = false;

  constructor(
    private readonly dir: string,
    private readonly maxSegmentBytes: number,
    /** Write zeros ahead of the tail: worth it when every flush is synced, pure cost otherwise. */
    private readonly zeroAheadWanted = true,
  ) {
    this.zeroAheadOn = zeroAheadWanted;
  }

  private zeroAheadOn: boolean;

  /** Opens every segment and returns the location of their intact frames, in file order. */
  async open(): Promise<RecoveredFrame[]> {
    await mkdir(this.dir, { recursive: true });
    const ids = (await readdir(this.dir))
      .map((n) => SEGMENT_NAME.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const frames: RecoveredFrame[] = [];
    const reader = this.reader();
    for (const id of ids) {
      const fh = await open(join(this.dir, segmentName(id)), 'r+');
      const { size } = await fh.stat();
      const seg: Segment = { id, fh, size, liveBlocks: 0, zeroedTo: 0, committedSize: 0 };
      this.segments.set(id, seg);
      let pos = 0;
      while (pos + FRAME_HEADER_BYTES <= size) {
        const h = await reader.bytes(id, pos, FRAME_HEADER_BYTES, size);
        if (h.length < FRAME_HEADER_BYTES || h.readUInt32BE(0) !== FRAME_MAGIC) break;
        const len = h.readUInt32BE(4);
        const sum = h.readUInt32BE(8);
        const first = Number(h.readBigUInt64BE(12));
        if (len > MAX_FRAME_BODY || pos + FRAME_HEADER_BYTES + len > size) break;
        const body = await reader.bytes(id, pos + FRAME_HEADER_BYTES, len, size);
        if (body.length === len && crc32(body) === sum) frames.push({ segment: id, pos: pos + FRAME_HEADER_BYTES, len, first });
        pos += FRAME_HEADER_BYTES + len;
      }
      if (pos < size) await fh.truncate(pos); // torn tail from a crash mid-write, or zeros written ahead
      seg.size = pos;
      seg.zeroedTo = pos;
      seg.committedSize = pos;
      this.tail = seg;
    }
    return frames;
  }

  /** A reader for frame bodies of this log's segments. */
  reader(): FrameReader {
    return new FrameReader((id) => this.segments.get(id)?.fh);
  }

  sizeOf(segment: number): number {
    return this.segments.get(segment)?.size ?? 0;
  }

  /** Appends frames at the tail (rotating first when the tail is full); durable after `sync`. */
  async append(frames: readonly { first: number; body: Buffer }[]): Promise<FrameLocation[]> {
    let seg = this.tail;
    if (seg === null || seg.size >= this.maxSegmentBytes) seg = await this.rotate();
    const bufs: Buffer[] = [];
    const locs: FrameLocation[] = [];
    let pos = seg.size;
    for (const f of frames) {
      const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
      h.writeUInt32BE(FRAME_MAGIC, 0);
      h.writeUInt32BE(f.body.length, 4);
      h.writeUInt32BE(crc32(f.body), 8);
      h.writeBigUInt64BE(BigInt(f.first), 12);
      bufs.push(h, f.body);
      locs.push({ segment: seg.id, pos: pos + FRAME_HEADER_BYTES, len: f.body.length });
      pos += FRAME_HEADER_BYTES + f.body.length;
    }
    let written = 0;
    const total = pos - seg.size;
    while (written < total) {
      const pending = written === 0 ? bufs : [Buffer.concat(bufs).subarray(written)];
      if (total <= SYNC_WRITE_MAX_BYTES) written += writevSync(seg.fh.fd, pending, seg.size + written);
      else written += (await seg.fh.writev(pending, seg.size + written)).bytesWritten;
    }
    seg.size = pos;
    if (this.zeroAheadOn && seg.zeroedTo - pos < this.zeroAheadBytes(pos) / 2 && pos < this.maxSegmentBytes) this.zeroAhead(seg);
    this.unsynced.add(seg);
    return locs;
  }

  private zeroAheadBytes(size: number): number {
    return Math.min(ZERO_AHEAD_MAX_BYTES, Math.max(ZERO_AHEAD_MIN_BYTES, size));
  }

  /**
   * Extends the zeroed run past the tail; the next sync makes it durable along with this flush's data.
   * Best effort: on a write error (a full disk, say) it stops for good, and the data write decides.
   */
  private zeroAhead(seg: Segment): void {
    let at = Math.max(seg.zeroedTo, seg.size);
    const to = Math.min(seg.size + this.zeroAheadBytes(seg.size), this.maxSegmentBytes);
    try {
      // Bounded: each step writes at least one byte or throws.
      while (at < to) {
        const n = writeSync(seg.fh.fd, ZEROS, 0, Math.min(ZEROS.length, to - at), at);
        if (n <= 0) break;
        at += n;
      }
    } catch {
      this.zeroAheadOn = false;
    }
    seg.zeroedTo = at;
  }

  private async rotate(): Promise<Segment> {
    const id = this.tail === null ? 1 : this.tail.id + 1;
    const fh = await open(join(this.dir, segmentName(id)), 'w+');
    const seg: Segment = { id, fh, size: 0, liveBlocks: 0, zeroedTo: 0, committedSize: 0 };
    this.segments.set(id, seg);
    this.tail = seg;
    this.dirUnsynced = true;
    return seg;
  }

  get hasUnsynced(): boolean {
    return this.unsynced.size > 0 || this.dirUnsynced;
  }

  /** fdatasync every written segment (and the directory after a new segment appeared). */
  async sync(): Promise<void> {
    const segs = [...this.unsynced];
    this.unsynced.clear();
    for (const s of segs) {
      const started = performance.now();
      await s.fh.datasync();
      observeFsync('stream_store', (performance.now() - started) / 1000);
    }
    if (this.dirUnsynced) {
      this.dirUnsynced = false;
      const d = await open(this.dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    }
  }

  /** The current sizes become what `rollback` returns to: the flush that wrote them completed. */
  commit(): void {
    for (const seg of this.segments.values()) seg.committedSize = seg.size;
  }

  /**
   * Cuts every segment back to its committed size after a failed flush, so none of the failed flush's
   * frames (written, maybe even synced, but never acknowledged) is found by the next open. Shrinking a
   * file needs no free space. The log must be reopened (`open`) afterwards.
   */
  async rollback(): Promise<void> {
    for (const seg of this.segments.values()) {
      if (seg.size > seg.committedSize || seg.zeroedTo > seg.committedSize) {
        await seg.fh.truncate(seg.committedSize);
        await seg.fh.datasync();
      }
    }
    this.zeroAheadOn = this.zeroAheadWanted;
  }

  /** Reads a frame body into `into` (at least loc.len bytes); returns the filled part. */
  async read(loc: FrameLocation, into: Buffer): Promise<Buffer> {
    const seg = this.segments.get(loc.segment);
    if (seg === undefined) throw new Error(`segment ${loc.segment} is gone`);
    const buf = into.subarray(0, loc.len);
    let got = 0;
    while (got < loc.len) {
      const { bytesRead } = await seg.fh.read(buf, got, loc.len - got, loc.pos + got);
      if (bytesRead === 0) throw new Error(`short read in segment ${loc.segment}`);
      got += bytesRead;
    }
    return buf;
  }

  /** Overwrites a frame's body with zeros (erase); its checksum then fails and open skips it. */
  async zero(loc: FrameLocation): Promise<void> {
    const seg = this.segments.get(loc.segment);
    if (seg === undefined) return;
    await seg.fh.write(Buffer.alloc(loc.len), 0, loc.len, loc.pos);
    this.unsynced.add(seg);
  }

  addLive(segment: number, delta: number): void {
    const seg = this.segments.get(segment);
    if (seg !== undefined) seg.liveBlocks += delta;
  }

  /** Deletes segments (never the tail) with no live block; returns their ids. */
  async removeDead(): Promise<number[]> {
    const gone: number[] = [];
    for (const seg of [...this.segments.values()]) {
      if (seg === this.tail || seg.liveBlocks > 0) continue;
      this.segments.delete(seg.id);
      this.unsynced.delete(seg);
      await seg.fh.close();
      await unlink(join(this.dir, segmentName(seg.id)));
      gone.push(seg.id);
    }
    return gone;
  }

  /** Deletes every segment (restore). */
  async wipe(): Promise<void> {
    for (const seg of this.segments.values()) {
      await seg.fh.close();
      await unlink(join(this.dir, segmentName(seg.id)));
    }
    this.segments.clear();
    this.unsynced.clear();
    this.tail = null;
  }

  async close(): Promise<void> {
    for (const seg of this.segments.values()) await seg.fh.close();
    this.segments.clear();
    this.tail = null;
  }
}
