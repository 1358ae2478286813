// The process's CPU use in percent of one core since the previous sample, as nats-server's pse reports it;
// sampled at most every 250 ms so that frequent callers see a stable figure.
const MIN_SAMPLE_INTERVAL_MS = 250;

export class CpuPercent {
  private last = process.cpuUsage();
  private lastAtMs = Date.now();
  private percent = 0;

  sample(nowMs = Date.now()): number {
    const elapsedMs = nowMs - this.lastAtMs;
    if (elapsedMs >= MIN_SAMPLE_INTERVAL_MS) {
      const used = process.cpuUsage(this.last);
      this.percent = Math.round(((used.user + used.system) / 1000 / elapsedMs) * 1000) / 10;
      this.last = process.cpuUsage();
      this.lastAtMs = nowMs;
    }
    return this.percent;
  }
}
