// Hand-written protobuf for the hot path: a Batch whose frames are mostly RoutedMessages is encoded and
// decoded here byte by byte (the same wire format cluster.proto defines, checked against protobufjs in the
// tests); every other frame kind goes through protobufjs. This halves the per-message CPU of routing.
import type { Frame, RoutedMessageFrame } from './wire.js';

export interface FrameCodec {
  encodeFrame(frame: Frame): Uint8Array;
  decodeFrame(bytes: Uint8Array): Frame | null;
}

// Field tags: (field number << 3) | wire type (2 = length-delimited, 0 = varint).
const TAG_BATCH_FRAME = 0x0a; // Batch.frames = 1
const TAG_FRAME_MSG = 0x22; // Frame.msg = 4
const TAG_MSG_SUBJECT = 0x0a;
const TAG_MSG_REPLY = 0x12;
const TAG_MSG_MESSAGE = 0x1a;
const TAG_MSG_HEADER_BYTES = 0x20;
const TAG_MSG_QUEUES = 0x2a;
const TAG_MSG_ROUTE = 0x32;
const TAG_MSG_ACCOUNT = 0x3a;

export function encodeBatchWith(codec: FrameCodec, frames: readonly Frame[]): Buffer {
  const n = frames.length;
  const bodySizes = new Array<number>(n);
  const encoded = new Array<Uint8Array | null>(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const f = frames[i]!;
    let frameLen: number;
    if ('msg' in f) {
      const body = msgBodySize(f.msg);
      bodySizes[i] = body;
      encoded[i] = null;
      frameLen = 1 + varintSize(body) + body;
    } else {
      const bytes = codec.encodeFrame(f);
      encoded[i] = bytes;
      bodySizes[i] = 0;
      frameLen = bytes.length;
    }
    total += 1 + varintSize(frameLen) + frameLen;
  }
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const f = frames[i]!;
    buf[pos++] = TAG_BATCH_FRAME;
    const pre = encoded[i];
    if (pre !== null && pre !== undefined) {
      pos = writeVarint(buf, pos, pre.length);
      buf.set(pre, pos);
      pos += pre.length;
      continue;
    }
    const body = bodySizes[i]!;
    pos = writeVarint(buf, pos, 1 + varintSize(body) + body);
    buf[pos++] = TAG_FRAME_MSG;
    pos = writeVarint(buf, pos, body);
    pos = writeMsgBody(buf, pos, (f as { msg: RoutedMessageFrame }).msg);
  }
  return buf;
}

export function decodeBatchWith(codec: FrameCodec, buf: Buffer): Frame[] {
  const out: Frame[] = [];
  const end = buf.length;
  const cursor = { pos: 0 };
  while (cursor.pos < end) {
    const tag = readVarint(buf, cursor, end);
    if (tag !== TAG_BATCH_FRAME) {
      skipField(buf, cursor, end, tag);
      continue;
    }
    const len = readVarint(buf, cursor, end);
    const frameEnd = cursor.pos + len;
    if (frameEnd > end) throw new RangeError('truncated batch');
    const frame = decodeFrameAt(codec, buf, cursor.pos, frameEnd);
    if (frame !== null) out.push(frame);
    cursor.pos = frameEnd;
  }
  return out;
}

function decodeFrameAt(codec: FrameCodec, buf: Buffer, start: number, end: number): Frame | null {
  // The fast path: a frame that is exactly one msg field.
  if (start < end && buf[start] === TAG_FRAME_MSG) {
    const c = { pos: start + 1 };
    const len = readVarint(buf, c, end);
    if (c.pos + len === end) return { msg: decodeMsgBody(buf, c.pos, end) };
  }
  return codec.decodeFrame(buf.subarray(start, end));
}

function msgBodySize(m: RoutedMessageFrame): number {
  let n = 0;
  if (m.subject.length > 0) n += lenField(utf8Length(m.subject));
  if (m.reply.length > 0) n += lenField(utf8Length(m.reply));
  if (m.message.length > 0) n += lenField(m.message.length);
  if (m.headerBytes !== 0) n += 1 + varintSize(zigzag(m.headerBytes));
  for (const q of m.queues) n += lenField(utf8Length(q));
  if (m.route.length > 0) n += lenField(utf8Length(m.route));
  if (m.account !== undefined && m.account.length > 0) n += lenField(utf8Length(m.account));
  return n;
}

/** Short strings are counted in JS: cheaper than a call into Buffer.byteLength. */
function utf8Length(s: string): number {
  const n = s.length;
  if (n > 64) return Buffer.byteLength(s);
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s);
  return n;
}

function writeMsgBody(buf: Buffer, pos: number, m: RoutedMessageFrame): number {
  if (m.subject.length > 0) pos = writeString(buf, pos, TAG_MSG_SUBJECT, m.subject);
  if (m.reply.length > 0) pos = writeString(buf, pos, TAG_MSG_REPLY, m.reply);
  if (m.message.length > 0) {
    const msg = m.message;
    const len = msg.length;
    buf[pos++] = TAG_MSG_MESSAGE;
    pos = writeVarint(buf, pos, len);
    if (len <= 16) for (let i = 0; i < len; i++) buf[pos + i] = msg[i]!;
    else buf.set(msg, pos);
    pos += len;
  }
  if (m.headerBytes !== 0) {
    buf[pos++] = TAG_MSG_HEADER_BYTES;
    pos = writeVarint(buf, pos, zigzag(m.headerBytes));
  }
  for (const q of m.queues) pos = writeString(buf, pos, TAG_MSG_QUEUES, q);
  if (m.route.length > 0) pos = writeString(buf, pos, TAG_MSG_ROUTE, m.route);
  if (m.account !== undefined && m.account.length > 0) pos = writeString(buf, pos, TAG_MSG_ACCOUNT, m.account);
  return pos;
}

