// Per-connection output gathered during one event-loop turn and written with one socket.write.
// Small frames are copied into a contiguous buffer (one syscall for hundreds of MSGs); payloads of
// LARGE_PAYLOAD_BYTES or more are queued by reference instead of copied.
import type { Socket } from 'node:net';

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
  private sealed: Buffer[] = [];
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
  writeMsg(prefix: Buffer, reply: string | null, headerBytes: number, payload: Buffer): void {
    const n = payload.length;
    const large = n >= LARGE_PAYLOAD_BYTES;
    const need = prefix.length + (reply === null ? 0 : reply.length * 3 + 1) + 36 + (large ? 0 : n);
    if (this.len + need > this.buf.length) this.grow(need);
    const buf = this.buf;
    buf.set(prefix, this.len);
    let len = this.len + prefix.length;
    if (reply !== null) {
      len += buf.write(reply, len, 'utf8');
      buf[len++] = 32;
    }
    if (headerBytes >= 0) {
      len = writeDecimal(buf, len, headerBytes);
      buf[len++] = 32;
    }
    len = writeDecimal(buf, len, n);
    buf[len++] = 13;
    buf[len++] = 10;
    if (large) {
      this.len = len;
      this.seal();
      this.sealed.push(payload);
      this.sealedBytes += n;
      this.writeBytes(CRLF);
      return;
    }
    if (n < 64) {
      for (let i = 0; i < n; i++) buf[len + i] = payload[i]!;
    } else {
      buf.set(payload, len);
    }
    len += n;
    buf[len++] = 13;
    buf[len++] = 10;
    this.len = len;
  }

  /** Hands everything to the socket; returns the number of bytes written. */
  flushTo(socket: Socket): number {
    const total = this.pendingBytes;
    if (total === 0) return 0;
    if (this.sealed.length === 0) {
      socket.write(this.buf.subarray(0, this.len));
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
