// Binary encoding of a replicated stream's Raft entries (one proposal each; RaftNode packs a tick's worth
// into one log entry). No JSON on the per-message path. Big-endian; sequences as 48-bit integers (safe
// numbers); decoded byte fields are views into the entry, not copies.
import type { ReplicatedMsg, ReplicatedPurge } from '../stream/stream.js';

export const EntryOp = { Msg: 1, Purge: 2, Delete: 3, Consumer: 4, Batch: 5 } as const;

export type StreamReplicaEntry =
  | { op: typeof EntryOp.Msg; msg: ReplicatedMsg }
  | { op: typeof EntryOp.Purge; purge: ReplicatedPurge }
  | { op: typeof EntryOp.Delete; seq: number; erase: boolean }
  | { op: typeof EntryOp.Consumer; payload: Buffer }
  /** An atomic batch (stream/atomic-batch.ts): its messages commit together, as one proposal. */
  | { op: typeof EntryOp.Batch; msgs: ReplicatedMsg[] };

const MSG_HEADER = 1;
const MSG_NO_INTEREST = 2;
const MSG_ROLLUP_SUB = 4;
const MSG_ROLLUP_ALL = 8;
const MSG_ID = 16;

const PURGE_FILTER = 1;
const PURGE_SEQ = 2;
const PURGE_KEEP = 4;

const SEQ_BYTES = 6;

export function encodeMsgEntry(m: ReplicatedMsg): Buffer {
  const subjectLen = Buffer.byteLength(m.subject);
  const idLen = m.msgId === undefined ? 0 : Buffer.byteLength(m.msgId);
  const headerLen = m.header === null ? 0 : m.header.length;
  let flags = 0;
  if (m.header !== null && headerLen > 0) flags |= MSG_HEADER;
  if (m.noInterest) flags |= MSG_NO_INTEREST;
  if (m.rollup === 'sub') flags |= MSG_ROLLUP_SUB;
  if (m.rollup === 'all') flags |= MSG_ROLLUP_ALL;
  if (m.msgId !== undefined) flags |= MSG_ID;
  const size =
    2 + SEQ_BYTES + 8 + 2 + subjectLen + (flags & MSG_ID ? 2 + idLen : 0) + (flags & MSG_HEADER ? 4 + headerLen : 0) + 4 + m.data.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = EntryOp.Msg;
  out[1] = flags;
  let o = 2;
  out.writeUIntBE(m.seq, o, SEQ_BYTES);
  o += SEQ_BYTES;
  out.writeBigInt64BE(m.timestampNs, o);
  o += 8;
  out.writeUInt16BE(subjectLen, o);
  o += 2;
  o += out.write(m.subject, o);
  if (flags & MSG_ID) {
    out.writeUInt16BE(idLen, o);
    o += 2;
    o += out.write(m.msgId!, o);
  }
  if (flags & MSG_HEADER) {
    out.writeUInt32BE(headerLen, o);
    o += 4;
    out.set(m.header!, o);
    o += headerLen;
  }
  out.writeUInt32BE(m.data.length, o);
  o += 4;
  out.set(m.data, o);
  return out;
}

export function encodePurgeEntry(p: ReplicatedPurge): Buffer {
  const filter = p.filter ?? '';
  const filterLen = Buffer.byteLength(filter);
  let flags = 0;
  if (p.filter !== undefined) flags |= PURGE_FILTER;
  if (p.seq !== undefined) flags |= PURGE_SEQ;
  if (p.keep !== undefined) flags |= PURGE_KEEP;
  const out = Buffer.alloc(2 + SEQ_BYTES * 3 + 2 + filterLen);
  out[0] = EntryOp.Purge;
  out[1] = flags;
  out.writeUIntBE(p.bound, 2, SEQ_BYTES);
  out.writeUIntBE(Math.max(0, p.seq ?? 0), 2 + SEQ_BYTES, SEQ_BYTES);
  out.writeUIntBE(Math.max(0, p.keep ?? 0), 2 + SEQ_BYTES * 2, SEQ_BYTES);
  out.writeUInt16BE(filterLen, 2 + SEQ_BYTES * 3);
  out.write(filter, 4 + SEQ_BYTES * 3);
  return out;
}

