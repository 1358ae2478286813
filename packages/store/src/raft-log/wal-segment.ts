// One write-ahead segment file. Records are written over space already zeroed and made durable, so a synced
// record write changes no file metadata (size, extents) and costs one data write + device flush; the zeroed
// space is extended a chunk at a time ahead of the writes, in the background.
import { close, constants, fdatasync, fsync, open, write } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** `dsync`: one write on an O_DSYNC descriptor; `fdatasync`: a plain write, then fdatasync. */
export type WalSyncMode = 'dsync' | 'fdatasync';

const SEGMENT_SUFFIX = '.wal';

let zeros = Buffer.alloc(0);
function zeroBuffer(bytes: number): Buffer {
  if (zeros.length < bytes) zeros = Buffer.alloc(bytes);
  return zeros.subarray(0, bytes);
}

export function segmentName(startSeq: number): string {
  return `${String(startSeq).padStart(16, '0')}${SEGMENT_SUFFIX}`;
}

/** Segment files of `dir` in sequence order ([] when the directory does not exist). */
export async function listSegments(dir: string): Promise<{ startSeq: number; path: string }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .filter((n) => /^\d{16}\.wal$/.test(n))
    .map((n) => ({ startSeq: Number(n.slice(0, 16)), path: join(dir, n) }))
    .sort((a, b) => a.startSeq - b.startSeq);
}

/** Makes the directory's entries (a created or removed segment) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const fd = await call<number>((cb) => open(dir, constants.O_RDONLY, cb));
  try {
    await call<void>((cb) => fsync(fd, cb));
  } finally {
    await call<void>((cb) => close(fd, cb));
  }
}

export async function removeSegments(dir: string, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  for (const p of paths) await unlink(p);
  await syncDirectory(dir);
}

export class WalSegment {
  /** The file is zeroed and durable up to here. */
  private zeroedEnd = 0;
  private extending: Promise<void> | null = null;
  private extendError: unknown = null;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly mode: WalSyncMode,
    private readonly chunkBytes: number,
  ) {}

  /**
   * A new, durable segment named after the first sequence number it will hold, with one zeroed chunk
   * (`chunkBytes` 0: no pre-zeroing, records are appended and each synced write also commits the file's size).
   */
  static async create(dir: string, startSeq: number, mode: WalSyncMode, chunkBytes: number): Promise<WalSegment> {
    const path = join(dir, segmentName(startSeq));
    const flags = constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC | (mode === 'dsync' ? constants.O_DSYNC : 0);
    const fd = await call<number>((cb) => open(path, flags, 0o644, cb));
    const segment = new WalSegment(path, fd, mode, chunkBytes);
    if (chunkBytes === 0) segment.zeroedEnd = Number.POSITIVE_INFINITY;
    else await segment.extendTo(chunkBytes);
    await syncDirectory(dir);
    return segment;
  }

  /** Writes `buf` at `offset` and resolves once it is durable. One write at a time (the caller's pipeline). */
  async writeAt(buf: Buffer, offset: number): Promise<void> {
    if (this.extendError) throw this.extendError;
    const end = offset + buf.length;
    if (end > this.zeroedEnd) await this.extendTo(end + this.chunkBytes);
    await writeFully(this.fd, buf, offset);
    if (this.mode === 'fdatasync') await call<void>((cb) => fdatasync(this.fd, cb));
    // Keep a chunk of zeroed space ahead of the writes so the next ones never wait for it.
    if (this.extending === null && this.zeroedEnd - end < this.chunkBytes / 2) {
      this.extendTo(this.zeroedEnd + this.chunkBytes).catch((error: unknown) => {
        this.extendError = error;
      });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.extending?.catch(() => undefined);
    await call<void>((cb) => close(this.fd, cb));
  }

  /** Zero-fills (durably) up to at least `target`; extensions run one after another. */
  private extendTo(target: number): Promise<void> {
    const run = async (): Promise<void> => {
      while (this.zeroedEnd < target) {
        const bytes = Math.min(this.chunkBytes, target - this.zeroedEnd);
        await writeFully(this.fd, zeroBuffer(bytes), this.zeroedEnd);
        if (this.mode === 'fdatasync') await call<void>((cb) => fdatasync(this.fd, cb));
        this.zeroedEnd += bytes;
      }
    };
    const next = (this.extending ?? Promise.resolve()).then(run);
    const tracked = next.finally(() => {
      if (this.extending === tracked) this.extending = null;
    });
    tracked.catch(() => undefined);
    this.extending = tracked;
    return next;
  }
}

async function writeFully(fd: number, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  // A regular file takes the whole buffer in one write; the loop only covers a short write, bounded by its size.
  while (done < buf.length) {
    const n = await call<number>((cb) => write(fd, buf, done, buf.length - done, position + done, cb));
    if (n <= 0) throw new Error(`raft log WAL: short write at ${position + done}`);
    done += n;
  }
}

function call<T>(fn: (cb: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value))));
}
