// Time for the delivery engine, injectable so tests drive ack_wait, expiries and heartbeats by hand.

export interface Clock {
  nowMs(): number;
  /** Calls `fn` after `ms`; returns the canceller. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return () => clearTimeout(t);
  },
};
