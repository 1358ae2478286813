// Status-only header blocks a consumer sends (§12, §13): built as bytes, no body follows.
// Checked against every status line of 2.14.5's consumer.go: all are here (and the 400 / 409 limit texts are
// built in consumer.ts and priority-groups.ts) except `408 Interest Expired`, which 2.14 sends only for a pull
// whose interest arrived through a gateway (wr.interest != wr.reply); Flotilla has no gateways.

const enc = (text: string): Buffer => Buffer.from(text, 'latin1');

export const NO_MESSAGES = enc('NATS/1.0 404 No Messages\r\n\r\n');
export const REQUESTS_PENDING = enc('NATS/1.0 408 Requests Pending\r\n\r\n');
export const EXCEEDED_MAX_WAITING = enc('NATS/1.0 409 Exceeded MaxWaiting\r\n\r\n');
export const CONSUMER_IS_PUSH = enc('NATS/1.0 409 Consumer is push based\r\n\r\n');
export const CONSUMER_DELETED = enc('NATS/1.0 409 Consumer Deleted\r\n\r\n');
/** Cluster: the stream (and so consumer) leader moved; the client pulls again (nats.js consume() does). */
export const LEADERSHIP_CHANGE = enc('NATS/1.0 409 Leadership Change\r\n\r\n');
/** A pull carrying a Nats-Required-Api-Level above the server's (2.14). */
export const REQUIRED_API_LEVEL = enc('NATS/1.0 412 Required Api Level\r\n\r\n');
export const FLOW_CONTROL_REQUEST = enc('NATS/1.0 100 FlowControl Request\r\n\r\n');

function withPending(status: string, msgs: number, bytes: number): Buffer {
  return enc(`NATS/1.0 ${status}\r\nNats-Pending-Messages: ${msgs}\r\nNats-Pending-Bytes: ${bytes}\r\n\r\n`);
}
export const requestTimeout = (msgs: number, bytes: number) => withPending('408 Request Timeout', msgs, bytes);
export const maxBytesExceeded = (msgs: number, bytes: number) => withPending('409 Message Size Exceeds MaxBytes', msgs, bytes);
export const batchCompleted = (bytes: number) => withPending('409 Batch Completed', 0, bytes);
/** Pinned client: the request carried a pin id that is not (or no longer) the consumer's. */
export const wrongPinId = (msgs: number, bytes: number) => withPending('423 Nats-Wrong-Pin-Id', msgs, bytes);
export const status = (code: number, text: string) => enc(`NATS/1.0 ${code} ${text}\r\n\r\n`);

export function idleHeartbeat(lastConsumerSeq: number, lastStreamSeq: number, stalledFc?: string): Buffer {
  const stalled = stalledFc ? `Nats-Consumer-Stalled: ${stalledFc}\r\n` : '';
  return enc(
    `NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: ${lastConsumerSeq}\r\nNats-Last-Stream: ${lastStreamSeq}\r\n${stalled}\r\n`,
  );
}

/** Stored headers plus `Nats-Msg-Size` for headers_only delivery. */
export function headersOnlyBlock(stored: Uint8Array, bodyLen: number): Buffer {
  const line = enc(`Nats-Msg-Size: ${bodyLen}\r\n\r\n`);
  if (stored.length < 12) return Buffer.concat([enc('NATS/1.0\r\n'), line]);
  // Drop the stored block's final blank line, then append ours.
  return Buffer.concat([stored.subarray(0, stored.length - 2), line]);
}

/** A header block (possibly empty) with `name: value` added, as nats-server's genHeader. */
export function withHeader(stored: Uint8Array | null, name: string, value: string): Buffer {
  const line = enc(`${name}: ${value}\r\n\r\n`);
  if (stored === null || stored.length < 12) return Buffer.concat([enc('NATS/1.0\r\n'), line]);
  return Buffer.concat([stored.subarray(0, stored.length - 2), line]);
}
