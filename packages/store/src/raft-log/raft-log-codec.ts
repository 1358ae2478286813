// Binary layout of the Raft log in LevelDB. Keys sort by (kind, group, index) so one range scan loads a group.
import type { Entry, EntryType, HardState, Snapshot, SnapshotMeta } from '@flotilla/raft';

const KIND_BLOCK = 0x45; // 'E': a block of consecutive entries, keyed by its first index
const KIND_HARD_STATE = 0x48; // 'H'
const KIND_SNAPSHOT = 0x53; // 'S'

function groupKey(kind: number, group: string, suffixBytes: number): { key: Buffer; offset: number } {
  const g = Buffer.from(group, 'utf8');
  const key = Buffer.allocUnsafe(2 + g.length + suffixBytes);
  key[0] = kind;
  g.copy(key, 1);
  key[1 + g.length] = 0;
  return { key, offset: 2 + g.length };
}

export function blockKey(group: string, firstIndex: number): Buffer {
  const { key, offset } = groupKey(KIND_BLOCK, group, 8);
  key.writeUInt32BE(Math.floor(firstIndex / 2 ** 32), offset);
  key.writeUInt32BE(firstIndex >>> 0, offset + 4);
  return key;
}

export function blockRange(group: string): { gte: Buffer; lt: Buffer } {
  const gte = groupKey(KIND_BLOCK, group, 0).key;
  const lt = Buffer.from(gte);
  lt[lt.length - 1] = 1;
  return { gte, lt };
}

export function hardStateKey(group: string): Buffer {
  return groupKey(KIND_HARD_STATE, group, 0).key;
}

export function snapshotKey(group: string): Buffer {
  return groupKey(KIND_SNAPSHOT, group, 0).key;
}

/** Block: u32 count, then per entry f64 term, u8 type, u32 length, data. Indexes are implicit. */
export function encodeBlock(entries: readonly Entry[]): Buffer {
  let size = 4;
  for (const e of entries) size += 13 + e.data.length;
  const buf = Buffer.allocUnsafe(size);
  buf.writeUInt32BE(entries.length, 0);
  let o = 4;
  for (const e of entries) {
    buf.writeDoubleBE(e.term, o);
    buf[o + 8] = e.type;
    buf.writeUInt32BE(e.data.length, o + 9);
    o += 13;
    buf.set(e.data, o);
    o += e.data.length;
  }
  return buf;
}

export function decodeBlock(firstIndex: number, buf: Buffer): Entry[] {
  const count = buf.readUInt32BE(0);
  const entries: Entry[] = [];
  let o = 4;
  for (let i = 0; i < count; i++) {
    const term = buf.readDoubleBE(o);
    const type = buf[o + 8] as EntryType;
    const len = buf.readUInt32BE(o + 9);
    o += 13;
    entries.push({ index: firstIndex + i, term, type, data: new Uint8Array(buf.buffer, buf.byteOffset + o, len) });
    o += len;
  }
  return entries;
}

export function blockFirstIndex(key: Buffer): number {
  return key.readUInt32BE(key.length - 8) * 2 ** 32 + key.readUInt32BE(key.length - 4);
}

export function encodeHardState(hs: HardState): Buffer {
  const buf = Buffer.allocUnsafe(24);
  buf.writeDoubleBE(hs.term, 0);
  buf.writeDoubleBE(hs.vote, 8);
  buf.writeDoubleBE(hs.commit, 16);
  return buf;
}

export function decodeHardState(buf: Buffer): HardState {
  return { term: buf.readDoubleBE(0), vote: buf.readDoubleBE(8), commit: buf.readDoubleBE(16) };
}

/** Snapshot: u32 meta length, meta JSON, data. */
export function encodeSnapshot(snap: Snapshot): Buffer {
  const meta = Buffer.from(JSON.stringify(snap.meta), 'utf8');
  const buf = Buffer.allocUnsafe(4 + meta.length + snap.data.length);
  buf.writeUInt32BE(meta.length, 0);
  meta.copy(buf, 4);
  buf.set(snap.data, 4 + meta.length);
  return buf;
}

export function decodeSnapshot(buf: Buffer): Snapshot {
  const metaLen = buf.readUInt32BE(0);
  const meta = JSON.parse(buf.subarray(4, 4 + metaLen).toString('utf8')) as SnapshotMeta;
  return { meta, data: new Uint8Array(buf.buffer, buf.byteOffset + 4 + metaLen, buf.length - 4 - metaLen) };
}
