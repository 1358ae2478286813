// Nearest-rank percentiles and max over a list of milliseconds, for failover windows and latencies.
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function windowStats(values) {
  if (values.length === 0) return { count: 0, maxMs: null, p50Ms: null, p99Ms: null };
  return {
    count: values.length,
    maxMs: Math.max(...values),
    p50Ms: percentile(values, 50),
    p99Ms: percentile(values, 99),
  };
}
