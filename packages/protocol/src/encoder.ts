// Server → client encoders. Constant ops are preallocated; MSG/HMSG frames are written byte by byte by
// the server's OutboundBuffer (a cached prefix per subscription), so no string is built per message.
export const OK_BYTES = Buffer.from('+OK\r\n');
export const PING_BYTES = Buffer.from('PING\r\n');
export const PONG_BYTES = Buffer.from('PONG\r\n');

/** `INFO {...} \r\n` — nats-server puts a space before the CRLF; clients accept either. */
export function encodeInfo(info: object): Buffer {
  return Buffer.from(`INFO ${JSON.stringify(info)} \r\n`);
}

/** `-ERR '<text>'\r\n` */
export function encodeErr(text: string): Buffer {
  return Buffer.from(`-ERR '${text}'\r\n`);
}
