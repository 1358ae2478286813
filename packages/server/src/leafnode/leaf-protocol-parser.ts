// The leafnode protocol as it arrives on a leaf link (nats-server's parser in LEAF mode): INFO, CONNECT,
// PING, PONG, +OK, -ERR, LS+ / LS- (interest), LMSG / HMSG (a message, optionally for queue groups).
// Incremental: feed() takes any chunking of the stream. A malformed operation throws LeafProtocolError with
// the -ERR text nats-server sends before closing the link.

export const MAX_CONTROL_LINE_BYTES = 4096;

export type LeafOp =
  | { op: 'INFO'; json: string }
  | { op: 'CONNECT'; json: string }
  | { op: 'PING' }
  | { op: 'PONG' }
  | { op: 'OK' }
  | { op: 'ERR'; text: string }
  | { op: 'LS+'; subject: string; queue: string | null; weight: number }
  | { op: 'LS-'; subject: string; queue: string | null }
  | {
      op: 'LMSG';
      subject: string;
      reply: string | null;
      /** queue groups the sender picked this side for (empty: plain interest) */
      queues: string[];
      /** bytes of header block at the start of `message` (-1: none) */
      headerBytes: number;
      message: Buffer;
    };

export class LeafProtocolError extends Error {
  /** the operations before the bad one in the same feed, to be handled before the link closes */
  parsed: LeafOp[] = [];
  constructor(readonly errText: string) {
    super(errText);
  }
}

const ERR_UNKNOWN = 'Unknown Protocol Operation';
const ERR_CONTROL_LINE = 'Maximum Control Line Exceeded';

interface PendingMsg {
  subject: string;
  reply: string | null;
  queues: string[];
  headerBytes: number;
  size: number;
}

function parseSize(s: string | undefined): number {
  if (s === undefined || s.length === 0 || s.length > 10 || !/^\d+$/.test(s)) return -1;
  return Number(s);
}

export class LeafProtocolParser {
  private buf: Buffer = Buffer.alloc(0);
  private pending: PendingMsg | null = null;

  constructor(private readonly maxPayloadBytes: number) {}

  /** Appends `chunk` and returns every complete operation; throws LeafProtocolError on bad input. */
  feed(chunk: Buffer): LeafOp[] {
    const ops: LeafOp[] = [];
    try {
      this.feedInto(chunk, ops);
    } catch (err) {
      if (err instanceof LeafProtocolError) err.parsed = ops;
      throw err;
    }
    return ops;
  }

  private feedInto(chunk: Buffer, ops: LeafOp[]): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let pos = 0;
    const buf = this.buf;
    for (;;) {
      if (this.pending !== null) {
        const p = this.pending;
        if (buf.length - pos < p.size + 2) break;
        if (buf[pos + p.size] !== 0x0d || buf[pos + p.size + 1] !== 0x0a) throw new LeafProtocolError(ERR_UNKNOWN);
        const message = Buffer.from(buf.subarray(pos, pos + p.size));
        ops.push({ op: 'LMSG', subject: p.subject, reply: p.reply, queues: p.queues, headerBytes: p.headerBytes, message });
        pos += p.size + 2;
        this.pending = null;
        continue;
      }
      const nl = buf.indexOf(0x0a, pos);
      if (nl < 0) {
        if (buf.length - pos > MAX_CONTROL_LINE_BYTES) throw new LeafProtocolError(ERR_CONTROL_LINE);
        break;
      }
      if (nl - pos > MAX_CONTROL_LINE_BYTES) throw new LeafProtocolError(ERR_CONTROL_LINE);
      const end = nl > pos && buf[nl - 1] === 0x0d ? nl - 1 : nl;
      const line = buf.toString('latin1', pos, end);
      pos = nl + 1;
      const op = this.parseLine(line);
      if (op !== null) ops.push(op);
    }
    this.buf = pos >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(pos));
  }

  private parseLine(line: string): LeafOp | null {
    if (line.length === 0) return null;
    const sp = line.search(/[ \t]/);
    const verb = (sp < 0 ? line : line.slice(0, sp)).toUpperCase();
    const rest = sp < 0 ? '' : line.slice(sp + 1).trim();
    switch (verb) {
      case 'PING':
        return { op: 'PING' };
      case 'PONG':
        return { op: 'PONG' };
      case '+OK':
        return { op: 'OK' };
      case '-ERR':
        return { op: 'ERR', text: rest.replace(/^'(.*)'$/, '$1') };
      case 'INFO':
        return { op: 'INFO', json: Buffer.from(rest, 'latin1').toString('utf8') };
      case 'CONNECT':
        return { op: 'CONNECT', json: Buffer.from(rest, 'latin1').toString('utf8') };
      case 'LS+': {
        const a = rest.split(/[ \t]+/).filter((x) => x.length > 0);
        if (a.length === 1) return { op: 'LS+', subject: a[0]!, queue: null, weight: 0 };
        if (a.length === 3) {
          // nats-server takes a weight that is no number as 1 (processLeafSub's delta)
          const w = parseSize(a[2]);
          return { op: 'LS+', subject: a[0]!, queue: a[1]!, weight: Math.max(1, w) };
        }
        throw new LeafProtocolError(ERR_UNKNOWN);
      }
      case 'LS-': {
        const a = rest.split(/[ \t]+/).filter((x) => x.length > 0);
        if (a.length === 1 || a.length === 2) return { op: 'LS-', subject: a[0]!, queue: a[1] ?? null };
        throw new LeafProtocolError(ERR_UNKNOWN);
      }
      case 'LMSG':
      case 'HMSG':
        this.pending = this.msgArgs(rest, verb === 'HMSG');
        return null;
      default:
        throw new LeafProtocolError(ERR_UNKNOWN);
    }
  }

  /** nats-server's processLeafMsgArgs / processLeafHeaderMsgArgs. */
  private msgArgs(rest: string, headers: boolean): PendingMsg {
    const a = rest.split(/[ \t]+/).filter((x) => x.length > 0);
    const fixed = headers ? 3 : 2; // subject [hdr] size
    if (a.length < fixed) throw new LeafProtocolError(ERR_UNKNOWN);
    let reply: string | null = null;
    let queues: string[] = [];
    if (a.length === fixed + 1) reply = a[1]!;
    else if (a.length > fixed + 1) {
      const ind = a[1]!;
      if (ind === '+') {
        reply = a[2]!;
        queues = a.slice(3, a.length - (fixed - 1));
      } else if (ind === '|') queues = a.slice(2, a.length - (fixed - 1));
      else throw new LeafProtocolError(ERR_UNKNOWN);
    }
    const size = parseSize(a[a.length - 1]);
    const headerBytes = headers ? parseSize(a[a.length - 2]) : -1;
    if (size < 0 || (headers && (headerBytes < 0 || headerBytes > size))) throw new LeafProtocolError(ERR_UNKNOWN);
    if (size > this.maxPayloadBytes) throw new LeafProtocolError('Maximum Payload Violation');
    return { subject: a[0]!, reply, queues, headerBytes, size };
  }
}
