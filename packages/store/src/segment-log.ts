/**
 * Append-only segment files holding FileStore's blocks (format 2). Each frame is
 *   magic u32 | bodyLen u32 | firstSeq u64 | lastSeq u64 | crc32(the 24 bytes before) u32 | body
 * and the body's records carry their own crc (record-codec.ts), so damage costs the damaged records only.
 * A flush appends its frames with one writev and one fdatasync. On open: a frame with a sound header that
 * runs past the end of its file is a torn tail and zeros where a header should be are the zeros written
 * ahead (the file is truncated there); an erased frame (ERASED magic) is skipped; anything else where a
 * header should be is damage: the scan resynchronises on the next sound header and reports the bytes in
 * between as a damaged region, whose records the store then salvages.
 */
import { writeSync, writevSync } from 'node:fs';
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { observeFsync } from './fsync-observer.js';
import { StoreError } from './store-error.js';

/** 'FLT2': a frame of format 2. */
const FRAME_MAGIC = 0x464c5432;
/** 'FLTZ': an erased frame (header kept so the scan steps over it, body zeroed). */
const ERASED_MAGIC = 0x464c545a;
/** 'FLTB': format 1 (no record checksums), refused at open. */
const FORMAT_1_MAGIC = 0x464c5442;
export const FRAME_HEADER_BYTES = 28;
const MAGIC_BYTES = [FRAME_MAGIC, ERASED_MAGIC].map((m) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(m);
  return b;
});
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
  last: number;
  /**
   * A damaged region, not a frame: the bytes from `pos - FRAME_HEADER_BYTES` (where a header should have been)
   * up to the next sound header; `first`/`last` are 0. Its records are salvaged one by one.
   */
  damaged: boolean;
}

