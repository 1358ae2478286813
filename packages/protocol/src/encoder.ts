// Server → client encoders. Constant ops are preallocated; MSG/HMSG are written by OutboundBuffer.
export const OK_BYTES = Buffer.from('+OK\r\n');
export const PING_BYTES = Buffer.from('PING\r\n');
export const PONG_BYTES = Buffer.from('PONG\r\n');
export const CRLF_BYTES = Buffer.from('\r\n');

/** `INFO {...} \r\n` — nats-server puts a space before the CRLF; clients accept either. */
export function encodeInfo(info: object): Buffer {
  return Buffer.from(`INFO ${JSON.stringify(info)} \r\n`);
}

/** `-ERR '<text>'\r\n` */
export function encodeErr(text: string): Buffer {
  return Buffer.from(`-ERR '${text}'\r\n`);
}

/** The control line of a MSG (no headers) or HMSG (headerBytes >= 0). */
export function msgControlLine(
  subject: string,
  sid: string,
  reply: string | null,
  headerBytes: number,
  totalBytes: number,
): string {
  if (headerBytes < 0) {
    return reply === null
      ? `MSG ${subject} ${sid} ${totalBytes}\r\n`
      : `MSG ${subject} ${sid} ${reply} ${totalBytes}\r\n`;
  }
  return reply === null
    ? `HMSG ${subject} ${sid} ${headerBytes} ${totalBytes}\r\n`
    : `HMSG ${subject} ${sid} ${reply} ${headerBytes} ${totalBytes}\r\n`;
}
