// A lean NATS client over a raw TCP socket, for bench workers: the `nats` package spends more CPU per
// message than the servers being measured (~17k async publishes/s in the earlier JetStream bench), so the
// hot loops here write protocol bytes into one buffer per event-loop turn and parse replies byte-wise,
// without a string or a promise per message.
import { connect as tcpConnect } from 'node:net';
import { WebSocket, createWebSocketStream } from 'ws';

const LF = 10;
const SPACE = 32;
const TAB = 9;
const DOT = 46;
const OUT_CHUNK_BYTES = 256 * 1024;
/** A peer that sends more than this without a complete frame is broken; the bench stops rather than grow. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The message handed to a subscription callback. One object is reused for every message (callbacks run
 * synchronously), so a callback copies what it keeps. Offsets index `buf`; `headerEnd === headerStart`
 * when the message has no headers.
 */
class MessageView {
  buf = Buffer.alloc(0);
  subjectStart = 0;
  subjectEnd = 0;
  replyStart = 0;
  replyEnd = 0;
  headerStart = 0;
  headerEnd = 0;
  payloadStart = 0;
  payloadEnd = 0;

  subject() {
    return this.buf.latin1Slice(this.subjectStart, this.subjectEnd);
  }

  reply() {
    return this.buf.latin1Slice(this.replyStart, this.replyEnd);
  }

  hasReply() {
    return this.replyEnd > this.replyStart;
  }

  payload() {
    return this.buf.subarray(this.payloadStart, this.payloadEnd);
  }

  /** The number after the last '.' of the reply subject (-1 when it is not one), without a string. */
  replyTailNumber() {
    return tailNumber(this.buf, this.replyStart, this.replyEnd);
  }

  /** The number after the last '.' of the subject (inboxes carry a request id there). */
  subjectTailNumber() {
    return tailNumber(this.buf, this.subjectStart, this.subjectEnd);
  }

  /** The status code of a `NATS/1.0 <code> …` header line (0 when there is none). */
  status() {
    if (this.headerEnd - this.headerStart < 12) return 0;
    const b = this.buf;
    const at = this.headerStart + 9; // after "NATS/1.0 "
    let code = 0;
    for (let i = at; i < at + 3; i++) {
      const d = b[i] - 48;
      if (d < 0 || d > 9) return 0;
      code = code * 10 + d;
    }
    return code;
  }

  /** A header's value (first occurrence, case-sensitive name), or null. */
  header(name) {
    if (this.headerEnd === this.headerStart) return null;
    const text = this.buf.latin1Slice(this.headerStart, this.headerEnd);
    const at = text.indexOf(`\r\n${name}:`);
    if (at < 0) return null;
    const end = text.indexOf('\r\n', at + 2);
    return text.slice(at + name.length + 3, end < 0 ? undefined : end).trim();
  }

  /** Whether the payload contains `needle` (a Buffer), e.g. `"error"` in a PubAck. */
  payloadIncludes(needle) {
    // bounded to the payload: searching from payloadStart alone would scan the rest of the chunk
    return this.buf.subarray(this.payloadStart, this.payloadEnd).indexOf(needle) >= 0;
  }
}

function tailNumber(buf, start, end) {
  let n = 0;
  let mult = 1;
  let i = end - 1;
  for (; i >= start; i--) {
    const c = buf[i];
    if (c === DOT) break;
    const d = c - 48;
    if (d < 0 || d > 9) return -1;
    n += d * mult;
    mult *= 10;
  }
  return i >= start && i < end - 1 ? n : -1;
}

