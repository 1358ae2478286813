// Go's time.ParseDuration syntax ("300ms", "1h30m", "1.5s", "-2m"), which nats-server uses for
// ping_interval, write_deadline and friends. Returns milliseconds (fractions kept) or undefined if invalid.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export function parseGoDurationMs(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let totalMs = 0;
  // Each iteration consumes at least one character, so the loop is bounded by the input length.
  while (rest.length > 0) {
    const m = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/.exec(rest);
    if (!m) return undefined;
    totalMs += Number(m[1]) * UNIT_MS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return sign * totalMs;
}

/** Go's time.Duration.String() for a millisecond value ("1m30s", "500ms", "0s"), as nats-server prints durations. */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) {
    if (rest >= 1) return `${sign}${trimFraction(rest)}ms`;
    if (rest >= 1e-3) return `${sign}${trimFraction(rest * 1e3)}µs`;
    return `${sign}${Math.round(rest * 1e6)}ns`;
  }
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${trimFraction(rest / 1000)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

function trimFraction(n: number): string {
  return String(Number(n.toFixed(9)));
}
