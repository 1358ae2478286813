// The `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>` reply subject (§10), v1 form.

export interface AckReplyTokens {
  deliveryCount: number;
  streamSeq: number;
  consumerSeq: number;
}

/** The constant part, `$JS.ACK.<stream>.<consumer>.`, built once per consumer. */
export function ackReplyPrefix(stream: string, consumer: string): string {
  return `$JS.ACK.${stream}.${consumer}.`;
}

export function formatAckReply(prefix: string, deliveryCount: number, sseq: number, dseq: number, tsNs: bigint, pending: number): string {
  return `${prefix}${deliveryCount}.${sseq}.${dseq}.${tsNs}.${pending}`;
}

/** Reads the five numeric tokens from the end (stream and consumer names never contain dots). */
export function parseAckReply(subject: string): AckReplyTokens | null {
  let end = subject.length;
  const nums: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dot = subject.lastIndexOf('.', end - 1);
    if (dot < 0) return null;
    nums.push(Number(subject.slice(dot + 1, end)));
    end = dot;
  }
  // nums: pending, ts, dseq, sseq, deliveryCount (reversed)
  const [, , dseq, sseq, dc] = nums as [number, number, number, number, number];
  if (!Number.isSafeInteger(dseq) || !Number.isSafeInteger(sseq) || !Number.isSafeInteger(dc)) return null;
  return { deliveryCount: dc, streamSeq: sseq, consumerSeq: dseq };
}

const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** Decimal digits that always fit a safe integer; longer tokens go through parseAckReply. */
const MAX_FAST_DIGITS = 15;

/**
 * parseAckReply for every ack: the tokens land in this object's fields, so no strings, arrays or result
 * objects are made. Tokens that are not plain short decimals (never the server's own) use parseAckReply,
 * so both accept exactly the same subjects.
 */
export class AckReplyReader implements AckReplyTokens {
  deliveryCount = 0;
  streamSeq = 0;
  consumerSeq = 0;

  /** False when `subject` is not an ack reply parseAckReply accepts. */
  read(subject: string): boolean {
    // From the end: pending and timestamp are skipped, then dseq, sseq and the delivery count are read.
    let end = subject.length;
    let dseq = 0;
    let sseq = 0;
    for (let token = 0; token < 5; token++) {
      let value = 0;
      let i = end - 1;
      for (; i >= 0; i--) {
        const c = subject.charCodeAt(i);
        if (c === DOT) break;
        if (token < 2) continue;
        if (c < DIGIT_0 || c > DIGIT_9 || end - i > MAX_FAST_DIGITS) return this.readSlowly(subject);
      }
      if (i < 0) return false;
      if (token >= 2) {
        let mul = 1;
        for (let j = end - 1; j > i; j--) {
          value += (subject.charCodeAt(j) - DIGIT_0) * mul;
          mul *= 10;
        }
      }
      if (token === 2) dseq = value;
      else if (token === 3) sseq = value;
      else if (token === 4) {
        this.deliveryCount = value;
        this.streamSeq = sseq;
        this.consumerSeq = dseq;
      }
      end = i;
    }
    return true;
  }

  private readSlowly(subject: string): boolean {
    const tokens = parseAckReply(subject);
    if (tokens === null) return false;
    this.deliveryCount = tokens.deliveryCount;
    this.streamSeq = tokens.streamSeq;
    this.consumerSeq = tokens.consumerSeq;
    return true;
  }
}
