// nats-server's STATSZ heartbeat on `$SYS.SERVER.<id>.STATSZ` (events.go startStatszTimer, heartbeatStatsz,
// limitStatsz): the first 250 ms after start, the interval doubling on every beat up to statsHBInterval (10 s).
// A broadcast is skipped when the last one went out less than min(1 s, current interval) ago, and the timer is
// moved to the end of that window. A `$SYS.REQ.SERVER.PING.STATSZ` without a reply clears the window and
// broadcasts at once; a peer that links up gets one too (nats-server answers a server it has not heard of). The
// timer runs whether anyone listens or not, as nats-server's does (2.14's standalone interest check is unused);
// `send` skips building a message nobody here or on a peer subscribes to.

const FIRST_INTERVAL_MS = 250;
const MAX_INTERVAL_MS = 10_000;
const RATE_LIMIT_MS = 1_000;
/** Node's timers may fire a millisecond early by performance.now(): a retry at the window's end must pass. */
const TIMER_SLACK_MS = 2;

export class StatszHeartbeat {
  private intervalMs = FIRST_INTERVAL_MS;
  private lastMs = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  /** `send` publishes one STATSZ on the broadcast subject. */
  constructor(private readonly send: () => void) {}

  start(): void {
    this.arm(this.intervalMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A broadcast out of turn (a peer appeared), within the rate limit. */
  broadcast(): void {
    if (!this.stopped && !this.limited()) this.send();
  }

  /** nats-server's resetLastStatsz before a reply-less STATSZ request's broadcast. */
  broadcastNow(): void {
    this.lastMs = Number.NEGATIVE_INFINITY;
    this.broadcast();
  }

  private arm(delayMs: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.beat(), delayMs);
    this.timer.unref();
  }

  private beat(): void {
    if (this.stopped) return;
    this.intervalMs = Math.min(this.intervalMs * 2, MAX_INTERVAL_MS);
    this.arm(this.intervalMs);
    this.broadcast();
  }

  private limited(): boolean {
    const now = performance.now();
    const windowMs = Math.min(RATE_LIMIT_MS, this.intervalMs);
    if (now - this.lastMs < windowMs - TIMER_SLACK_MS) {
      this.arm(this.lastMs + windowMs - now);
      return true;
    }
    this.lastMs = now;
    return false;
  }
}
