// Times on the JetStream wire: Go's RFC3339Nano in UTC (fraction with trailing zeros trimmed).
import { msToBigNs } from '@flotilla/store';

export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Unix nanoseconds → `2026-11-29T20:17:37.1748139Z`; 0n → the Go zero time. */
export function formatTimeNs(ns: bigint): string {
  if (ns <= 0n) return ZERO_TIME;
  const seconds = ns / 1_000_000_000n;
  const frac = Number(ns % 1_000_000_000n);
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
  if (frac === 0) return `${base}Z`;
  return `${base}.${String(frac).padStart(9, '0').replace(/0+$/, '')}Z`;
}

/** RFC 3339 (any precision) → Unix nanoseconds; NaN-safe: returns null for a bad string. */
export function parseTimeNs(text: string): bigint | null {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return null;
  const frac = BigInt((m[2] ?? '').padEnd(9, '0') || '0');
  return BigInt(ms) * 1_000_000n + frac;
}

export function nowNs(): bigint {
  return msToBigNs(Date.now()) + (process.hrtime.bigint() % 1_000_000n);
}
