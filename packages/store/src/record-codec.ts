/**
 * Binary record layout shared by FileStore blocks and snapshots (no JSON on the message path):
 * seq u64 | ts i64 | subjectLen u16 | headerLen u32 | dataLen u32 | subject | header | data | crc32 u32
 * (big-endian; the crc covers every byte of the record before it), so damage to one record is found and
 * costs that record only: a scan resynchronises on the next record whose crc holds.
 */
import { crc32 } from 'node:zlib';

const FIXED_BYTES = 26;
export const RECORD_OVERHEAD = FIXED_BYTES + 4;
const TWO_32 = 2 ** 32;
/** Sequences beyond this are not ones a store assigns (a resync candidate with one is not a record). */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

export function recordLength(subjectBytes: number, headerLen: number, dataLen: number): number {
  return RECORD_OVERHEAD + subjectBytes + headerLen + dataLen;
}

/** Writes one record at `off` (through a DataView: several times faster than Buffer's writers). */
export function writeRecord(
  view: DataView,
  buf: Uint8Array,
  off: number,
  seq: number,
  ts: bigint,
  subject: Uint8Array,
  header: Uint8Array,
  data: Uint8Array,
): number {
  view.setUint32(off, Math.floor(seq / TWO_32));
  view.setUint32(off + 4, seq >>> 0);
  view.setBigInt64(off + 8, ts);
  view.setUint16(off + 16, subject.length);
  view.setUint32(off + 18, header.length);
  view.setUint32(off + 22, data.length);
  let p = off + FIXED_BYTES;
  buf.set(subject, p);
  p += subject.length;
  if (header.length > 0) buf.set(header, p);
  p += header.length;
  buf.set(data, p);
  p += data.length;
  // A plain Uint8Array view: Buffer#subarray costs more than the checksum of a small record.
  view.setUint32(p, crc32(new Uint8Array(buf.buffer, buf.byteOffset + off, p - off)));
  return p + 4;
}

export function viewOf(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Cursor over records in a buffer; fields describe the record at `offset` after `readAt`. */
export class RecordCursor {
  seq = 0;
  subjectStart = 0;
  subjectLen = 0;
  headerStart = 0;
  headerLen = 0;
  dataStart = 0;
  dataLen = 0;
  /** Just past the data (the crc follows). */
  dataEnd = 0;
  /** Just past the record. */
  end = 0;

  private readonly view: DataView;

  constructor(readonly buf: Buffer) {
    this.view = viewOf(buf);
  }

  readAt(off: number): void {
    const v = this.view;
    if (off + RECORD_OVERHEAD > this.buf.length) throw new RangeError(`record header past end at ${off}`);
    this.seq = v.getUint32(off) * TWO_32 + v.getUint32(off + 4);
    this.subjectLen = v.getUint16(off + 16);
    this.headerLen = v.getUint32(off + 18);
    this.dataLen = v.getUint32(off + 22);
    this.subjectStart = off + FIXED_BYTES;
    this.headerStart = this.subjectStart + this.subjectLen;
    this.dataStart = this.headerStart + this.headerLen;
    this.dataEnd = this.dataStart + this.dataLen;
    this.end = this.dataEnd + 4;
    if (this.end > this.buf.length) throw new RangeError(`record body past end at ${off}`);
  }

  /**
   * Reads the record at `off` if one lies there whole, before `limit`, with a sound crc (never throws);
   * the fields then describe it. What a scan of possibly damaged bytes uses.
   */
  tryAt(off: number, limit: number): boolean {
    const v = this.view;
    if (off + RECORD_OVERHEAD > limit) return false;
    const subjectLen = v.getUint16(off + 16);
    const headerLen = v.getUint32(off + 18);
    const dataLen = v.getUint32(off + 22);
    const hi = v.getUint32(off);
    if (subjectLen === 0 || hi > MAX_SEQ / TWO_32) return false;
    const dataEnd = off + FIXED_BYTES + subjectLen + headerLen + dataLen;
    if (dataEnd + 4 > limit) return false;
    if (crc32(new Uint8Array(this.buf.buffer, this.buf.byteOffset + off, dataEnd - off)) !== v.getUint32(dataEnd)) return false;
    this.seq = hi * TWO_32 + v.getUint32(off + 4);
    this.subjectLen = subjectLen;
    this.headerLen = headerLen;
    this.dataLen = dataLen;
    this.subjectStart = off + FIXED_BYTES;
    this.headerStart = this.subjectStart + subjectLen;
    this.dataStart = this.headerStart + headerLen;
    this.dataEnd = dataEnd;
    this.end = dataEnd + 4;
    return this.seq > 0;
  }

  /** The current record's crc holds (after `readAt`). */
  sound(off: number): boolean {
    return crc32(new Uint8Array(this.buf.buffer, this.buf.byteOffset + off, this.dataEnd - off)) === this.view.getUint32(this.dataEnd);
  }

  ts(off: number): bigint {
    return this.view.getBigInt64(off + 8);
  }

  subject(): string {
    return this.buf.toString('utf8', this.subjectStart, this.subjectStart + this.subjectLen);
  }
}
