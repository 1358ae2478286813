// Catalogue requests that reach the meta leader while its catalogue is momentarily not "settled": it is the Raft
// leader, but an entry is committed and not applied yet (until the driver's next turn), or its term's first
// entry is not committed yet (a commit round with its fsyncs). Every other node stays silent then (they see a live leader), so dropping
// such a request loses it for good (the client times out after 10 s). Instead the leader holds it, bounded,
// and answers it once the catalogue is settled; a request still held when leadership is lost or the wait runs
// out is given up (10008 if no leader is known by then, else silence, as before).

export interface SettlingRequestsOptions {
  /** The catalogue is settled: held requests can be answered now. */
  settled: () => boolean;
  /** This node may still settle (it is the Raft leader of the meta group). */
  settling: () => boolean;
  /** A request is held at most this long. */
  maxWaitMs: number;
  /** How often held requests are checked. */
  pollMs: number;
  /** Held requests at most (beyond it, a request is given up at once). */
  maxHeld: number;
  nowMs?: () => number;
}

interface Held {
  answer: () => void;
  giveUp: () => void;
  untilMs: number;
}

export class SettlingRequests {
  private held: Held[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly nowMs: () => number;

  constructor(private readonly o: SettlingRequestsOptions) {
    this.nowMs = o.nowMs ?? Date.now;
  }

  get size(): number {
    return this.held.length;
  }

  /** Holds a request: `answer` runs once settled, `giveUp` when that cannot happen in time (one of them, once). */
  hold(answer: () => void, giveUp: () => void): void {
    if (this.held.length >= this.o.maxHeld) {
      giveUp();
      return;
    }
    this.held.push({ answer, giveUp, untilMs: this.nowMs() + this.o.maxWaitMs });
    if (this.timer === null) {
      this.timer = setInterval(() => this.check(), this.o.pollMs);
      this.timer.unref();
    }
  }

  /** Answers or gives up what is due (called by the timer; tests may call it). */
  check(): void {
    if (this.o.settled()) {
      for (const h of this.take(() => true)) h.answer();
    } else if (!this.o.settling()) {
      for (const h of this.take(() => true)) h.giveUp();
    } else {
      const now = this.nowMs();
      for (const h of this.take((x) => x.untilMs <= now)) h.giveUp();
    }
    if (this.held.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Shutdown: held requests get no answer. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.held = [];
  }

  private take(due: (h: Held) => boolean): Held[] {
    const out = this.held.filter(due);
    if (out.length > 0) this.held = this.held.filter((h) => !due(h));
    return out;
  }
}
