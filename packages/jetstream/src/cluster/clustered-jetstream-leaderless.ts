// How long each group (the meta group, every local stream group) has been without a leader in sight, sampled
// on a timer and at every request. A member answers for a leaderless group only once the group has had no
// leader for longer than an election takes: a member that merely has not heard from a new (or just elected)
// leader yet must stay silent, or the client gets its empty view beside the real leader's answer (issue 24
// item 3). nats-server has the same rule with a 10 s threshold (`isGroupLeaderless`).
import type { NodeId } from '@flotilla/raft';

/** Leaderless for at least this long before a member answers in the group's stead (> an election: 0.6–1.2 s + a vote round). */
export const LEADERLESS_ANSWER_MS = 3_000;

export class LeaderlessClock {
  private readonly sinceMs = new Map<string, number>();

  constructor(private readonly nowMs: () => number = () => performance.now()) {}

  /** Records whether `group` has a leader now. */
  observe(group: string, hasLeader: boolean): void {
    if (hasLeader) this.sinceMs.delete(group);
    else if (!this.sinceMs.has(group)) this.sinceMs.set(group, this.nowMs());
  }

  /** Milliseconds `group` has been leaderless (0 with a leader; observes first). */
  leaderlessForMs(group: string, hasLeader: boolean): number {
    this.observe(group, hasLeader);
    const since = this.sinceMs.get(group);
    return since === undefined ? 0 : this.nowMs() - since;
  }

  /** Keeps only the groups in `live` (closed replicas drop out). */
  retain(live: ReadonlySet<string>): void {
    for (const g of this.sinceMs.keys()) if (!live.has(g)) this.sinceMs.delete(g);
  }
}

/**
 * The one member that answers for a leaderless group: the lowest id among the members this node has a live link
 * to (itself included). Nodes that see the same links agree; across a partition each side's requests reach only
 * its own side.
 */
export function designatedAnswerer(members: readonly NodeId[], self: NodeId, isActive: (id: NodeId) => boolean): boolean {
  let lowest = self;
  for (const id of members) if (id < lowest && isActive(id)) lowest = id;
  return lowest === self;
}