export class RawNatsClient {
  /** Connects, sends CONNECT (headers and no_responders on) and waits for the first PONG. */
  static async connect(url, name = 'flotilla-bench') {
    const { hostname, port, username, password, protocol } = new URL(url.includes('://') ? url : `nats://${url}`);
    // ws://: the same byte stream through `ws` frames (one frame per write, as a browser client sends)
    const socket =
      protocol === 'ws:'
        ? createWebSocketStream(new WebSocket(`ws://${hostname}:${port}`, { perMessageDeflate: false }))
        : tcpConnect({ host: hostname, port: Number(port), noDelay: true });
    const client = new RawNatsClient(socket);
    const connected = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no PONG from ${url} within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      socket.once('error', reject);
      client.pongWaiters.push(() => {
        clearTimeout(timer);
        socket.off('error', reject);
        resolve();
      });
    });
    const connect = { verbose: false, pedantic: false, name, lang: 'node-raw', version: '1', protocol: 1, headers: true, no_responders: true };
    if (username !== '') Object.assign(connect, { user: decodeURIComponent(username), pass: decodeURIComponent(password) });
    client.writeText(`CONNECT ${JSON.stringify(connect)}\r\nPING\r\n`);
    await connected;
    return client;
  }

  constructor(socket) {
    this.socket = socket;
    this.pending = null; // unparsed tail of earlier chunks
    this.subs = new Map(); // sid -> callback(view)
    this.nextSid = 1;
    this.pongWaiters = [];
    this.view = new MessageView();
    this.tokenStarts = new Int32Array(5); // reused by parseMessage
    this.tokenEnds = new Int32Array(5);
    this.out = Buffer.allocUnsafe(OUT_CHUNK_BYTES);
    this.outLen = 0; // end of what is queued in `out`
    this.outStart = 0; // start of what is queued and not yet handed to the socket
    this.flushScheduled = false;
    this.closed = false;
    this.serverErrors = [];
    this.inboxPrefix = `_INBOX.${Math.random().toString(36).slice(2, 12)}`;
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.pongWaiters.splice(0)) w();
    });
    socket.on('error', () => undefined); // 'close' follows; workers report what they measured
  }

  subscribe(subject, callback, queue = '') {
    const sid = this.nextSid++;
    this.subs.set(sid, callback);
    this.writeText(queue ? `SUB ${subject} ${queue} ${sid}\r\n` : `SUB ${subject} ${sid}\r\n`);
    return sid;
  }

  unsubscribe(sid) {
    this.subs.delete(sid);
    this.writeText(`UNSUB ${sid}\r\n`);
  }

  /** Queues `PUB subject [reply] n\r\n<payload>\r\n`; written at the end of this event-loop turn. */
  publish(subject, reply, payload) {
    const head = reply ? `PUB ${subject} ${reply} ${payload.length}\r\n` : `PUB ${subject} ${payload.length}\r\n`;
    this.reserve(head.length * 3 + payload.length + 2);
    this.outLen += this.out.latin1Write(head, this.outLen);
    this.outLen += payload.copy(this.out, this.outLen);
    this.out[this.outLen++] = 13;
    this.out[this.outLen++] = LF;
  }

  /** Queues `HPUB subject [reply] <hdr len> <total len>\r\n<header><payload>\r\n` (header: an encoded NATS/1.0 block). */
  hpublish(subject, reply, header, payload) {
    const total = header.length + payload.length;
    const head = reply ? `HPUB ${subject} ${reply} ${header.length} ${total}\r\n` : `HPUB ${subject} ${header.length} ${total}\r\n`;
    this.reserve(head.length * 3 + total + 2);
    this.outLen += this.out.latin1Write(head, this.outLen);
    this.outLen += header.copy(this.out, this.outLen);
    this.outLen += payload.copy(this.out, this.outLen);
    this.out[this.outLen++] = 13;
    this.out[this.outLen++] = LF;
  }

  /**
   * `<head><id> <n>\r\n<payload>\r\n` where head is the pre-encoded `PUB <subject> <reply prefix>`: the hot
   * path of windowed requests, with no string built per message.
   */
  /** HPUB as publishNumbered: `head` is `HPUB <subject> <reply prefix>`, `header` a whole NATS/1.0 block. */
  publishNumberedWithHeader(head, id, header, payload) {
    this.reserve(head.length + 48 + header.length + payload.length);
    const out = this.out;
    let o = this.outLen;
    o += head.copy(out, o);
    o = writeDigits(out, o, id);
    out[o++] = SPACE;
    o = writeDigits(out, o, header.length);
    out[o++] = SPACE;
    o = writeDigits(out, o, header.length + payload.length);
    out[o++] = 13;
    out[o++] = LF;
    o += header.copy(out, o);
    o += payload.copy(out, o);
    out[o++] = 13;
    out[o++] = LF;
    this.outLen = o;
  }

  publishNumbered(head, id, payload) {
    this.reserve(head.length + 32 + payload.length);
    const out = this.out;
    let o = this.outLen;
    o += head.copy(out, o);
    o = writeDigits(out, o, id);
    out[o++] = SPACE;
    o = writeDigits(out, o, payload.length);
    out[o++] = 13;
    out[o++] = LF;
    o += payload.copy(out, o);
    out[o++] = 13;
    out[o++] = LF;
    this.outLen = o;
  }

  /** `<head><payload>\r\n` where head is the pre-encoded `PUB <subject> <n>\r\n` for this payload size. */
  publishWithHead(head, payload) {
    this.reserve(head.length + payload.length + 2);
    let o = this.outLen;
    o += head.copy(this.out, o);
    o += payload.copy(this.out, o);
    this.out[o++] = 13;
    this.out[o++] = LF;
    this.outLen = o;
  }

  /** An empty message to the reply subject of `m` (a JetStream ack), copied byte for byte. */
  replyEmpty(m) {
    if (m.replyEnd <= m.replyStart) return;
    this.reserve(m.replyEnd - m.replyStart + 12);
    const out = this.out;
    let o = this.outLen;
    out[o++] = 80; // P
    out[o++] = 85; // U
    out[o++] = 66; // B
    out[o++] = SPACE;
    o += m.buf.copy(out, o, m.replyStart, m.replyEnd);
    out[o++] = SPACE;
    out[o++] = 48; // 0
    out[o++] = 13;
    out[o++] = LF;
    out[o++] = 13;
    out[o++] = LF;
    this.outLen = o;
  }

  /** Resolves on the server's PONG: everything written before has been processed. */
  flush() {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.pongWaiters.push(resolve);
      this.writeText('PING\r\n');
    });
  }

  async close() {
    if (this.closed) return;
    this.writeNow();
    await new Promise((resolve) => {
      this.socket.once('close', resolve);
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 2_000).unref();
    });
  }

  writeText(text) {
    this.reserve(text.length * 3);
    this.outLen += this.out.write(text, this.outLen, 'utf8');
  }

  reserve(bytes) {
    if (this.outLen + bytes > this.out.length) {
      this.writeNow();
      this.out = Buffer.allocUnsafe(Math.max(OUT_CHUNK_BYTES, bytes));
      this.outLen = 0;
      this.outStart = 0;
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.writeNow());
    }
  }

  writeNow() {
    this.flushScheduled = false;
    if (this.closed) this.outStart = this.outLen; // nobody reads it any more
    if (this.outLen === this.outStart) return;
    // The socket keeps a reference to the slice it was given: later writes go after it in the same
    // buffer, and a new buffer is taken only when this one is full (reserve).
    this.socket.write(this.out.subarray(this.outStart, this.outLen));
    this.outStart = this.outLen;
  }

  onData(chunk) {
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let pos = 0;
    const len = buf.length;
    while (pos < len) {
      const lf = buf.indexOf(LF, pos);
      if (lf < 0) break;
      const c0 = buf[pos];
      if (c0 === 77 /* M */ || c0 === 72 /* H */) {
        const next = this.parseMessage(buf, pos, lf, c0 === 72);
        if (next < 0) break; // payload incomplete
        pos = next;
        continue;
      }
      if (c0 === 80 /* P */) {
        if (buf[pos + 1] === 73 /* PING */) this.writeText('PONG\r\n');
        else this.pongWaiters.shift()?.();
      } else if (c0 === 45 /* -ERR */) {
        if (this.serverErrors.length < 10) this.serverErrors.push(buf.latin1Slice(pos, lf - 1));
      }
      pos = lf + 1; // INFO, +OK, PING, PONG, -ERR
    }
    if (pos < len) {
      if (len - pos > MAX_FRAME_BYTES) {
        this.socket.destroy(new Error('frame larger than the bench allows'));
        return;
      }
      this.pending = buf.subarray(pos);
    }
  }

  /** Parses `MSG subj sid [reply] n` / `HMSG subj sid [reply] h n` at pos; returns the next position or -1. */
  parseMessage(buf, pos, lf, withHeaders) {
    const lineEnd = buf[lf - 1] === 13 ? lf - 1 : lf;
    // up to 5 tokens after the verb: their [start, end) offsets
    const starts = this.tokenStarts;
    const ends = this.tokenEnds;
    let n = 0;
    let i = pos + (withHeaders ? 5 : 4);
    while (i < lineEnd && n < 5) {
      while (i < lineEnd && (buf[i] === SPACE || buf[i] === TAB)) i++;
      if (i >= lineEnd) break;
      starts[n] = i;
      while (i < lineEnd && buf[i] !== SPACE && buf[i] !== TAB) i++;
      ends[n++] = i;
    }
    const sizes = withHeaders ? 2 : 1;
    const hasReply = n === 3 + sizes;
    const total = digits(buf, starts[n - 1], ends[n - 1]);
    const headerBytes = withHeaders ? digits(buf, starts[n - 2], ends[n - 2]) : 0;
    const bodyStart = lf + 1;
    const next = bodyStart + total + 2;
    if (next > buf.length) return -1;
    const sid = digits(buf, starts[1], ends[1]);
    const callback = this.subs.get(sid);
    if (callback) {
      const v = this.view;
      v.buf = buf;
      v.subjectStart = starts[0];
      v.subjectEnd = ends[0];
      v.replyStart = hasReply ? starts[2] : 0;
      v.replyEnd = hasReply ? ends[2] : 0;
      v.headerStart = bodyStart;
      v.headerEnd = bodyStart + headerBytes;
      v.payloadStart = bodyStart + headerBytes;
      v.payloadEnd = bodyStart + total;
      callback(v);
    }
    return next;
  }
}

/** Writes n (a non-negative integer) in decimal at o; returns the offset after it. */
function writeDigits(buf, o, n) {
  let len = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) len++;
  for (let i = o + len - 1, x = n; i >= o; i--, x = Math.floor(x / 10)) buf[i] = 48 + (x % 10);
  return o + len;
}

function digits(buf, start, end) {
  let n = 0;
  for (let i = start; i < end; i++) n = n * 10 + (buf[i] - 48);
  return n;
}
