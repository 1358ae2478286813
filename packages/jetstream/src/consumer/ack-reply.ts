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
