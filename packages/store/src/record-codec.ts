/**
 * Binary record layout shared by FileStore blocks and snapshots (no JSON on the message path):
 * seq u64 | ts i64 | subjectLen u16 | headerLen u32 | dataLen u32 | subject | header | data  (big-endian)
 */
export const RECORD_OVERHEAD = 26;
const TWO_32 = 2 ** 32;

export function recordLength(subjectBytes: number, headerLen: number, dataLen: number): number {
  return RECORD_OVERHEAD + subjectBytes + headerLen + dataLen;
}

/** Writes one record at `off`; returns the offset after it. */
export function writeRecord(
  buf: Buffer,
  off: number,
  seq: number,
  ts: bigint,
  subject: string,
  subjectBytes: number,
  header: Uint8Array,
  data: Uint8Array,
): number {
  buf.writeUInt32BE(Math.floor(seq / TWO_32), off);
  buf.writeUInt32BE(seq >>> 0, off + 4);
  buf.writeBigInt64BE(ts, off + 8);
  buf.writeUInt16BE(subjectBytes, off + 16);
  buf.writeUInt32BE(header.length, off + 18);
  buf.writeUInt32BE(data.length, off + 22);
  let p = off + RECORD_OVERHEAD;
  p += buf.write(subject, p, subjectBytes, 'utf8');
  buf.set(header, p);
  p += header.length;
  buf.set(data, p);
  return p + data.length;
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
  end = 0;

  constructor(readonly buf: Buffer) {}

  readAt(off: number): void {
    const b = this.buf;
    if (off + RECORD_OVERHEAD > b.length) throw new RangeError(`record header past end at ${off}`);
    this.seq = b.readUInt32BE(off) * TWO_32 + b.readUInt32BE(off + 4);
    this.subjectLen = b.readUInt16BE(off + 16);
    this.headerLen = b.readUInt32BE(off + 18);
    this.dataLen = b.readUInt32BE(off + 22);
    this.subjectStart = off + RECORD_OVERHEAD;
    this.headerStart = this.subjectStart + this.subjectLen;
    this.dataStart = this.headerStart + this.headerLen;
    this.end = this.dataStart + this.dataLen;
    if (this.end > b.length) throw new RangeError(`record body past end at ${off}`);
  }

  ts(off: number): bigint {
    return this.buf.readBigInt64BE(off + 8);
  }

  subject(): string {
    return this.buf.toString('utf8', this.subjectStart, this.subjectStart + this.subjectLen);
  }
}
