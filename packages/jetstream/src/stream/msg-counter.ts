// Counter streams (ADR-49, nats-server 2.14 stream.go / jetstream_batching.go): on a stream with
// allow_msg_counter every message carries `Nats-Incr: <base-10 integer>` and an empty body; the stream stores
// it with the body `{"val":"<running total>"}` (arbitrary precision, Go's big.Int, here bigint) and the PubAck
// adds `"val":"<total>"`. A message sourced from another counter stream carries that stream's total: the
// increment becomes the difference to the last total seen from that origin and subject, and the per-origin
// totals are kept in the `Nats-Counter-Sources` header (`{"<stream>":{"<subject>":"<total>"}}`).
//
// The total a new increment adds to is the body of the subject's last stored message. The store reads
// asynchronously, so each stream keeps the last counter message per subject it has stored (CounterCache);
// an entry counts only while it is still the subject's last message (its sequence is the store's
// lastSeqForSubject), otherwise the writer loads the message once and decides the publish again.
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import type { MessageStore } from '@flotilla/store';

export const INCR_HEADER = 'Nats-Incr';
export const COUNTER_SOURCES_HEADER = 'Nats-Counter-Sources';
const STREAM_SOURCE_HEADER = 'Nats-Stream-Source';

/** Go's big.Int SetString(s, 10): an optional sign and decimal digits. */
const BASE10_INTEGER = /^[+-]?[0-9]+$/;

/** Per-origin totals: origin stream → origin subject → its last total (decimal). */
export type CounterSources = Record<string, Record<string, string>>;

/** A subject's counter as its last stored message holds it. */
export interface CounterState {
  total: bigint;
  sources: CounterSources | null;
}

/** What the rules know of a subject's counter: its state, 'broken' (unreadable body), or 'load' (not known yet). */
export type CounterBase = CounterState | 'broken' | 'load';

export const ZERO_COUNTER: CounterState = { total: 0n, sources: null };

/** Nats-Incr's value, or null when it is not an integer. */
export function parseIncr(text: string): bigint | null {
  return BASE10_INTEGER.test(text) ? BigInt(text) : null;
}

/** Go's SetString on a stored total: a value it cannot read leaves 0 (as far as the sum is concerned). */
function totalOf(text: unknown): bigint {
  return typeof text === 'string' && BASE10_INTEGER.test(text) ? BigInt(text) : 0n;
}

/** The header value of `name` in a header block (exact case, first occurrence), or undefined. */
export function headerValue(block: Uint8Array | null, name: string): string | undefined {
  if (block === null || block.length === 0) return undefined;
  const text = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('latin1');
  const key = `\r\n${name}:`;
  const at = text.indexOf(key);
  if (at < 0) return undefined;
  const end = text.indexOf('\r\n', at + key.length);
  return text.slice(at + key.length, end < 0 ? undefined : end).trim();
}

