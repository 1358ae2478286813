// A raw WebSocket client for asserting wire details: the HTTP handshake as written, frames built by hand
// (masked or not, fragmented, any opcode), and the server's frames decoded as they arrive.
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { constants as zlibConstants, inflateRawSync } from 'node:zlib';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FlotillaProcess } from './flotilla-process.js';

export const OP_CONT = 0;
export const OP_TEXT = 1;
export const OP_BINARY = 2;
export const OP_CLOSE = 8;
export const OP_PING = 9;
export const OP_PONG = 10;

export interface Frame {
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  payload: Buffer;
}

/** The websocket URL port from the server's ports file (nats-server and Flotilla both write it). */
export function websocketPort(s: FlotillaProcess): number {
  const portsDir = join(s.dir, 'ports');
  const name = readdirSync(portsDir).find((f) => f.endsWith(`_${s.proc.pid}.ports`));
  if (name === undefined) throw new Error('no ports file');
  const ports = JSON.parse(readFileSync(join(portsDir, name), 'utf8')) as { websocket?: string[] };
  const url = ports.websocket?.[0];
  if (url === undefined) throw new Error(`no websocket in ports file: ${JSON.stringify(ports)}`);
  return Number(new URL(url).port);
}

/** One frame as a client writes it; `mask` false makes an (illegal) unmasked client frame. */
export function encodeFrame(opcode: number, payload: Buffer, opts: { fin?: boolean; mask?: boolean } = {}): Buffer {
  const fin = opts.fin ?? true;
  const mask = opts.mask ?? true;
  const len = payload.length;
  const head: number[] = [(fin ? 0x80 : 0) | opcode];
  const maskBit = mask ? 0x80 : 0;
  if (len < 126) head.push(maskBit | len);
  else if (len < 65536) head.push(maskBit | 126, len >> 8, len & 0xff);
  else {
    head.push(maskBit | 127, 0, 0, 0, 0);
    head.push((len >>> 24) & 0xff, (len >>> 16) & 0xff, (len >>> 8) & 0xff, len & 0xff);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), payload]);
  const key = randomBytes(4);
  const masked = Buffer.alloc(len);
  for (let i = 0; i < len; i++) masked[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([Buffer.from(head), key, masked]);
}

export function closePayload(code: number, reason = ''): Buffer {
  const b = Buffer.alloc(2 + Buffer.byteLength(reason));
  b.writeUInt16BE(code, 0);
  b.write(reason, 2);
  return b;
}

export interface HandshakeResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

export class RawWebSocket {
  private buf = Buffer.alloc(0);
  private handshakeDone = false;
  response: HandshakeResponse | null = null;
  readonly frames: Frame[] = [];
  private closedFlag = false;
  private readonly waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
      this.wake();
    });
    socket.on('close', () => {
      this.closedFlag = true;
      if (!this.handshakeDone && this.response === null) this.parseResponse(true);
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  /** The standard handshake request, with `headers` added (a null value drops that header). */
  static request(port: number, headers: Record<string, string | null> = {}, method = 'GET'): string {
    const base: Record<string, string | null> = {
      Host: `127.0.0.1:${port}`,
      Upgrade: 'websocket',
      Connection: 'Upgrade',
      'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      'Sec-WebSocket-Version': '13',
      ...headers,
    };
    const lines = Object.entries(base)
      .filter((e): e is [string, string] => e[1] !== null)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return `${method} / HTTP/1.1\r\n${lines}\r\n`;
  }

  /** Sends `request` and waits for the response head (and, for a refusal, its body). */
  static async open(port: number, request: string = RawWebSocket.request(port)): Promise<RawWebSocket> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const ws = new RawWebSocket(socket);
    socket.write(request);
    await ws.until(() => ws.response !== null, 'a handshake response');
    if (ws.response!.status === 101) {
      const key = /Sec-WebSocket-Key: (\S+)/.exec(request)?.[1] ?? '';
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      if (ws.response!.headers['sec-websocket-accept'] !== accept) throw new Error(`bad accept: ${ws.response!.raw}`);
    }
    return ws;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  send(frame: Buffer): void {
    this.socket.write(frame);
  }

  /** Protocol text in one masked binary frame. */
  sendText(text: string): void {
    this.send(encodeFrame(OP_BINARY, Buffer.from(text)));
  }

  /** Everything received in data frames so far, as text. */
  get text(): string {
    return this.frames
      .filter((f) => f.opcode === OP_BINARY || f.opcode === OP_TEXT || f.opcode === OP_CONT)
      .map((f) => f.payload.toString('latin1'))
      .join('');
  }

  /** The close frame the server sent, if any: its status and body. */
  get closeFrame(): { code: number; reason: string } | null {
    const f = this.frames.find((x) => x.opcode === OP_CLOSE);
    if (f === undefined) return null;
    return { code: f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1005, reason: f.payload.subarray(2).toString() };
  }

  async waitFor(pattern: RegExp, timeoutMs = 5_000): Promise<RegExpMatchArray> {
    await this.until(() => pattern.test(this.text), String(pattern), timeoutMs);
    return this.text.match(pattern)!;
  }

  async waitFrame(opcode: number, timeoutMs = 5_000): Promise<Frame> {
    await this.until(() => this.frames.some((f) => f.opcode === opcode), `opcode ${opcode}`, timeoutMs);
    return this.frames.find((f) => f.opcode === opcode)!;
  }

  async waitClosed(timeoutMs = 5_000): Promise<void> {
    await this.until(() => this.closedFlag, 'the socket to close', timeoutMs);
  }

  close(): void {
    this.socket.destroy();
  }

  private async until(done: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.response?.raw ?? '')} frames ${JSON.stringify(this.frames.map((f) => [f.opcode, f.payload.toString('latin1')]))}`);
      if (this.closedFlag && !done()) throw new Error(`closed before ${what}; frames ${JSON.stringify(this.frames.map((f) => [f.opcode, f.payload.toString('latin1')]))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private parse(): void {
    if (!this.handshakeDone) {
      if (!this.parseResponse(false)) return;
    }
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      let len = b[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        off = 10;
      }
      if (b[1]! & 0x80) off += 4; // servers never mask; tolerated
      if (b.length < off + len) return;
      const rsv1 = (b[0]! & 0x40) !== 0;
      let payload = Buffer.from(b.subarray(off, off + len));
      // permessage-deflate without context takeover: each compressed message inflates on its own
      if (rsv1) payload = inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
      this.frames.push({ fin: (b[0]! & 0x80) !== 0, rsv1, opcode: b[0]! & 0x0f, payload });
      this.buf = b.subarray(off + len);
    }
  }

  /** true once a 101 head is parsed (frames follow); a refusal is parsed with its body. */
  private parseResponse(atClose: boolean): boolean {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return false;
    const head = this.buf.subarray(0, end).toString('latin1');
    const lines = head.split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    const rest = this.buf.subarray(end + 4);
    if (status === 101) {
      this.response = { status, headers, body: '', raw: head };
      this.handshakeDone = true;
      this.buf = rest;
      return true;
    }
    const want = Number(headers['content-length'] ?? -1);
    if (want >= 0 && rest.length < want && !atClose) return false;
    this.response = { status, headers, body: rest.toString('latin1', 0, want >= 0 ? want : rest.length), raw: head };
    this.buf = Buffer.alloc(0);
    return false;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
