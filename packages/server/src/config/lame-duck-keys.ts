// `lame_duck_duration` / `lame_duck_grace_period` as nats-server reads them: a Go duration string; the
// duration at least 30 s, the grace period not negative; the same error texts.
import { formatGoDuration, parseGoDurationMs } from './go-duration.js';

export const LAME_DUCK_DURATION_MIN_MS = 30_000;

export type LameDuckKey = 'lame_duck_duration' | 'lame_duck_grace_period';

/** Milliseconds, or nats-server's error text. */
export function parseLameDuckKey(key: LameDuckKey, value: unknown): { ms: number } | { error: string } {
  if (typeof value !== 'string') return { error: `error parsing ${key}: expected a duration string like "2m"` };
  const ms = parseGoDurationMs(value);
  if (ms === undefined) return { error: `error parsing ${key}: time: invalid duration "${value}"` };
  if (key === 'lame_duck_duration' && ms < LAME_DUCK_DURATION_MIN_MS) {
    return { error: `invalid lame_duck_duration of ${formatGoDuration(ms)}, minimum is 30 seconds` };
  }
  if (key === 'lame_duck_grace_period' && ms < 0) return { error: 'invalid lame_duck_grace_period, needs to be positive' };
  return { ms };
}
