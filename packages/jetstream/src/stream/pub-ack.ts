// PubAck bytes exactly as nats-server 2.9/2.10 writes them (note the literal spacing).
import type { ApiError } from '../api/api-error.js';

const CLOSE_BRACE = 0x7d;
const DIGIT_0 = 0x30;

export class PubAckEncoder {
  private readonly prefix: string;
  /** The prefix encoded once: an ack is these bytes, the sequence's digits and `}`. */
  private readonly prefixBytes: Buffer;
  private readonly streamJson: string;

  constructor(streamName: string, domain: string | undefined) {
    this.streamJson = JSON.stringify(streamName);
    this.prefix = domain ? `{"stream":${this.streamJson}, "domain":${JSON.stringify(domain)}, "seq":` : `{"stream":${this.streamJson}, "seq":`;
    this.prefixBytes = Buffer.from(this.prefix);
  }

  /** Written byte by byte: a template string per ack and its UTF-8 encoding cost several times more. */
  ack(seq: number): Buffer {
    let digits = 1;
    for (let v = seq; v >= 10; v = Math.floor(v / 10)) digits++; // at most 16 steps (seq < 2^53)
    const pre = this.prefixBytes;
    const out = Buffer.allocUnsafe(pre.length + digits + 1);
    out.set(pre, 0);
    let p = pre.length + digits;
    out[p] = CLOSE_BRACE;
    for (let v = seq; p > pre.length; v = Math.floor(v / 10)) out[--p] = DIGIT_0 + (v % 10);
    return out;
  }

  /** A counter stream's ack: the subject's new total as `val` (nats-server appends it after the sequence). */
  counter(seq: number, total: string): Buffer {
    return Buffer.from(`${this.prefix}${seq},"val":${JSON.stringify(total)}}`);
  }

  duplicate(seq: number): Buffer {
    return Buffer.from(`${this.prefix}${seq},"duplicate": true}`);
  }

  /** An atomic batch's commit (2.14 adds `batch` and `count`, the number of messages stored). */
  batch(seq: number, batchId: string, count: number): Buffer {
    return Buffer.from(`${this.prefix}${seq},"batch":${JSON.stringify(batchId)},"count":${count}}`);
  }

  /** A fast batch whose first message is a duplicate (2.14's literal spacing). */
  batchDuplicate(seq: number, batchId: string, count: number): Buffer {
    return Buffer.from(`${this.prefix}${seq},"duplicate": true,"batch":${JSON.stringify(batchId)},"count":${count}}`);
  }

  error(err: ApiError): Buffer {
    return Buffer.from(`{"error":${JSON.stringify(err.toJSON())},"stream":${this.streamJson},"seq":0}`);
  }
}
