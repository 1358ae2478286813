// The headers that start a message trace (ADR-41, nats-server's msgtrace.go), and the one check an untraced
// message pays: is there a `Nats-Trace-Dest` line in its header block.
export const TRACE_DEST = 'Nats-Trace-Dest';
export const TRACE_ONLY = 'Nats-Trace-Only';
export const TRACE_HOP = 'Nats-Trace-Hop';
/** A pre-2.11 header: nats-server turns tracing off for a message that carries it. */
export const TRACE_ORIGIN_ACCOUNT = 'Nats-Trace-Origin-Account';
/** The value nats-server writes into Nats-Trace-Dest to switch tracing off downstream (not a valid subject). */
export const TRACE_DEST_DISABLED = 'trace disabled';

const STATUS_LINE = Buffer.from('NATS/1.0\r\n');
const DEST_KEY = Buffer.from(`${TRACE_DEST}:`);
const N = DEST_KEY[0]!;
const LF = 0x0a;

/**
 * true when a line of the header block (the first `headerBytes` bytes of `message`) starts with
 * `Nats-Trace-Dest:` (the key is matched exactly, as nats-server does). It walks line starts only.
 */
export function carriesTraceDest(message: Buffer, headerBytes: number): boolean {
  let at = message.indexOf(LF);
  while (at >= 0 && at + DEST_KEY.length < headerBytes) {
    const line = at + 1;
    if (message[line] === N && message.compare(DEST_KEY, 0, DEST_KEY.length, line, line + DEST_KEY.length) === 0) return true;
    at = message.indexOf(LF, line);
  }
  return false;
}

/** The header block as nats-server's trace request shows it: names in their case, values in order. */
export type TraceHeaderMap = Record<string, string[]>;

/**
 * The headers of a block, read as nats-server's genHeaderMapIfTraceHeadersPresent reads them: after the
 * `NATS/1.0` line, `key: value` lines with blanks around the value trimmed; lines with an empty key or value
 * are left out. null when the block does not start with the plain status line.
 */
export function traceHeaderMap(header: Buffer): TraceHeaderMap | null {
  if (header.length < STATUS_LINE.length || header.compare(STATUS_LINE, 0, STATUS_LINE.length, 0, STATUS_LINE.length) !== 0) return null;
  const text = header.toString('latin1', STATUS_LINE.length);
  const map: TraceHeaderMap = {};
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const key = text.slice(i, colon);
    let v = colon + 1;
    while (v < text.length && (text[v] === ' ' || text[v] === '\t')) v++;
    const nl = text.indexOf('\r\n', v);
    if (nl < 0) break;
    let end = nl;
    while (end > v && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
    const value = text.slice(v, end);
    if (key.length > 0 && value.length > 0) {
      const name = Buffer.from(key, 'latin1').toString('utf8');
      (map[name] ??= []).push(Buffer.from(value, 'latin1').toString('utf8'));
    }
    i = nl + 2;
  }
  return map;
}

/** nats-server's reading of Nats-Trace-Only: 1, true or on, in any case. */
export function isTraceOnly(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.toLowerCase();
  return v === '1' || v === 'true' || v === 'on';
}

/**
 * The header block with `key`'s first line set to `value` (added at the end when absent), as nats-server's
 * setHeader: how a stored copy gets Nats-Trace-Dest switched off and a routed one its Nats-Trace-Hop.
 */
export function withHeader(header: Buffer, key: string, value: string): Buffer {
  const prefix = Buffer.from(`${key}:`);
  const line = Buffer.from(`${key}: ${value}`);
  let at = header.indexOf(LF);
  while (at >= 0 && at + prefix.length < header.length) {
    const start = at + 1;
    if (header.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0) {
      const end = header.indexOf('\r\n', start);
      if (end >= 0) return Buffer.concat([header.subarray(0, start), line, header.subarray(end)]);
    }
    at = header.indexOf(LF, start);
  }
  // before the blank line that ends the block
  const end = header.length - 2;
  return Buffer.concat([header.subarray(0, end), line, Buffer.from('\r\n'), header.subarray(end)]);
}
