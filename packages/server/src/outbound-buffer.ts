// Per-connection output gathered during one event-loop turn and written with one socket.write.
// Small frames are copied into a contiguous buffer (one syscall for hundreds of MSGs); payloads of
// LARGE_PAYLOAD_BYTES or more are queued by reference instead of copied. Payloads may be plain Uint8Array
// views (stored JetStream messages): nothing here needs a Buffer.
import type { ClientTransport } from './client-transport.js';

const INITIAL_BYTES = 16 * 1024;
const LARGE_PAYLOAD_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');

/** Writes a non-negative integer in decimal at `at`; returns the new end. */
function writeDecimal(buf: Buffer, at: number, value: number): number {
  if (value < 10) {
    buf[at] = 48 + value;
    return at + 1;
  }
  let digits = 1;
  for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
  let v = value;
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = 48 + (v % 10);
    v = Math.floor(v / 10);
  }
  return at + digits;
}

export class OutboundBuffer {
  private buf: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  private len = 0;
  // Sealed pieces waiting for the flush, in order (only when a large payload was queued by reference).
  private sealed: Uint8Array[] = [];
  private sealedBytes = 0;

  /** Bytes waiting for the next flush. */
  get pendingBytes(): number {
    return this.len + this.sealedBytes;
  }

  writeBytes(bytes: Buffer): void {
    const n = bytes.length;
    if (n >= LARGE_PAYLOAD_BYTES) {
      this.seal();
      this.sealed.push(bytes);
      this.sealedBytes += n;
      return;
    }
    if (this.len + n > this.buf.length) this.grow(n);
    bytes.copy(this.buf, this.len);
    this.len += n;
  }

  /**
   * A whole MSG/HMSG frame: `prefix` is the cached `MSG <subject> <sid> ` (or `HMSG …`); the rest is
   * written byte by byte so no string is built per message.
   */
  writeMsg(prefix: Buffer, reply: string | null, headerBytes: number, payload: Uint8Array): void {
    const n = payload.length;
    const large = n >= LARGE_PAYLOAD_BYTES;
    this.controlLine(prefix, reply, headerBytes, n, large ? 0 : n + 2);
    if (large) return this.queueLarge(payload);
    this.copyIn(payload);
    this.crlf();
  }

  /**
   * writeMsg for a header block and body held apart (server-originated messages): both are written
   * where they are, so no joined copy is made first. `header` null: a MSG without headers.
   */
  writeMsgParts(prefix: Buffer, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    const headerBytes = header === null ? -1 : header.length;
    const n = data.length;
    const large = n >= LARGE_PAYLOAD_BYTES;
    const headerLen = header === null ? 0 : header.length;
    this.controlLine(prefix, reply, headerBytes, headerLen + n, headerLen + (large ? 0 : n + 2));
    if (header !== null) this.copyIn(header);
    if (large) return this.queueLarge(data);
    this.copyIn(data);
    this.crlf();
  }

  /** `<prefix>[reply ][hdr ]<total>\r\n`, with room reserved for `extra` more bytes after it. */
  private controlLine(prefix: Buffer, reply: string | null, headerBytes: number, total: number, extra: number): void {
    const need = prefix.length + (reply === null ? 0 : reply.length * 3 + 1) + 36 + extra;
    if (this.len + need > this.buf.length) this.grow(need);
    this.buf.set(prefix, this.len);
    this.lineTail(this.len + prefix.length, reply, headerBytes, total);
  }

  /**
   * writeMsgParts for a subject the subscription will not see again (a request's reply inbox): the
   * `MSG <subject> <sid> ` start is written from the strings instead of a cached prefix Buffer made for it.
   */
  writeMsgPartsNamed(subject: string, sid: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    const headerLen = header === null ? 0 : header.length;
    const n = data.length;
    const large = n >= LARGE_PAYLOAD_BYTES;
    const need = 6 + (subject.length + sid.length) * 3 + (reply === null ? 0 : reply.length * 3 + 1) + 36 + headerLen + (large ? 0 : n + 2);
    if (this.len + need > this.buf.length) this.grow(need);
    const buf = this.buf;
    let len = this.len;
    if (header !== null) buf[len++] = 72; // H
    buf[len++] = 77; // M
    buf[len++] = 83; // S
    buf[len++] = 71; // G
    buf[len++] = 32;
    len += buf.write(subject, len, 'utf8');
    buf[len++] = 32;
    len += buf.write(sid, len, 'utf8');
    buf[len++] = 32;
    this.lineTail(len, reply, header === null ? -1 : headerLen, headerLen + n);
    if (header !== null) this.copyIn(header);
    if (large) return this.queueLarge(data);
    this.copyIn(data);
    this.crlf();
  }

  /** The control line from `len` on: `[reply ][hdr ]<total>\r\n`; room was reserved by the caller. */
  private lineTail(len: number, reply: string | null, headerBytes: number, total: number): void {
    const buf = this.buf;
    if (reply !== null) {
      len += buf.write(reply, len, 'utf8');
      buf[len++] = 32;
    }
    if (headerBytes >= 0) {
      len = writeDecimal(buf, len, headerBytes);
      buf[len++] = 32;
    }
    len = writeDecimal(buf, len, total);
    buf[len++] = 13;
    buf[len++] = 10;
    this.len = len;
  }

  /** Copies into room the caller reserved (controlLine's `extra`). */
  private copyIn(bytes: Uint8Array): void {
    const n = bytes.length;
    const buf = this.buf;
    const len = this.len;
    if (n < 64) {
      for (let i = 0; i < n; i++) buf[len + i] = bytes[i]!;
    } else {
      buf.set(bytes, len);
    }
    this.len = len + n;
  }

  private crlf(): void {
    const buf = this.buf;
    buf[this.len++] = 13;
    buf[this.len++] = 10;
  }

  /** A large payload goes out by reference after what is buffered so far, then its CRLF. */
  private queueLarge(payload: Uint8Array): void {
    this.seal();
    this.sealed.push(payload);
    this.sealedBytes += payload.length;
    this.writeBytes(CRLF);
  }

  /** Hands everything to the socket; returns the number of bytes written. */
  flushTo(socket: ClientTransport): number {
    const total = this.pendingBytes;
    if (total === 0) return 0;
    if (this.sealed.length === 0) {
      socket.write(this.buf.subarray(0, this.len));
      // Written through to the kernel at once (nothing left queued in the socket): the buffer is free
      // again. Reusing it spares a fresh allocation and its first-touch page faults for every flush.
      // TLS sockets may hold cleartext until their handshake is done: those always get a fresh one.
      if (socket.writableLength === 0 && (socket as { encrypted?: boolean }).encrypted !== true) {
        this.len = 0;
        return total;
      }
    } else {
      this.seal();
      socket.cork();
      for (const piece of this.sealed) socket.write(piece);
      socket.uncork();
      this.sealed = [];
      this.sealedBytes = 0;
    }
    // The written bytes now belong to the socket until sent: continue in a fresh buffer.
    this.buf = Buffer.allocUnsafe(Math.max(INITIAL_BYTES, Math.min(this.buf.length, 1024 * 1024)));
    this.len = 0;
    return total;
  }

  clear(): void {
    this.len = 0;
    this.sealed = [];
    this.sealedBytes = 0;
  }

  private seal(): void {
    if (this.len === 0) return;
    this.sealed.push(this.buf.subarray(0, this.len));
    this.sealedBytes += this.len;
    this.buf = Buffer.allocUnsafe(INITIAL_BYTES);
    this.len = 0;
  }

  private grow(extra: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + extra));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }
}