const EMPTY = new Uint8Array(0);

function decodeMsgBody(buf: Buffer, start: number, end: number): RoutedMessageFrame {
  let subject = '';
  let reply = '';
  let message: Uint8Array = EMPTY;
  let headerBytes = 0;
  const queues: string[] = [];
  let route = '';
  let account = '';
  const c = { pos: start };
  while (c.pos < end) {
    const tag = readVarint(buf, c, end);
    switch (tag) {
      case TAG_MSG_SUBJECT:
        subject = readSubject(buf, c, end);
        break;
      case TAG_MSG_REPLY:
        reply = readString(buf, c, end);
        break;
      case TAG_MSG_MESSAGE: {
        const len = readVarint(buf, c, end);
        if (c.pos + len > end) throw new RangeError('truncated message');
        message = buf.subarray(c.pos, c.pos + len);
        c.pos += len;
        break;
      }
      case TAG_MSG_HEADER_BYTES:
        headerBytes = unzigzag(readVarint(buf, c, end));
        break;
      case TAG_MSG_QUEUES:
        queues.push(readString(buf, c, end));
        break;
      case TAG_MSG_ROUTE:
        route = readString(buf, c, end);
        break;
      case TAG_MSG_ACCOUNT:
        account = readString(buf, c, end);
        break;
      default:
        skipField(buf, c, end, tag);
    }
  }
  // The global account's frames keep their one shape (no `account` key): the hot path stays monomorphic.
  if (account === '') return { subject, reply, message, headerBytes, queues, route };
  return { subject, reply, message, headerBytes, queues, route, account };
}

function lenField(len: number): number {
  return 1 + varintSize(len) + len;
}

function writeString(buf: Buffer, pos: number, tag: number, s: string): number {
  const len = utf8Length(s);
  buf[pos++] = tag;
  pos = writeVarint(buf, pos, len);
  if (len === s.length && len <= 64) {
    // ASCII: byte per char, no call into C++
    for (let i = 0; i < len; i++) buf[pos + i] = s.charCodeAt(i);
  } else {
    buf.write(s, pos, len, 'utf8');
  }
  return pos + len;
}

// Most batches carry runs of one subject: reuse the last decoded string when the bytes match.
let lastSubject = '';
const lastSubjectBytes = Buffer.alloc(64);

function readSubject(buf: Buffer, c: { pos: number }, end: number): string {
  const start = c.pos;
  const len = readVarint(buf, c, end);
  const from = c.pos;
  if (len === lastSubject.length && len <= 64 && from + len <= end) {
    let same = true;
    for (let i = 0; i < len; i++) {
      if (buf[from + i] !== lastSubjectBytes[i]) {
        same = false;
        break;
      }
    }
    if (same) {
      c.pos = from + len;
      return lastSubject;
    }
  }
  c.pos = start;
  const s = readString(buf, c, end);
  if (len <= 64 && s.length === len) {
    // ASCII only, so string length and byte length agree and the comparison above is exact
    buf.copy(lastSubjectBytes, 0, from, from + len);
    lastSubject = s;
  }
  return s;
}

function readString(buf: Buffer, c: { pos: number }, end: number): string {
  const len = readVarint(buf, c, end);
  if (c.pos + len > end) throw new RangeError('truncated string');
  const s = buf.toString('utf8', c.pos, c.pos + len);
  c.pos += len;
  return s;
}

/** sint32 zigzag: small negative numbers stay small. */
function zigzag(n: number): number {
  return ((n << 1) ^ (n >> 31)) >>> 0;
}

function unzigzag(n: number): number {
  return (n >>> 1) ^ -(n & 1);
}

export function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  return 5;
}

function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

/** Reads a varint of up to 32 bits (tags and lengths); longer ones are not produced by this codec. */
function readVarint(buf: Buffer, c: { pos: number }, end: number): number {
  let result = 0;
  let shift = 0;
  for (let i = 0; i < 10; i++) {
    if (c.pos >= end) throw new RangeError('truncated varint');
    const b = buf[c.pos++]!;
    if (shift < 32) result |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result >>> 0;
    shift += 7;
  }
  throw new RangeError('varint too long');
}

function skipField(buf: Buffer, c: { pos: number }, end: number, tag: number): void {
  switch (tag & 7) {
    case 0:
      readVarint(buf, c, end);
      return;
    case 1:
      c.pos += 8;
      break;
    case 2:
      c.pos += readVarint(buf, c, end);
      break;
    case 5:
      c.pos += 4;
      break;
    default:
      throw new RangeError(`unsupported wire type ${tag & 7}`);
  }
  if (c.pos > end) throw new RangeError('truncated field');
}