export function encodeDeleteEntry(seq: number, erase: boolean): Buffer {
  const out = Buffer.alloc(2 + SEQ_BYTES);
  out[0] = EntryOp.Delete;
  out[1] = erase ? 1 : 0;
  out.writeUIntBE(Math.max(0, seq), 2, SEQ_BYTES);
  return out;
}

export function encodeConsumerEntry(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(1 + payload.length);
  out[0] = EntryOp.Consumer;
  out.set(payload, 1);
  return out;
}

/** An atomic batch: its encoded message entries (encodeMsgEntry), each behind its u32 length. */
export function encodeBatchEntry(msgs: readonly Buffer[]): Buffer {
  let size = 5;
  for (const m of msgs) size += 4 + m.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = EntryOp.Batch;
  out.writeUInt32BE(msgs.length, 1);
  let o = 5;
  for (const m of msgs) {
    out.writeUInt32BE(m.length, o);
    out.set(m, o + 4);
    o += 4 + m.length;
  }
  return out;
}

function decodeBatch(b: Buffer): ReplicatedMsg[] {
  const n = b.readUInt32BE(1);
  const msgs: ReplicatedMsg[] = [];
  let o = 5;
  for (let i = 0; i < n; i++) {
    const len = b.readUInt32BE(o);
    if (o + 4 + len > b.length) throw new RangeError('truncated stream batch entry');
    msgs.push(decodeMsg(b.subarray(o + 4, o + 4 + len)));
    o += 4 + len;
  }
  return msgs;
}

/** Throws RangeError on a malformed entry (a bug or corruption: entries come only from our own leaders). */
export function decodeStreamEntry(data: Uint8Array): StreamReplicaEntry {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  switch (b[0]) {
    case EntryOp.Msg:
      return { op: EntryOp.Msg, msg: decodeMsg(b) };
    case EntryOp.Purge: {
      const flags = b[1]!;
      const filterLen = b.readUInt16BE(2 + SEQ_BYTES * 3);
      const purge: ReplicatedPurge = { bound: b.readUIntBE(2, SEQ_BYTES) };
      if (flags & PURGE_SEQ) purge.seq = b.readUIntBE(2 + SEQ_BYTES, SEQ_BYTES);
      if (flags & PURGE_KEEP) purge.keep = b.readUIntBE(2 + SEQ_BYTES * 2, SEQ_BYTES);
      if (flags & PURGE_FILTER) purge.filter = b.toString('utf8', 4 + SEQ_BYTES * 3, 4 + SEQ_BYTES * 3 + filterLen);
      return { op: EntryOp.Purge, purge };
    }
    case EntryOp.Delete:
      return { op: EntryOp.Delete, erase: b[1] === 1, seq: b.readUIntBE(2, SEQ_BYTES) };
    case EntryOp.Consumer:
      return { op: EntryOp.Consumer, payload: b.subarray(1) };
    case EntryOp.Batch:
      return { op: EntryOp.Batch, msgs: decodeBatch(b) };
    default:
      throw new RangeError(`unknown stream entry op ${b[0]}`);
  }
}

function decodeMsg(b: Buffer): ReplicatedMsg {
  const flags = b[1]!;
  let o = 2;
  const seq = b.readUIntBE(o, SEQ_BYTES);
  o += SEQ_BYTES;
  const timestampNs = b.readBigInt64BE(o);
  o += 8;
  const subjectLen = b.readUInt16BE(o);
  o += 2;
  const subject = b.toString('utf8', o, o + subjectLen);
  o += subjectLen;
  let msgId: string | undefined;
  if (flags & MSG_ID) {
    const idLen = b.readUInt16BE(o);
    o += 2;
    msgId = b.toString('utf8', o, o + idLen);
    o += idLen;
  }
  let header: Buffer | null = null;
  if (flags & MSG_HEADER) {
    const headerLen = b.readUInt32BE(o);
    o += 4;
    header = b.subarray(o, o + headerLen);
    o += headerLen;
  }
  const dataLen = b.readUInt32BE(o);
  o += 4;
  if (o + dataLen > b.length) throw new RangeError('truncated stream message entry');
  const data = b.subarray(o, o + dataLen);
  const rollup = flags & MSG_ROLLUP_ALL ? 'all' : flags & MSG_ROLLUP_SUB ? 'sub' : undefined;
  return { seq, timestampNs, subject, header, data, msgId, rollup, noInterest: (flags & MSG_NO_INTEREST) !== 0 };
}
