// Incremental parser for the client → server ops of the NATS protocol (CONNECT, PUB, HPUB, SUB, UNSUB,
// PING, PONG). Hand-rolled because it is the broker's hottest path: control lines are located with the
// native `indexOf`, payloads that arrive whole are handed out as zero-copy views of the read chunk, and a
// payload split across reads is copied exactly once into a buffer of its final size.
//
// Every token is checked here, so no later stage sees a subject it cannot hold: a bare CR separates SUB and
// UNSUB arguments (as nats-server's splitArg does); a PUB/HPUB subject or reply holding one, and a subject,
// queue or reply that is not valid UTF-8 (a JS string would silently turn it into U+FFFD), is reported as
// an invalid subject.
import { isUtf8 } from 'node:buffer';

/** Why the parser stopped; the connection maps each kind to nats-server's reply (see errors.ts). */
export type ParseErrorKind =
  | 'unknown-op' // -ERR 'Unknown Protocol Operation', close
  | 'control-line' // -ERR 'maximum control line exceeded', close
  | 'max-payload' // -ERR 'Maximum Payload Violation', close
  | 'connect-required' // an op before CONNECT when auth is required: -ERR 'Authorization Violation', close
  | 'bad-args'; // malformed arguments: nats-server closes without an -ERR

/** The op of `onInvalidSubject`. */
export type SubjectOp = 'PUB' | 'HPUB' | 'SUB';

export interface ClientOpHandler {
  onConnect(json: string): void;
  /** `payload` may be a view into the read chunk: consume it before returning or copy it. */
  onPub(subject: string, reply: string | null, payload: Buffer): void;
  /** `message` holds the header block (`headerBytes` long) followed by the body. */
  onHpub(subject: string, reply: string | null, headerBytes: number, message: Buffer): void;
  onSub(subject: string, queue: string | null, sid: string): void;
  onUnsub(sid: string, maxMsgs: number | null): void;
  onPing(): void;
  onPong(): void;
  /**
   * A SUB whose subject or queue, or a PUB/HPUB whose subject or reply, holds a bare CR or bytes that are
   * not UTF-8. A PUB's payload has been consumed; the framing is intact and parsing goes on.
   */
  onInvalidSubject(op: SubjectOp): void;
  onParseError(kind: ParseErrorKind, detail: string): void;
}

export interface ClientParserOptions {
  /** Bound on a control line's arguments, CONNECT's JSON included (nats-server's max_control_line). */
  maxControlLineBytes: number;
  maxPayloadBytes: number;
  /** Auth is required: any op before the first CONNECT fails at its name, before its line is buffered. */
  connectFirst?: boolean;
}

const ST_OP = 0; // reading a control line
const ST_PAYLOAD = 1; // reading a PUB/HPUB payload
const ST_PAYLOAD_CR = 2; // expecting the \r after the payload
const ST_PAYLOAD_LF = 3; // expecting the \n after the payload
const ST_FAILED = 4; // an error was reported; everything after is ignored

const CR = 13;
const LF = 10;
const SPACE = 32;
const TAB = 9;

// Op names, upper case, in the order they are tried for a prefix match on a partial line.
const OPS = ['PUB', 'HPUB', 'SUB', 'UNSUB', 'PING', 'PONG', 'CONNECT'] as const;

// A control line may be this much longer than its arguments (op name, blanks, CR). Bounding the whole line,
// not only the arguments, also bounds a line padded with blanks, and lets a partial line be refused before
// it is buffered.
const LINE_OVERHEAD_BYTES = 64;
const MAX_ARGS = 5;

/** Subjects up to this long reuse one scratch buffer for the repeated-subject check. */
const LAST_SUBJECT_SCRATCH_BYTES = 256;

export class ClientParser {
  private state = ST_OP;
  // A control line split across reads is gathered here.
  private lineBuf: Buffer = Buffer.allocUnsafe(0);
  private lineLen = 0;
  // The PUB/HPUB whose payload is being read.
  private subject = '';
  private reply: string | null = null;
  private headerBytes = -1; // -1 for PUB
  private payload: Buffer | null = null;
  private payloadFilled = 0;
  private payloadSize = 0;
  /** The PUB/HPUB being read has a subject or reply no subscriber can hold: its payload is skipped. */
  private invalidPub = false;
  /** set by splitArgs: a bare CR inside a PUB/HPUB argument */
  private sawCr = false;
  /** set by splitArgs: every argument byte is ASCII, so every argument is valid UTF-8 */
  private argsAscii = true;
  private expectConnect: boolean;
  // Argument positions of the current control line (filled by splitArgs).
  private readonly argStart = new Int32Array(MAX_ARGS);
  private readonly argEnd = new Int32Array(MAX_ARGS);
  // The last PUB subject, as bytes and as the string handed out: publishers usually repeat subjects, and
  // reusing the same string skips a decode and lets the Sublist cache reuse the string's hash.
  /** The previous subject's bytes (first lastSubjectLength of them), reused across subjects that fit. */
  private lastSubjectBytes: Buffer = Buffer.alloc(LAST_SUBJECT_SCRATCH_BYTES);
  private lastSubjectLength = -1;
  private lastSubject = '';
  private lastSubjectUtf8 = true;

