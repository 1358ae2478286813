// Consumer pause (nats-server 2.11+, ADR-42's companion): `pause_until` in the consumer config, the
// `$JS.API.CONSUMER.PAUSE.<stream>.<consumer>` request and its response, ConsumerInfo's `paused` /
// `pause_remaining`, and the `consumer_pause` advisory. The deadline is part of the config, so it is stored
// and replicated with the consumer's meta (a new leader reads it back and stays paused).
import { formatTimeNs, parseTimeNs, ZERO_TIME } from '../api/time-format.js';

const GO_ZERO_TIME_NS = parseTimeNs(ZERO_TIME)!;

/** `pause_until` → ms since the epoch; 0 when unset, the Go zero time or unparseable. */
export function pauseUntilMs(pauseUntil: string | undefined): number {
  if (pauseUntil === undefined) return 0;
  const ns = parseTimeNs(pauseUntil);
  if (ns === null || ns <= 0n) return 0;
  return Number(ns / 1_000_000n);
}

/** True while the deadline has not passed (nats-server: time.Now().Before(pause_until)). */
export function isPausedAt(pauseUntil: string | undefined, nowMs: number): boolean {
  const until = pauseUntilMs(pauseUntil);
  return until > 0 && nowMs < until;
}

/**
 * A config's `pause_until` as 2.14 keeps it: in UTC (Go's RFC3339Nano), unset for the zero time.
 * Null when the text is not an RFC 3339 time (Go's decoder fails: invalid JSON).
 */
export function normalisePauseUntil(text: string): string | undefined | null {
  const ns = parseTimeNs(text);
  if (ns === null) return null;
  // Only Go's zero time means "not paused"; a past time (nats.js resumes with the epoch) is kept, not paused.
  if (ns === GO_ZERO_TIME_NS) return undefined;
  if (ns > 0n) return formatTimeNs(ns);
  return new Date(Number(ns / 1_000_000n)).toISOString().replace('.000Z', 'Z');
}

/** ConsumerInfo's pause fields (omitted when not paused, as Go's omitempty). */
export function pauseInfo(pauseUntil: string | undefined, nowMs: number): { paused?: true; pause_remaining?: number } {
  const until = pauseUntilMs(pauseUntil);
  if (until === 0 || nowMs >= until) return {};
  return { paused: true, pause_remaining: (until - nowMs) * 1_000_000 };
}

/** The CONSUMER.PAUSE response's fields: `pause_until` is always there (the zero time on resume). */
export function pauseResponse(pauseUntil: string | undefined, nowMs: number): Record<string, unknown> {
  const until = pauseUntilMs(pauseUntil);
  const paused = until > 0 && nowMs < until;
  return {
    paused,
    pause_until: pauseUntil ?? ZERO_TIME,
    ...(paused ? { pause_remaining: (until - nowMs) * 1_000_000 } : {}),
  };
}

export type PauseRequest = { pauseUntil: string | undefined } | { error: string };

/**
 * The CONSUMER.PAUSE body: `{pause_until}`; an empty body (or one that is not a JSON object or array, which
 * 2.14 does not decode) resumes. A body that fails to decode is `invalid JSON` (10025).
 */
export function parsePauseRequest(body: Uint8Array): PauseRequest {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').trim();
  if (!(text.startsWith('{') || text.startsWith('['))) return { pauseUntil: undefined };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (Array.isArray(raw)) return { error: 'json: cannot unmarshal array into Go value of type server.JSApiConsumerPauseRequest' };
  const v = (raw as Record<string, unknown>)['pause_until'];
  if (v === undefined || v === null) return { pauseUntil: undefined };
  if (typeof v !== 'string') return { error: `json: cannot unmarshal ${typeof v} into Go struct field JSApiConsumerPauseRequest.pause_until of type time.Time` };
  const normalised = normalisePauseUntil(v);
  if (normalised === null) return { error: `parsing time "\\"${v}\\"" as "\\"2006-01-02T15:04:05Z07:00\\"": cannot parse` };
  return { pauseUntil: normalised };
}

/** `$JS.EVENT.ADVISORY.CONSUMER.PAUSE.<stream>.<consumer>`'s body (io.nats.jetstream.advisory.v1.consumer_pause). */
export function pauseAdvisory(base: Record<string, unknown>, pauseUntil: string | undefined, nowMs: number): Record<string, unknown> {
  const { domain, ...rest } = base;
  return {
    type: 'io.nats.jetstream.advisory.v1.consumer_pause',
    ...rest,
    paused: isPausedAt(pauseUntil, nowMs),
    // Go's omitempty does not drop a struct: the zero time shows when the pause is lifted.
    pause_until: pauseUntil ?? ZERO_TIME,
    ...(domain !== undefined ? { domain } : {}),
  };
}
