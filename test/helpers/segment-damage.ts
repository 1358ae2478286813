// Finds the frames and records of a FileStore segment file (format 2) so a test can flip bits in exactly
// one payload, record header or frame header. Layout: packages/store/README.md.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FRAME_MAGIC = 0x464c5432;
export const FRAME_HEADER_BYTES = 28;
const RECORD_FIXED_BYTES = 26;

export interface SegmentRecord {
  at: number;
  seq: number;
  dataAt: number;
}

export interface SegmentFrame {
  pos: number;
  records: SegmentRecord[];
}

/** Every segment file under `root` (any depth) whose path contains `part`. */
export function segmentFiles(root: string, part = ''): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/^seg-\d{12}\.log$/.test(name) && p.includes(part)) out.push(p);
    }
  };
  walk(root);
  return out.sort();
}

export function framesOf(path: string): SegmentFrame[] {
  const bytes = readFileSync(path);
  const frames: SegmentFrame[] = [];
  for (let pos = 0; pos + FRAME_HEADER_BYTES <= bytes.length && bytes.readUInt32BE(pos) === FRAME_MAGIC; ) {
    const len = bytes.readUInt32BE(pos + 4);
    const records: SegmentRecord[] = [];
    for (let at = pos + FRAME_HEADER_BYTES; at < pos + FRAME_HEADER_BYTES + len; ) {
      const subjectLen = bytes.readUInt16BE(at + 16);
      const headerLen = bytes.readUInt32BE(at + 18);
      const dataLen = bytes.readUInt32BE(at + 22);
      records.push({ at, seq: Number(bytes.readBigUInt64BE(at)), dataAt: at + RECORD_FIXED_BYTES + subjectLen + headerLen });
      at += RECORD_FIXED_BYTES + subjectLen + headerLen + dataLen + 4;
    }
    frames.push({ pos, records });
    pos += FRAME_HEADER_BYTES + len;
  }
  return frames;
}

/** Flips one bit of the byte at `offset`. */
export function flipBit(path: string, offset: number, bit = 0): void {
  const bytes = readFileSync(path);
  bytes[offset] ^= 1 << bit;
  writeFileSync(path, bytes);
}