  constructor(
    private readonly handler: ClientOpHandler,
    private readonly opts: ClientParserOptions,
  ) {
    this.expectConnect = opts.connectFirst === true;
  }

  /** Lowers (or raises) the payload limit for what is parsed from now on: an account's max_payload after CONNECT. */
  setMaxPayloadBytes(bytes: number): void {
    this.opts.maxPayloadBytes = bytes;
  }

  /** A config reload's max_control_line, for what is parsed from now on. */
  setMaxControlLineBytes(bytes: number): void {
    this.opts.maxControlLineBytes = bytes;
  }

  get failed(): boolean {
    return this.state === ST_FAILED;
  }

  parse(chunk: Buffer): void {
    const len = chunk.length;
    let pos = 0;
    while (pos < len) {
      switch (this.state) {
        case ST_OP: {
          const nl = chunk.indexOf(LF, pos);
          if (nl === -1) {
            this.appendPartialLine(chunk, pos, len);
            return;
          }
          if (this.lineLen > 0) {
            if (this.lineLen + nl - pos > this.opts.maxControlLineBytes + LINE_OVERHEAD_BYTES + 1) {
              return this.fail('control-line', `control line of ${this.lineLen + nl - pos} bytes`);
            }
            this.appendLine(chunk, pos, nl);
            const lineLen = this.lineLen;
            this.lineLen = 0;
            pos = nl + 1;
            this.processLine(this.lineBuf, 0, lineLen);
          } else {
            const start = pos;
            pos = nl + 1;
            this.processLine(chunk, start, nl);
          }
          break;
        }
        case ST_PAYLOAD: {
          const need = this.payloadSize - this.payloadFilled;
          if (this.payload === null) {
            // Fast path: the whole payload and its CRLF are in this chunk.
            if (len - pos >= need + 2 && chunk[pos + need] === CR && chunk[pos + need + 1] === LF) {
              const view = chunk.subarray(pos, pos + need);
              pos += need + 2;
              this.state = ST_OP;
              this.deliver(view);
              break;
            }
            this.payload = Buffer.allocUnsafe(this.payloadSize);
          }
          const take = Math.min(need, len - pos);
          chunk.copy(this.payload, this.payloadFilled, pos, pos + take);
          this.payloadFilled += take;
          pos += take;
          if (this.payloadFilled === this.payloadSize) this.state = ST_PAYLOAD_CR;
          break;
        }
        case ST_PAYLOAD_CR:
          if (chunk[pos] !== CR) return this.fail('unknown-op', 'payload not followed by CRLF');
          pos++;
          this.state = ST_PAYLOAD_LF;
          break;
        case ST_PAYLOAD_LF: {
          if (chunk[pos] !== LF) return this.fail('unknown-op', 'payload not followed by CRLF');
          pos++;
          this.state = ST_OP;
          const payload = this.payload ?? Buffer.alloc(0);
          this.payload = null;
          this.deliver(payload);
          break;
        }
        default:
          return; // ST_FAILED
      }
    }
  }

  private deliver(payload: Buffer): void {
    this.payloadFilled = 0;
    if (this.invalidPub) this.handler.onInvalidSubject(this.headerBytes < 0 ? 'PUB' : 'HPUB');
    else if (this.headerBytes < 0) this.handler.onPub(this.subject, this.reply, payload);
    else this.handler.onHpub(this.subject, this.reply, this.headerBytes, payload);
  }

  private fail(kind: ParseErrorKind, detail: string): void {
    this.state = ST_FAILED;
    this.lineLen = 0;
    this.payload = null;
    this.handler.onParseError(kind, detail);
  }

