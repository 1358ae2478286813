/**
 * Snapshot stream: frames of `kind u8 | length u32 | payload`. One HEADER frame (sequence range),
 * any number of RECORDS frames (concatenated record-codec records, in sequence order), one END frame.
 */
import { StoreError } from './store-error.js';

export const FRAME_HEADER = 1;
export const FRAME_RECORDS = 2;
export const FRAME_END = 3;
const SNAPSHOT_VERSION = 1;
/** A frame larger than this is corruption, not data (records frames are ~1 MiB). */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export interface SnapshotHeader {
  firstSeq: number;
  lastSeq: number;
  lastTs: bigint;
}

export function encodeFrame(kind: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = kind;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

export function encodeHeader(h: SnapshotHeader): Buffer {
  const p = Buffer.alloc(25);
  p[0] = SNAPSHOT_VERSION;
  p.writeBigUInt64BE(BigInt(h.firstSeq), 1);
  p.writeBigUInt64BE(BigInt(h.lastSeq), 9);
  p.writeBigInt64BE(h.lastTs, 17);
  return encodeFrame(FRAME_HEADER, p);
}

export function decodeHeader(p: Buffer): SnapshotHeader {
  if (p.length !== 25 || p[0] !== SNAPSHOT_VERSION) throw new StoreError('CORRUPT', 'bad snapshot header');
  return {
    firstSeq: Number(p.readBigUInt64BE(1)),
    lastSeq: Number(p.readBigUInt64BE(9)),
    lastTs: p.readBigInt64BE(17),
  };
}

/** Reassembles frames from arbitrarily split chunks. */
export async function* readFrames(source: AsyncIterable<Uint8Array>): AsyncGenerator<{ kind: number; payload: Buffer }> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    let off = 0;
    while (pending.length - off >= 5) {
      const len = pending.readUInt32BE(off + 1);
      if (len > MAX_FRAME_BYTES) throw new StoreError('CORRUPT', `snapshot frame of ${len} bytes`);
      if (pending.length - off < 5 + len) break;
      yield { kind: pending[off], payload: pending.subarray(off + 5, off + 5 + len) };
      off += 5 + len;
    }
    pending = pending.subarray(off);
  }
  if (pending.length !== 0) throw new StoreError('CORRUPT', 'truncated snapshot');
}
