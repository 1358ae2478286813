// The `Nats-Schedule` patterns of nats-server 2.14 (scheduler.go parseMsgSchedule, cron.go parseCron):
//   @at <RFC 3339 time>     once (no time zone header allowed)
//   @every <Go duration>    repeating, at least 1s, from the schedule's time rounded to the second (no zone)
//   <6-field cron>          `sec min hour dom month dow`, with `*`/`?`, ranges, steps, lists, month and day
//                           names, and @yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly;
//                           in Nats-Schedule-Time-Zone's zone (UTC when absent), searched at most 5 years ahead.
// Times are ms since the epoch (a schedule's resolution is a second).
import { parseGoDurationNs } from './message-ttl.js';

/** The next firing, and whether the schedule repeats after it; null: the pattern is invalid. */
export type NextFiring = { atMs: number; repeat: boolean } | null;

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

/** Go's time.Parse(time.RFC3339, s): a full date-time with a `Z` or numeric offset (fraction optional). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function parseRfc3339Ms(text: string): number | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > 31 || h! > 23 || mi! > 59 || s! > 59) return null;
  const ms = Date.parse(text.toUpperCase());
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 31 April over; Go refuses it.
  const back = new Date(Date.UTC(y!, mo! - 1, d!));
  if (back.getUTCDate() !== d) return null;
  return ms;
}

/**
 * The firing after `fromMs` (the schedule message's time, or the last firing) for `pattern`, `zone` the
 * Nats-Schedule-Time-Zone value (undefined: absent), `nowMs` the clock (a repeating schedule never fires in the past).
 */
export function nextFiring(pattern: string, zone: string | undefined, fromMs: number, nowMs: number): NextFiring {
  if (pattern.startsWith('@at ')) {
    if (zone !== undefined) return null;
    const at = parseRfc3339Ms(pattern.slice(4));
    return at === null ? null : { atMs: at, repeat: false };
  }
  if (pattern.startsWith('@every ')) {
    if (zone !== undefined) return null;
    const ns = parseGoDurationNs(pattern.slice(7));
    if (ns === null || ns < 1_000_000_000n) return null;
    const everyMs = Number(ns / 1_000_000n);
    let next = roundToSecond(fromMs) + everyMs;
    if (next < nowMs) next = roundToSecond(nowMs) + everyMs;
    return { atMs: next, repeat: true };
  }
  const cron = parseCron(MACROS[pattern] ?? pattern);
  if (cron === null) return null;
  let next = cronNext(cron, zone, fromMs);
  if (next !== null && next < nowMs) next = cronNext(cron, zone, roundToSecond(nowMs));
  return next === null ? null : { atMs: next, repeat: true };
}

/** Go's Time.Round(time.Second): halves away from zero. */
const roundToSecond = (ms: number): number => Math.floor((ms + 500) / 1000) * 1000;

// ---- cron ------------------------------------------------------------------------------------------

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const SECONDS: Bounds = { min: 0, max: 59 };
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

/** A field's allowed values as bits (bigint: 64 bits, the top one meaning `*`). */
interface Cron {
  second: bigint;
  minute: bigint;
  hour: bigint;
  dom: bigint;
  month: bigint;
  dow: bigint;
}

const STAR_BIT = 1n << 63n;

export function parseCron(pattern: string): Cron | null {
  const f = pattern.split(/\s+/).filter((x) => x !== '');
  if (f.length !== 6) return null;
  const bounds = [SECONDS, MINUTES, HOURS, DOM, MONTHS, DOW];
  const bits: bigint[] = [];
  for (let i = 0; i < 6; i++) {
    let b = 0n;
    for (const expr of f[i]!.split(',').filter((x) => x !== '')) {
      const r = rangeBits(expr, bounds[i]!);
      if (r === null) return null;
      b |= r;
    }
    bits.push(b);
  }
  return { second: bits[0]!, minute: bits[1]!, hour: bits[2]!, dom: bits[3]!, month: bits[4]!, dow: bits[5]! };
}

/** Go's strconv.Atoi, non-negative. */
function atoi(s: string): number | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const n = Number(s);
  return n < 0 || !Number.isSafeInteger(n) ? null : n;
}

