// Counts events in fixed one-second windows so a connection that keeps sending malformed input (or keeps
// tripping permission errors) is bounded: the caller closes it, or stops logging, once over the limit.
const WINDOW_MS = 1000;

export class ErrorRateBound {
  private windowStartMs = 0;
  private count = 0;

  constructor(readonly maxPerSecond: number) {}

  /** Records one event; true when this window is now over the limit. */
  exceeded(nowMs: number): boolean {
    if (nowMs - this.windowStartMs >= WINDOW_MS) {
      this.windowStartMs = nowMs;
      this.count = 0;
    }
    this.count++;
    return this.count > this.maxPerSecond;
  }
}
