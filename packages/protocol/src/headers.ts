// The NATS header block: `NATS/1.0[ <code>[ <description>]]\r\n(Key: value\r\n)*\r\n`.
// Keys keep their case and may repeat, because clients look headers up case-sensitively.

export const HEADER_VERSION = 'NATS/1.0';

export interface NatsHeaders {
  code?: number;
  description?: string;
  /** In wire order; a key may appear more than once. */
  entries: Array<[key: string, value: string]>;
}

export class HeaderParseError extends Error {}

export function encodeHeaders(headers: NatsHeaders): Buffer {
  let text = HEADER_VERSION;
  if (headers.code !== undefined) {
    text += ` ${headers.code}`;
    if (headers.description) text += ` ${headers.description}`;
  }
  text += '\r\n';
  for (const [key, value] of headers.entries) {
    if (!isValidHeaderKey(key)) throw new HeaderParseError(`invalid header key '${key}'`);
    if (/[\r\n]/.test(value)) throw new HeaderParseError(`header value for '${key}' contains CR or LF`);
    text += `${key}: ${value}\r\n`;
  }
  return Buffer.from(text + '\r\n');
}

/** A status-only block, e.g. 503 for no responders or `100 Idle Heartbeat`. */
export function encodeStatusHeaders(code: number, description?: string, entries: NatsHeaders['entries'] = []): Buffer {
  return encodeHeaders(description === undefined ? { code, entries } : { code, description, entries });
}

export function decodeHeaders(block: Uint8Array): NatsHeaders {
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('utf8');
  const lines = text.split('\r\n');
  const first = lines[0] ?? '';
  if (!first.startsWith(HEADER_VERSION)) throw new HeaderParseError('header block does not start with NATS/1.0');
  const result: NatsHeaders = { entries: [] };
  const status = first.slice(HEADER_VERSION.length).trim();
  if (status.length > 0) {
    const m = /^(\d{3})(?:\s+(.*))?$/.exec(status);
    if (!m) throw new HeaderParseError(`bad status line '${first}'`);
    result.code = Number(m[1]);
    if (m[2]) result.description = m[2].trim();
  }
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HeaderParseError(`bad header line '${line}'`);
    result.entries.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return result;
}

/** First value of `key` (exact case), or undefined. */
export function headerValue(headers: NatsHeaders, key: string): string | undefined {
  for (const [k, v] of headers.entries) if (k === key) return v;
  return undefined;
}

function isValidHeaderKey(key: string): boolean {
  if (key.length === 0) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c <= 32 || c >= 127 || c === 58) return false; // printable ASCII, no ':'
  }
  return true;
}