function rangeBits(expr: string, r: Bounds): bigint | null {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let extra = 0n;
  const intOrName = (s: string): number | null => r.names?.[s.toLowerCase()] ?? atoi(s);
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
    extra = STAR_BIT;
  } else {
    const s = intOrName(lowAndHigh[0]!);
    if (s === null) return null;
    start = s;
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) {
      const e = intOrName(lowAndHigh[1]!);
      if (e === null) return null;
      end = e;
    } else return null;
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    const s = atoi(rangeAndStep[1]!);
    if (s === null) return null;
    step = s;
    if (single) end = r.max;
    if (step > 1) extra = 0n;
  } else if (rangeAndStep.length > 2) return null;
  if (start < r.min || end > r.max || start > end || step === 0) return null;
  let bits = 0n;
  for (let i = start; i <= end; i += step) bits |= 1n << BigInt(i);
  return bits | extra;
}

const has = (bits: bigint, v: number): boolean => (bits & (1n << BigInt(v))) !== 0n;

function dayMatches(c: Cron, d: Date): boolean {
  const domMatch = has(c.dom, d.getUTCDate());
  const dowMatch = has(c.dow, d.getUTCDay());
  if ((c.dom & STAR_BIT) !== 0n || (c.dow & STAR_BIT) !== 0n) return domMatch && dowMatch;
  return domMatch || dowMatch;
}

/** The wall clock of `ms` in `zone` as ms of a UTC date with the same fields. */
function wallOf(ms: number, zone: string | undefined): number {
  if (zone === undefined || zone === 'UTC') return ms;
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone === 'Local' ? undefined : zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'), ms % 1000);
}

/** The instant whose wall clock in `zone` is `wallMs` (the offset found at that instant, so DST-aware). */
function instantOf(wallMs: number, zone: string | undefined): number {
  if (zone === undefined || zone === 'UTC') return wallMs;
  let t = wallMs - (wallOf(wallMs, zone) - wallMs);
  t = wallMs - (wallOf(t, zone) - t);
  return t;
}

/** parseCron's search (cron.go): the first matching second after `fromMs`, at most 5 years ahead. */
function cronNext(c: Cron, zone: string | undefined, fromMs: number): number | null {
  const d = new Date(Math.floor(wallOf(fromMs, zone) / 1000) * 1000 + 1000);
  const yearLimit = d.getUTCFullYear() + 5;
  let truncated = false;
  // Each pass moves forward by at least one unit; the year limit bounds the whole search.
  wrap: for (;;) {
    if (d.getUTCFullYear() > yearLimit) return null;
    while (!has(c.month, d.getUTCMonth() + 1)) {
      if (!truncated) {
        truncated = true;
        d.setUTCDate(1);
        d.setUTCHours(0, 0, 0, 0);
      }
      d.setUTCMonth(d.getUTCMonth() + 1);
      if (d.getUTCMonth() === 0) continue wrap;
    }
    while (!dayMatches(c, d)) {
      if (!truncated) {
        truncated = true;
        d.setUTCHours(0, 0, 0, 0);
      }
      d.setUTCDate(d.getUTCDate() + 1);
      if (d.getUTCDate() === 1) continue wrap;
    }
    while (!has(c.hour, d.getUTCHours())) {
      if (!truncated) {
        truncated = true;
        d.setUTCMinutes(0, 0, 0);
      }
      d.setUTCHours(d.getUTCHours() + 1);
      if (d.getUTCHours() === 0) continue wrap;
    }
    while (!has(c.minute, d.getUTCMinutes())) {
      if (!truncated) {
        truncated = true;
        d.setUTCSeconds(0, 0);
      }
      d.setUTCMinutes(d.getUTCMinutes() + 1);
      if (d.getUTCMinutes() === 0) continue wrap;
    }
    while (!has(c.second, d.getUTCSeconds())) {
      if (!truncated) {
        truncated = true;
        d.setUTCMilliseconds(0);
      }
      d.setUTCSeconds(d.getUTCSeconds() + 1);
      if (d.getUTCSeconds() === 0) continue wrap;
    }
    return instantOf(d.getTime(), zone);
  }
}
