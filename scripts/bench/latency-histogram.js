// Latencies in logarithmic buckets 2 % wide (1 µs … ~10 min in 1,024 counters): bounded memory however
// many samples, mergeable across worker processes and rounds, percentiles within 2 %.
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = 1024;

export class LatencyHistogram {
  constructor() {
    this.counts = new Float64Array(BUCKETS);
    this.total = 0;
    this.maxUs = 0;
  }

  recordUs(us) {
    const i = us < 1 ? 0 : Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(us) / LOG_GROWTH));
    this.counts[i]++;
    this.total++;
    if (us > this.maxUs) this.maxUs = us;
  }

  /** Forgets every sample (a warm-up's). */
  reset() {
    this.counts.fill(0);
    this.total = 0;
    this.maxUs = 0;
  }

  merge(other) {
    for (let i = 0; i < BUCKETS; i++) this.counts[i] += other.counts[i];
    this.total += other.total;
    this.maxUs = Math.max(this.maxUs, other.maxUs);
    return this;
  }

  /** The latency in µs at or below which `p` (0–100) per cent of the samples lie; NaN when empty. */
  percentileUs(p) {
    if (this.total === 0) return NaN;
    if (p >= 100) return this.maxUs;
    const rank = Math.ceil((p / 100) * this.total);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= Math.max(1, rank)) return Math.min(this.maxUs, bucketMidUs(i));
    }
    return this.maxUs;
  }

  /** Sparse form for a JSON line: [[bucket, count], …]. */
  toJSON() {
    const buckets = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i] > 0) buckets.push([i, this.counts[i]]);
    return { buckets, maxUs: this.maxUs };
  }

  static fromJSON(o) {
    const h = new LatencyHistogram();
    for (const [i, c] of o?.buckets ?? []) {
      if (i >= 0 && i < BUCKETS) {
        h.counts[i] += c;
        h.total += c;
      }
    }
    h.maxUs = o?.maxUs ?? 0;
    return h;
  }
}

function bucketMidUs(i) {
  return i === 0 ? 0.5 : Math.pow(GROWTH, i - 0.5);
}
