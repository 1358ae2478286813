// Flotilla's stream backup archive (what STREAM.SNAPSHOT streams and STREAM.RESTORE reads): the magic
// `FLOTSNAP` and a version byte, then frames `kind u8 | length u32 | payload`: one META frame (JSON: the
// stream's config, created time, state and consumers with their state), STORE frames carrying the message
// store's own snapshot stream (store/snapshot-codec.ts: every record has its crc32), and one END frame holding
// the crc32 of every byte before it. Frames are small (≤ 256 KiB) so a reader holds at most one.
import { crc32 } from 'node:zlib';
import type { ConsumerMeta } from '../consumer/consumer-state-placement.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';
import type { StreamConfig } from '../stream/stream-config-types.js';

const MAGIC = Buffer.from('FLOTSNAP', 'latin1');
const VERSION = 1;
const FRAME_META = 0x10;
const FRAME_STORE = 0x11;
const FRAME_END = 0x12;
const FRAME_HEADER_BYTES = 5;
/** Store bytes per frame when writing; a reader refuses larger frames (corruption, not data). */
export const MAX_FRAME_PAYLOAD_BYTES = 256 * 1024;
const MAX_META_BYTES = 64 * 1024 * 1024;

export interface ArchiveMeta {
  readonly config: StreamConfig;
  readonly created: string;
  readonly state: object;
  readonly consumers: ReadonlyArray<{ readonly meta: ConsumerMeta; readonly state: ConsumerStateSnapshot }>;
}

/** The archive is not one Flotilla wrote, or was damaged: restore answers 10062 with this text. */
export class ArchiveError extends Error {}

function frame(kind: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out[0] = kind;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** The archive's bytes in order, pulled from the store as the reader asks (never the whole stream at once). */
export async function* encodeArchive(meta: ArchiveMeta, store: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  let crc = 0;
  const out = (b: Buffer): Buffer => {
    crc = crc32(b, crc);
    return b;
  };
  yield out(Buffer.concat([MAGIC, Buffer.from([VERSION])]));
  const metaJson = Buffer.from(JSON.stringify(meta));
  if (metaJson.length > MAX_META_BYTES) throw new ArchiveError('stream metadata too large');
  yield out(frame(FRAME_META, metaJson));
  for await (const chunk of store) {
    for (let off = 0; off < chunk.length; off += MAX_FRAME_PAYLOAD_BYTES) {
      yield out(frame(FRAME_STORE, chunk.subarray(off, Math.min(chunk.length, off + MAX_FRAME_PAYLOAD_BYTES))));
    }
  }
  const sum = Buffer.allocUnsafe(4);
  sum.writeUInt32BE(crc >>> 0, 0);
  yield frame(FRAME_END, sum);
}

/**
 * Reads an archive from arbitrarily split chunks: `meta()` resolves with the META frame, `store()` then yields
 * the store's bytes, and ends once the END frame's checksum held (ArchiveError otherwise).
 */
export class ArchiveReader {
  private pending: Buffer = Buffer.alloc(0);
  private crc = 0;
  private readonly source: AsyncIterator<Uint8Array>;
  private sawMagic = false;
  private ended = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.source = source[Symbol.asyncIterator]();
  }

  /** True after the END frame was read and its checksum held. */
  get complete(): boolean {
    return this.ended;
  }

  private async fill(bytes: number): Promise<void> {
    for (let guard = 0; this.pending.length < bytes && guard < 1_000_000; guard++) {
      const next = await this.source.next();
      if (next.done === true) throw new ArchiveError('truncated archive');
      this.pending = this.pending.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.pending, next.value]);
    }
  }

  private take(bytes: number): Buffer {
    const out = this.pending.subarray(0, bytes);
    this.pending = this.pending.subarray(bytes);
    return out;
  }

  private async readMagic(): Promise<void> {
    await this.fill(MAGIC.length + 1);
    const head = this.take(MAGIC.length + 1);
    if (!head.subarray(0, MAGIC.length).equals(MAGIC)) throw new ArchiveError('not a flotilla stream archive');
    if (head[MAGIC.length] !== VERSION) throw new ArchiveError(`unknown archive version ${head[MAGIC.length]}`);
    this.crc = crc32(head, this.crc);
    this.sawMagic = true;
  }

  private async readFrame(maxPayload: number): Promise<{ kind: number; payload: Buffer }> {
    if (!this.sawMagic) await this.readMagic();
    await this.fill(FRAME_HEADER_BYTES);
    const kind = this.pending[0]!;
    const len = this.pending.readUInt32BE(1);
    if (len > maxPayload) throw new ArchiveError(`archive frame of ${len} bytes`);
    await this.fill(FRAME_HEADER_BYTES + len);
    const whole = this.take(FRAME_HEADER_BYTES + len);
    if (kind !== FRAME_END) this.crc = crc32(whole, this.crc);
    return { kind, payload: Buffer.from(whole.subarray(FRAME_HEADER_BYTES)) };
  }

  async meta(): Promise<ArchiveMeta> {
    const f = await this.readFrame(MAX_META_BYTES);
    if (f.kind !== FRAME_META) throw new ArchiveError('archive does not start with its metadata');
    try {
      const meta = JSON.parse(f.payload.toString('utf8')) as ArchiveMeta;
      if (typeof meta !== 'object' || meta === null || !Array.isArray(meta.consumers)) throw new Error('shape');
      return meta;
    } catch {
      throw new ArchiveError('archive metadata is not valid');
    }
  }

  async *store(): AsyncGenerator<Buffer> {
    for (let guard = 0; guard < Number.MAX_SAFE_INTEGER; guard++) {
      const f = await this.readFrame(MAX_FRAME_PAYLOAD_BYTES);
      if (f.kind === FRAME_STORE) {
        yield f.payload;
        continue;
      }
      if (f.kind !== FRAME_END || f.payload.length !== 4) throw new ArchiveError(`unexpected archive frame ${f.kind}`);
      if (f.payload.readUInt32BE(0) !== this.crc >>> 0) throw new ArchiveError('archive checksum mismatch');
      if (this.pending.length !== 0) throw new ArchiveError('data after the end of the archive');
      this.ended = true;
      return;
    }
  }
}

/** Re-cuts a byte stream into pieces of exactly `chunkBytes` (the last one shorter), as nats-server's ReadFull. */
export async function* fixedChunks(source: AsyncIterable<Uint8Array>, chunkBytes: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let have = 0;
  for await (const piece of source) {
    let b = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (b.length > 0) {
      const n = Math.min(chunkBytes - have, b.length);
      parts.push(b.subarray(0, n));
      have += n;
      b = b.subarray(n);
      if (have === chunkBytes) {
        yield Buffer.concat(parts, have);
        parts = [];
        have = 0;
      }
    }
  }
  if (have > 0) yield Buffer.concat(parts, have);
}