  private appendLine(src: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.lineLen + n > this.lineBuf.length) {
      const grown = Buffer.allocUnsafe(Math.max(256, (this.lineLen + n) * 2));
      this.lineBuf.copy(grown, 0, 0, this.lineLen);
      this.lineBuf = grown;
    }
    src.copy(this.lineBuf, this.lineLen, start, end);
    this.lineLen += n;
  }

  /** An unterminated control line: keep it, but fail early on a bad op or an oversized line. */
  private appendPartialLine(src: Buffer, start: number, end: number): void {
    // Refused before it is copied: an unterminated line never holds more than the limit.
    const total = this.lineLen + end - start;
    if (total > this.opts.maxControlLineBytes + LINE_OVERHEAD_BYTES + 1) {
      return this.fail('control-line', `control line of ${total} bytes`);
    }
    this.appendLine(src, start, end);
    const op = matchOpPrefix(this.lineBuf, this.lineLen);
    if (op === null) return this.fail('unknown-op', 'unknown operation');
    if (op !== 'CONNECT' && this.expectConnect) this.fail('connect-required', `${op} before CONNECT`);
  }

  private processLine(buf: Buffer, start: number, end: number): void {
    if (end > start && buf[end - 1] === CR) end--;
    // Op name: bytes up to the first space or tab.
    let opEnd = start;
    while (opEnd < end && buf[opEnd] !== SPACE && buf[opEnd] !== TAB) opEnd++;
    const op = identifyOp(buf, start, opEnd);
    if (op === null) return this.fail('unknown-op', 'unknown operation');
    if (this.expectConnect) {
      if (op !== 'CONNECT') return this.fail('connect-required', `${op} before CONNECT`);
      this.expectConnect = false;
    }
    let argStart = opEnd;
    while (argStart < end && (buf[argStart] === SPACE || buf[argStart] === TAB)) argStart++;
    const limit = this.opts.maxControlLineBytes;
    if (end - argStart > limit || end - start > limit + LINE_OVERHEAD_BYTES) {
      return this.fail('control-line', `control line of ${end - start} bytes`);
    }
    switch (op) {
      case 'PUB':
        return this.processPub(buf, argStart, end, false);
      case 'HPUB':
        return this.processPub(buf, argStart, end, true);
      case 'SUB': {
        const n = this.splitArgs(buf, argStart, end, true);
        if (n < 2 || n > 3) return this.fail('bad-args', 'SUB needs a subject, an optional queue and a sid');
        // The sid is the client's own handle, echoed in MSG: any bytes do; subject and queue must be UTF-8.
        if (!this.argsUtf8(buf, n - 1)) return this.handler.onInvalidSubject('SUB');
        if (n === 2) return this.handler.onSub(this.arg(buf, 0), null, this.arg(buf, 1));
        return this.handler.onSub(this.arg(buf, 0), this.arg(buf, 1), this.arg(buf, 2));
      }
      case 'UNSUB': {
        const n = this.splitArgs(buf, argStart, end, true);
        if (n === 1) return this.handler.onUnsub(this.arg(buf, 0), null);
        if (n === 2) {
          // A max that is not a number unsubscribes at once, as in nats-server.
          const max = parseSizeBytes(buf, this.argStart[1]!, this.argEnd[1]!);
          return this.handler.onUnsub(this.arg(buf, 0), max < 0 ? null : max);
        }
        return this.fail('bad-args', 'UNSUB needs a sid and an optional max');
      }
      // nats-server reads PING/PONG up to the line end and ignores whatever follows the name.
      case 'PING':
        return this.handler.onPing();
      case 'PONG':
        return this.handler.onPong();
      case 'CONNECT':
        return this.handler.onConnect(buf.toString('utf8', argStart, end));
    }
  }

  private processPub(buf: Buffer, start: number, end: number, withHeaders: boolean): void {
    const n = this.splitArgs(buf, start, end, false);
    const sizes = withHeaders ? 2 : 1;
    if (n < 1 + sizes || n > 2 + sizes) {
      return this.fail('bad-args', `${withHeaders ? 'HPUB' : 'PUB'} has ${n} arguments`);
    }
    const total = parseSizeBytes(buf, this.argStart[n - 1]!, this.argEnd[n - 1]!);
    const hdr = withHeaders ? parseSizeBytes(buf, this.argStart[n - 2]!, this.argEnd[n - 2]!) : -1;
    if (total < 0 || (withHeaders && (hdr < 0 || hdr > total))) {
      return this.fail('bad-args', 'invalid size');
    }
    if (total > this.opts.maxPayloadBytes) {
      return this.fail('max-payload', `payload of ${total} bytes`);
    }
    // A CR in the subject or reply would end up inside a subscriber's MSG line: the message is dropped.
    // (nats-server forwards it.) A CR in a size makes it no number.
    let valid = !this.sawCr;
    this.subject = this.subjectArg(buf);
    if (!this.lastSubjectUtf8) valid = false;
    if (n === 2 + sizes) {
      this.reply = this.arg(buf, 1);
      if (valid && !this.argsAscii && !isUtf8(buf.subarray(this.argStart[1]!, this.argEnd[1]!))) valid = false;
    } else {
      this.reply = null;
    }
    this.invalidPub = !valid;
    this.headerBytes = hdr;
    this.payloadSize = total;
    this.payloadFilled = 0;
    this.payload = null;
    this.state = ST_PAYLOAD;
  }

  private arg(buf: Buffer, i: number): string {
    return buf.toString('utf8', this.argStart[i]!, this.argEnd[i]!);
  }

  /**
   * Argument 0 as a string, reusing the previous string when the bytes are the same. Compared from the end:
   * a stream of unique subjects with a shared prefix (JetStream acks, `$JS.ACK.<stream>.<consumer>.…<seq>…`)
   * differs in its last tokens, and a new subject is kept in the same scratch bytes, not a new Buffer.
   */
  private subjectArg(buf: Buffer): string {
    const s = this.argStart[0]!;
    const n = this.argEnd[0]! - s;
    const last = this.lastSubjectBytes;
    if (this.lastSubjectLength === n) {
      let i = n - 1;
      while (i >= 0 && buf[s + i] === last[i]) i--;
      if (i < 0) return this.lastSubject;
    }
    if (n <= last.length) buf.copy(last, 0, s, s + n);
    else this.lastSubjectBytes = Buffer.from(buf.subarray(s, s + n));
    this.lastSubjectLength = n;
    this.lastSubject = buf.toString('utf8', s, s + n);
    this.lastSubjectUtf8 = this.argsAscii || isUtf8(buf.subarray(s, s + n));
    return this.lastSubject;
  }

  /** Whether arguments 0..count-1 are valid UTF-8 (decoding would turn other bytes into U+FFFD). */
  private argsUtf8(buf: Buffer, count: number): boolean {
    if (this.argsAscii) return true;
    for (let i = 0; i < count; i++) {
      if (!isUtf8(buf.subarray(this.argStart[i]!, this.argEnd[i]!))) return false;
    }
    return true;
  }

  /**
   * Splits on runs of spaces and tabs into argStart/argEnd; returns the count, or MAX_ARGS + 1 when over.
   * A bare CR separates arguments too when `crSeparates` (nats-server's SUB/UNSUB); otherwise (its PUB/HPUB)
   * it stays inside its argument and sets sawCr. Sets argsAscii: a line of ASCII needs no UTF-8 check.
   */
  private splitArgs(buf: Buffer, start: number, end: number, crSeparates: boolean): number {
    let n = 0;
    let i = start;
    let sawCr = false;
    let bits = 0;
    while (i < end) {
      for (; i < end; i++) {
        const c = buf[i]!;
        if (c !== SPACE && c !== TAB && (c !== CR || !crSeparates)) break;
      }
      if (i >= end) break;
      const s = i;
      // One comparison per printable byte: the separators are all below '!'.
      for (; i < end; i++) {
        const c = buf[i]!;
        bits |= c;
        if (c <= SPACE) {
          if (c === SPACE || c === TAB) break;
          if (c === CR) {
            if (crSeparates) break;
            sawCr = true;
          }
        }
      }
      if (n === MAX_ARGS) return MAX_ARGS + 1;
      this.argStart[n] = s;
      this.argEnd[n] = i;
      n++;
    }
    this.sawCr = sawCr;
    this.argsAscii = bits < 0x80;
    return n;
  }
}

