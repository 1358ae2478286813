// Raft timings of stream groups and the one timer that ticks all of them.
import type { Clock } from '@flotilla/raft';

export interface StreamRaftTimings {
  tickMs: number;
  /** Followers campaign after electionTicks + random(electionTicks) ticks without hearing a leader. */
  electionTicks: number;
  heartbeatTicks: number;
}

/**
 * 100 ms ticks, heartbeat every 200 ms, election timeout 0.6–1.2 s (with pre-vote and check-quorum): a dead
 * leader is replaced within ~1.3 s, inside the 2 s publish-gap budget, while an event-loop stall of a few
 * hundred ms does not depose a healthy leader.
 */
export const DEFAULT_STREAM_RAFT_TIMINGS: StreamRaftTimings = { tickMs: 100, electionTicks: 6, heartbeatTicks: 2 };

/** A member that has not been heard from for this many election timeouts is not `current`. */
export const CURRENT_WITHIN_ELECTIONS = 2;

/**
 * One setInterval per tick length for every group on the node, instead of one timer per group: with
 * thousands of idle groups the per-timer overhead dominates. Timers are unref'd (never keep a process alive).
 */
class SharedTicker implements Clock {
  private readonly groups = new Map<number, { fns: Set<() => void>; timer: NodeJS.Timeout }>();

  every(intervalMs: number, fn: () => void): () => void {
    let group = this.groups.get(intervalMs);
    if (group === undefined) {
      const fns = new Set<() => void>();
      const timer = setInterval(() => {
        for (const f of fns) f();
      }, intervalMs);
      timer.unref();
      group = { fns, timer };
      this.groups.set(intervalMs, group);
    }
    const g = group;
    // A wrapper per registration so registering the same function twice still yields two ticks.
    const entry = (): void => fn();
    g.fns.add(entry);
    return () => {
      g.fns.delete(entry);
      if (g.fns.size === 0 && this.groups.get(intervalMs) === g) {
        clearInterval(g.timer);
        this.groups.delete(intervalMs);
      }
    };
  }
}

export const sharedTicker: Clock = new SharedTicker();