/** nats-server's setHeader: the value replaced where the key is, else the key appended. */
export function setHeader(block: Uint8Array | null, name: string, value: string): Buffer {
  const text = block !== null && block.length > 0 ? Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('latin1') : 'NATS/1.0\r\n\r\n';
  const lines = text.split('\r\n').filter((l, i) => i === 0 || l !== '');
  const i = lines.findIndex((l, n) => n > 0 && l.startsWith(`${name}:`));
  if (i > 0) lines[i] = `${name}: ${value}`;
  else lines.push(`${name}: ${value}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/** A stored counter message's state, or 'broken' when its body or sources header is not what a counter stores. */
export function counterStateOf(header: Uint8Array | null, data: Uint8Array): CounterState | 'broken' {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return 'broken';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'broken';
  let sources: CounterSources | null = null;
  const raw = headerValue(header, COUNTER_SOURCES_HEADER);
  if (raw !== undefined && raw !== '') {
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'broken';
      sources = parsed as CounterSources;
    } catch {
      return 'broken';
    }
  }
  return { total: totalOf((body as { val?: unknown }).val), sources };
}

/** Go's json.Marshal of the sources map: keys sorted at both levels. */
function encodeSources(sources: CounterSources): string {
  const outer: Record<string, Record<string, string>> = {};
  for (const s of Object.keys(sources).sort()) {
    const inner: Record<string, string> = {};
    for (const subj of Object.keys(sources[s]!).sort()) inner[subj] = sources[s]![subj]!;
    outer[s] = inner;
  }
  return JSON.stringify(outer);
}

/** The message a counter stream stores for one increment, and the total its PubAck reports. */
export interface CounterIncrement {
  header: Buffer;
  data: Buffer;
  state: CounterState;
  total: string;
}

/**
 * Applies the message's increment to `base`. `header` is the published (or sourced) block; `data` its body,
 * read only for a sourced message (the origin's total). Errors are 10172 message counter is broken.
 */
export function applyIncrement(base: CounterState, incr: bigint, header: Buffer, data: Buffer): CounterIncrement | ApiError {
  let delta = incr;
  let sources = base.sources;
  let out = header;
  const source = headerValue(header, STREAM_SOURCE_HEADER);
  if (source !== undefined && source !== '') {
    // Sourced from another counter: the origin's total replaces what we last had from it.
    const fields = source.split(' ');
    const origin = fields[0]!;
    const originSubject = fields.length >= 5 ? fields[4]! : undefined;
    const sourced = counterStateOf(null, data);
    if (sourced === 'broken') return JsErrors.counterBroken();
    const copy: CounterSources = {};
    for (const [k, v] of Object.entries(sources ?? {})) copy[k] = { ...v };
    const perOrigin = (copy[origin] ??= {});
    const key = originSubject ?? '';
    const previous = totalOf(perOrigin[key]);
    perOrigin[key] = sourced.total.toString();
    sources = copy;
    delta = sourced.total - previous;
    out = setHeader(out, INCR_HEADER, delta.toString());
  }
  const total = base.total + delta;
  if (sources !== null && Object.keys(sources).length > 0) out = setHeader(out, COUNTER_SOURCES_HEADER, encodeSources(sources));
  const text = total.toString();
  return { header: out, data: Buffer.from(`{"val":${JSON.stringify(text)}}`), state: { total, sources }, total: text };
}

/**
 * checkStreamCfg's refusals for a counter stream (10052 unless said): no discard new, message TTLs, schedules,
 * or retention other than limits; a mirror cannot count (10173).
 */
export function counterConfigError(cfg: {
  allow_msg_counter?: boolean;
  discard?: string;
  allow_msg_ttl?: boolean;
  allow_msg_schedules?: boolean;
  retention?: string;
}): ApiError | null {
  if (cfg.allow_msg_counter !== true) return null;
  const invalid = JsErrors.streamInvalidConfig;
  if (cfg.discard === 'new') return invalid('counter stream cannot use discard new');
  if (cfg.allow_msg_ttl === true) return invalid('counter stream cannot use message TTLs');
  if (cfg.allow_msg_schedules === true) return invalid('counter stream cannot use message schedules');
  if (cfg.retention !== undefined && cfg.retention !== 'limits') return invalid('counter stream can only use limits retention');
  return null;
}

export const mirrorWithCountersError = (): ApiError => jsError('JSMirrorWithCountersErr');

/**
 * The last counter message of each subject this stream stored, kept while it stays the subject's last
 * message. Bounded by the stream's subjects (one entry each); entries that are no longer last are replaced
 * on the next increment.
 */
export class CounterCache {
  private readonly last = new Map<string, { seq: number; state: CounterState | 'broken' }>();
  private readonly loading = new Map<string, Promise<void>>();

  /** The subject's state, given the store's last sequence for it (0: none, the counter starts at 0). */
  base(subject: string, lastSeqForSubject: number): CounterBase {
    if (lastSeqForSubject === 0) return ZERO_COUNTER;
    const e = this.last.get(subject);
    return e !== undefined && e.seq === lastSeqForSubject ? e.state : 'load';
  }

  /** A counter message was stored (or applied) at `seq`. */
  stored(subject: string, seq: number, state: CounterState | 'broken'): void {
    this.last.set(subject, { seq, state });
  }

  /** Reads the subject's last message into the cache; concurrent loads of one subject share the read. */
  load(store: MessageStore, subject: string): Promise<void> {
    const busy = this.loading.get(subject);
    if (busy !== undefined) return busy;
    const p = store
      .lastBySubject(subject)
      .then((m) => {
        if (m !== null) this.last.set(subject, { seq: m.seq, state: counterStateOf(m.header ?? null, m.data) });
      })
      .finally(() => this.loading.delete(subject));
    this.loading.set(subject, p);
    return p;
  }

  clear(): void {
    this.last.clear();
  }
}

/** The Nats-* headers an increment may not be combined with (2.14 answers 10171). */
export interface IncrCompanions {
  rollup?: string;
  expectedStream?: string;
  expectedLastMsgId?: string;
  expectedLastSubjectSeqSubject?: string;
  expectedLastSeq?: string;
  expectedLastSubjectSeq?: string;
}

/**
 * 2.14's first header check of a publish: an unreadable Nats-Incr is 10171 on any stream; an increment on a
 * stream without counters 10168, with a body 10170, with a rollup or expected-* header 10171. A sourced
 * message is stored as its origin wrote it (only the unreadable value is refused).
 */
export function counterHeaderError(incr: string | undefined, h: IncrCompanions, allowMsgCounter: boolean, dataLen: number, sourced: boolean): ApiError | null {
  if (!incr) return null;
  if (parseIncr(incr) === null) return JsErrors.messageIncrInvalid();
  if (sourced) return null;
  if (!allowMsgCounter) return JsErrors.messageIncrDisabled();
  if (dataLen > 0) return JsErrors.messageIncrPayload();
  if (h.rollup || h.expectedStream || h.expectedLastMsgId || h.expectedLastSubjectSeqSubject) return JsErrors.messageIncrInvalid();
  // Go's getExpectedLastSeq / PerSubject: present when the value parses as an unsigned integer.
  if (isUint(h.expectedLastSeq) || isUint(h.expectedLastSubjectSeq)) return JsErrors.messageIncrInvalid();
  return null;
}

const isUint = (v: string | undefined): boolean => v !== undefined && /^[0-9]+$/.test(v);