/** Non-negative decimal in buf[start, end); -1 when not a number or beyond 2^53. */
export function parseSizeBytes(buf: Buffer, start: number, end: number): number {
  const len = end - start;
  if (len === 0 || len > 15) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i]! - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function upper(b: number): number {
  return b >= 97 && b <= 122 ? b - 32 : b;
}

/** PING or PONG when the bytes from start begin with either name (nats-server ignores what follows it). */
function pingPong(buf: Buffer, start: number, end: number): 'PING' | 'PONG' | null {
  if (end - start < 4 || upper(buf[start]!) !== 0x50 || upper(buf[start + 2]!) !== 0x4e || upper(buf[start + 3]!) !== 0x47) return null;
  const second = upper(buf[start + 1]!);
  return second === 0x49 ? 'PING' : second === 0x4f ? 'PONG' : null;
}

function identifyOp(buf: Buffer, start: number, end: number): (typeof OPS)[number] | null {
  const n = end - start;
  for (const op of OPS) {
    if (op.length !== n) continue;
    let i = 0;
    while (i < n && upper(buf[start + i]!) === op.charCodeAt(i)) i++;
    if (i === n) return op;
  }
  return pingPong(buf, start, end);
}

/** For a partial line: the op it can still become, or null when no op starts this way. */
function matchOpPrefix(buf: Buffer, len: number): (typeof OPS)[number] | null {
  const pp = pingPong(buf, 0, len);
  if (pp !== null) return pp;
  let opLen = 0;
  while (opLen < len && buf[opLen] !== SPACE && buf[opLen] !== TAB && buf[opLen] !== CR) opLen++;
  const complete = opLen < len;
  for (const op of OPS) {
    if (complete ? op.length !== opLen : op.length < opLen) continue;
    let i = 0;
    while (i < opLen && upper(buf[i]!) === op.charCodeAt(i)) i++;
    if (i === opLen) return op;
  }
  return null;
}