/** The segment file a location is in (for damage reports). */
export function segmentFileName(id: number): string {
  return segmentName(id);
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

function frameHeader(magic: number, len: number, first: number, last: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32BE(magic, 0);
  h.writeUInt32BE(len, 4);
  h.writeBigUInt64BE(BigInt(first), 8);
  h.writeBigUInt64BE(BigInt(last), 16);
  h.writeUInt32BE(crc32(h.subarray(0, 24)), 24);
  return h;
}

/**
 * `frame` / `erased`: a sound header whose body fits the file; `torn`: a sound header whose body runs past
 * the end (a crash mid-write); `bad`: no sound header here.
 */
function headerKind(h: Buffer, pos: number, size: number): 'frame' | 'erased' | 'torn' | 'bad' {
  if (h.length < FRAME_HEADER_BYTES) return 'bad';
  const magic = h.readUInt32BE(0);
  if (magic !== FRAME_MAGIC && magic !== ERASED_MAGIC) return 'bad';
  if (crc32(h.subarray(0, 24)) !== h.readUInt32BE(24)) return 'bad';
  const len = h.readUInt32BE(4);
  if (len > MAX_FRAME_BODY) return 'bad';
  if (pos + FRAME_HEADER_BYTES + len > size) return 'torn';
  return magic === FRAME_MAGIC ? 'frame' : 'erased';
}

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
      if (size >= 4) {
        const magic = (await reader.bytes(id, 0, 4, size)).readUInt32BE(0);
        if (magic === FORMAT_1_MAGIC) {
          throw new StoreError('CORRUPT', `${join(this.dir, segmentName(id))} is in store format 1 (before record checksums); this version reads format 2 only: delete the stream's directory (see packages/store/README.md)`);
        }
      }
      let pos = 0;
      let end = size;
      // Bounded: every step moves pos forward by at least one byte.
      while (pos < size) {
        const h = await reader.bytes(id, pos, FRAME_HEADER_BYTES, size);
        const kind = headerKind(h, pos, size);
        if (kind === 'frame' || kind === 'erased') {
          const len = h.readUInt32BE(4);
          if (kind === 'frame') {
            frames.push({ segment: id, pos: pos + FRAME_HEADER_BYTES, len, first: Number(h.readBigUInt64BE(8)), last: Number(h.readBigUInt64BE(16)), damaged: false });
          }
          pos += FRAME_HEADER_BYTES + len;
          continue;
        }
        if (kind === 'torn' || (await this.zerosTo(reader, id, pos, size))) {
          end = pos; // torn tail from a crash mid-write, or zeros written ahead
          break;
        }
        const next = await this.nextHeader(reader, id, pos + 1, size);
        if (next - pos > FRAME_HEADER_BYTES) {
          frames.push({ segment: id, pos: pos + FRAME_HEADER_BYTES, len: next - pos - FRAME_HEADER_BYTES, first: 0, last: 0, damaged: true });
        } else if (next === size) {
          end = pos; // a few damaged bytes at the very end hold no record
          break;
        }
        pos = next;
      }
      pos = end;
      if (pos < size) await fh.truncate(pos); // torn tail from a crash mid-write, or zeros written ahead
      seg.size = pos;
      seg.zeroedTo = pos;
      seg.committedSize = pos;
      this.tail = seg;
    }
    // A new store opens its first segment now: the file descriptors a store needs are taken when it is
    // created, so running out of them fails the create, not the first publish.
    if (this.tail === null) {
      await this.rotate();
      this.commit();
    }
    return frames;
  }

  /** Only zeros from `pos` to the end of the file. */
  private async zerosTo(reader: FrameReader, id: number, pos: number, size: number): Promise<boolean> {
    for (let at = pos; at < size; ) {
      const chunk = await reader.bytes(id, at, Math.min(WINDOW_BYTES, size - at), size);
      if (chunk.length === 0) return true;
      for (let i = 0; i < chunk.length; i++) if (chunk[i] !== 0) return false;
      at += chunk.length;
    }
    return true;
  }

  /** The offset of the next sound frame header at or after `from`, or the file size (damage path only). */
  private async nextHeader(reader: FrameReader, id: number, from: number, size: number): Promise<number> {
    // Bounded: each step moves `at` forward by at least one byte.
    for (let at = from; at < size; ) {
      // A copy: reading a candidate header across the window's edge moves the reader's window.
      const chunk = Buffer.from(await reader.bytes(id, at, Math.min(WINDOW_BYTES, size - at), size));
      if (chunk.length === 0) break;
      let best = -1;
      for (const magic of MAGIC_BYTES) {
        for (let i = chunk.indexOf(magic); i >= 0 && (best < 0 || i < best); i = chunk.indexOf(magic, i + 1)) {
          const h = i + FRAME_HEADER_BYTES <= chunk.length ? chunk.subarray(i, i + FRAME_HEADER_BYTES) : await reader.bytes(id, at + i, FRAME_HEADER_BYTES, size);
          const kind = headerKind(h, at + i, size);
          if (kind === 'frame' || kind === 'erased') {
            best = i;
            break;
          }
        }
      }
      if (best >= 0) return at + best;
      if (at + chunk.length >= size) break;
      // Overlap by a header's length so a magic across the window's edge is seen.
      at += Math.max(1, chunk.length - FRAME_HEADER_BYTES);
    }
    return size;
  }

  /** A reader for frame bodies of this log's segments. */
  reader(): FrameReader {
    return new FrameReader((id) => this.segments.get(id)?.fh);
  }

  sizeOf(segment: number): number {
    return this.segments.get(segment)?.size ?? 0;
  }

  /** Appends frames at the tail (rotating first when the tail is full); durable after `sync`. */
  async append(frames: readonly { first: number; last: number; body: Buffer }[]): Promise<FrameLocation[]> {
    let seg = this.tail;
    if (seg === null || seg.size >= this.maxSegmentBytes) seg = await this.rotate();
    const bufs: Buffer[] = [];
    const locs: FrameLocation[] = [];
    let pos = seg.size;
    for (const f of frames) {
      bufs.push(frameHeader(FRAME_MAGIC, f.body.length, f.first, f.last), f.body);
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

  /**
   * Erases a frame (or a damaged region): its header becomes an erased one and its body zeros, in one write,
   * so open steps over it.
   */
  async zero(loc: FrameLocation): Promise<void> {
    const seg = this.segments.get(loc.segment);
    if (seg === undefined) return;
    const bytes = Buffer.alloc(FRAME_HEADER_BYTES + loc.len);
    frameHeader(ERASED_MAGIC, loc.len, 0, 0).copy(bytes);
    await seg.fh.write(bytes, 0, bytes.length, loc.pos - FRAME_HEADER_BYTES);
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
