// Record format of the Raft log store's write-ahead file: [u32 body length][u32 crc32 of body][body], body =
// u64 WAL sequence number then the batch's LevelDB ops. A zero length, a short record or a bad crc ends the file.
import { crc32 } from 'node:zlib';

export type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface WalRecord {
  seq: number;
  ops: BatchOp[];
  /** Offset just past this record in the buffer it was read from. */
  end: number;
}

const HEADER_BYTES = 8;
const SEQ_BYTES = 8;
const OP_PUT = 1;
const OP_DEL = 2;

/** LevelDB key holding the sequence number of the last WAL batch LevelDB has applied (sorts before every log key). */
export const WAL_SEQ_KEY = Buffer.from('\x00walseq', 'latin1');

export function encodeSeq(seq: number): Buffer {
  const buf = Buffer.allocUnsafe(SEQ_BYTES);
  writeSeq(buf, seq, 0);
  return buf;
}

export function decodeSeq(buf: Buffer): number {
  return buf.readUInt32BE(0) * 2 ** 32 + buf.readUInt32BE(4);
}

function writeSeq(buf: Buffer, seq: number, offset: number): void {
  buf.writeUInt32BE(Math.floor(seq / 2 ** 32), offset);
  buf.writeUInt32BE(seq >>> 0, offset + 4);
}

export function encodeWalRecord(seq: number, ops: readonly BatchOp[]): Buffer {
  let size = HEADER_BYTES + SEQ_BYTES;
  for (const op of ops) size += 5 + op.key.length + (op.type === 'put' ? 4 + op.value.length : 0);
  const buf = Buffer.allocUnsafe(size);
  writeSeq(buf, seq, HEADER_BYTES);
  let o = HEADER_BYTES + SEQ_BYTES;
  for (const op of ops) {
    buf[o] = op.type === 'put' ? OP_PUT : OP_DEL;
    buf.writeUInt32BE(op.key.length, o + 1);
    o += 5;
    op.key.copy(buf, o);
    o += op.key.length;
    if (op.type === 'put') {
      buf.writeUInt32BE(op.value.length, o);
      o += 4;
      buf.set(op.value, o);
      o += op.value.length;
    }
  }
  buf.writeUInt32BE(size - HEADER_BYTES, 0);
  buf.writeUInt32BE(crc32(buf.subarray(HEADER_BYTES)), 4);
  return buf;
}

/** The record at `offset`, or null where the valid records end (zeros, a torn record, a bad crc or bad body). */
export function readWalRecord(buf: Buffer, offset: number): WalRecord | null {
  if (offset + HEADER_BYTES > buf.length) return null;
  const length = buf.readUInt32BE(offset);
  const end = offset + HEADER_BYTES + length;
  if (length < SEQ_BYTES || end > buf.length) return null;
  const body = buf.subarray(offset + HEADER_BYTES, end);
  if (crc32(body) !== buf.readUInt32BE(offset + 4)) return null;
  const ops = decodeOps(body);
  return ops ? { seq: decodeSeq(body), ops, end } : null;
}

function decodeOps(body: Buffer): BatchOp[] | null {
  const ops: BatchOp[] = [];
  let o = SEQ_BYTES;
  while (o < body.length) {
    if (o + 5 > body.length) return null;
    const type = body[o];
    const keyLength = body.readUInt32BE(o + 1);
    o += 5;
    if (o + keyLength > body.length) return null;
    // Views into the file's buffer: recovery only hands them to LevelDB's batch(), which copies them.
    const key = body.subarray(o, o + keyLength);
    o += keyLength;
    if (type === OP_DEL) {
      ops.push({ type: 'del', key });
    } else if (type === OP_PUT) {
      if (o + 4 > body.length) return null;
      const valueLength = body.readUInt32BE(o);
      o += 4;
      if (o + valueLength > body.length) return null;
      ops.push({ type: 'put', key, value: body.subarray(o, o + valueLength) });
      o += valueLength;
    } else {
      return null;
    }
  }
  return ops;
}
