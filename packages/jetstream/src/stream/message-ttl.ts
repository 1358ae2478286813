// The per-message TTL header (ADR-43), as nats-server 2.14 reads it (getMessageTTL / parseMessageTTL,
// stream.go): `Nats-TTL` holds a Go duration of at least 1s (`1m30s`, `1.5s` counts 1s), a plain number of
// seconds, or `never` (any case), which keeps the message even past max_age. The value is whole seconds;
// anything else is 10165 invalid per-message TTL. The header is found as nats-server's getHeader does: exact
// key case, the first occurrence, leading spaces skipped.
import type { MessageTtlReader } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';

export const TTL_HEADER = 'Nats-TTL';

/** A parsed Nats-TTL: seconds (> 0), 0 for none, -1 for never; 'invalid' for a value 2.14 refuses. */
export type MessageTtl = number | 'invalid';

const NS_PER_S = 1_000_000_000n;
const MAX_GO_DURATION_NS = (1n << 63n) - 1n;

const GO_UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5
  'μs': 1_000n, // U+03BC
  ms: 1_000_000n,
  s: NS_PER_S,
  m: 60n * NS_PER_S,
  h: 3600n * NS_PER_S,
};

/** Go's time.ParseDuration: nanoseconds, or null where Go returns an error. */
export function parseGoDurationNs(text: string): bigint | null {
  let s = text;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return null;
  let total = 0n;
  const re = /^([0-9]*)(?:\.([0-9]*))?([^0-9.]*)/;
  while (s !== '') {
    const m = re.exec(s);
    if (m === null) return null;
    const [all, whole = '', frac] = m;
    const unitText = m[3] ?? '';
    if (whole === '' && (frac === undefined || frac === '')) return null;
    if (unitText === '') return null;
    const unit = GO_UNITS[unitText];
    if (unit === undefined) return null;
    let v = BigInt(whole === '' ? '0' : whole) * unit;
    if (frac !== undefined && frac !== '') {
      // Go keeps ~19 fraction digits and rounds down.
      const digits = frac.slice(0, 18);
      v += (BigInt(digits) * unit) / 10n ** BigInt(digits.length);
    }
    total += v;
    if (total > MAX_GO_DURATION_NS + (neg ? 1n : 0n)) return null;
    s = s.slice(all.length);
  }
  return neg ? -total : total;
}

/** nats-server's parseMessageTTL. */
export function parseMessageTtl(value: string): MessageTtl {
  if (value.toLowerCase() === 'never') return -1;
  const ns = parseGoDurationNs(value);
  if (ns !== null) return ns < NS_PER_S ? 'invalid' : Number(ns / NS_PER_S);
  // Go's parseInt64: decimal digits only.
  if (value === '' || !/^[0-9]+$/.test(value)) return 'invalid';
  return Number(value);
}

/**
 * The PubAck error for a publish's Nats-TTL value (checkMsgHeadersPreClusteredProposal, used for every
 * publish here): any TTL or invalid value without allow_msg_ttl is 10166, an invalid one with it 10165.
 * Digits making 0 (`00`) are no TTL at all; a bare `0` is a Go duration below 1s, invalid.
 */
export function messageTtlHeaderError(value: string | undefined, allowMsgTtl: boolean): ApiError | null {
  if (!value) return null;
  const ttl = parseMessageTtl(value);
  if (ttl === 0) return null;
  if (!allowMsgTtl) return JsErrors.messageTtlDisabled();
  return ttl === 'invalid' ? JsErrors.messageTtlInvalid() : null;
}

const TTL_KEY_BYTES = Buffer.from(`${TTL_HEADER}:`);

/** The raw Nats-TTL value of a header block (nats-server's getHeader), or undefined when absent. */
export function ttlHeaderValue(header: Uint8Array): string | undefined {
  if (header.length === 0) return undefined;
  const buf = Buffer.isBuffer(header) ? header : Buffer.from(header.buffer, header.byteOffset, header.byteLength);
  let from = 0;
  for (;;) {
    const at = buf.indexOf(TTL_KEY_BYTES, from);
    if (at < 0) return undefined;
    // A key starts a line.
    if (at >= 2 && buf[at - 2] === 0x0d && buf[at - 1] === 0x0a) {
      let i = at + TTL_KEY_BYTES.length;
      while (i < buf.length && buf[i] === 0x20) i++;
      let end = i;
      while (end < buf.length && !(buf[end] === 0x0d && buf[end + 1] === 0x0a)) end++;
      return buf.toString('utf8', i, end);
    }
    from = at + 1;
  }
}

/** The message's TTL from its header block: seconds, 0 none, -1 never, 'invalid'. */
export function messageTtlOf(header: Uint8Array | null): MessageTtl {
  if (header === null) return 0;
  const v = ttlHeaderValue(header);
  return v === undefined || v === '' ? 0 : parseMessageTtl(v);
}

/** For the store (StoreCoreOptions.messageTtl): ns, 0n none or invalid, negative for never. */
export const messageTtlNs: MessageTtlReader = (header) => {
  const ttl = messageTtlOf(header);
  if (ttl === 'invalid' || ttl === 0) return 0n;
  return ttl < 0 ? -1n : BigInt(ttl) * NS_PER_S;
};

/**
 * With subject delete markers a message's TTL is raised to the marker TTL (unless max_msgs_per_subject is 1),
 * so no marker is missed (processJetStreamMsg): the header then carries the seconds, moved to the end as
 * nats-server's removeHeaderIfPresent + genHeader leave it. Null when the header stays as it is.
 */
export function raiseTtlHeader(header: Buffer, ttlSeconds: number, markerTtlNs: number, maxMsgsPerSubject: number): Buffer | null {
  if (ttlSeconds <= 0 || markerTtlNs <= 0 || maxMsgsPerSubject === 1) return null;
  const minSeconds = Math.floor(markerTtlNs / 1e9);
  if (ttlSeconds >= minSeconds) return null;
  const text = header.toString('latin1');
  const lines = text.split('\r\n');
  const kept = lines.filter((line, i) => i === 0 || (line !== '' && !line.startsWith(`${TTL_HEADER}:`)));
  return Buffer.from(`${kept.join('\r\n')}\r\n${TTL_HEADER}: ${minSeconds}\r\n\r\n`, 'latin1');
}
