// Go's time.Duration.String() for a span in milliseconds ("0s", "250ms", "1.5s", "2m3.25s", "1h0m0s"), as
// nats-server prints durations in its JSON (e.g. /raftz's last_seen).

export function goDurationString(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  if (ms < 1) return `${trim((ms * 1000).toFixed(3))}µs`;
  if (ms < 1000) return `${trim(ms.toFixed(6))}ms`;
  const totalSeconds = ms / 1000;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = trim((totalSeconds % 60).toFixed(9));
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Go prints no trailing zeros after the point, and no point for a whole number. */
function trim(fixed: string): string {
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}
