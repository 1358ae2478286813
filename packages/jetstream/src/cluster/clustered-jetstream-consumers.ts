// The stream replicas' consumer hooks on this node, in the order their consumer placements need them: a
// replica registers first (replicaAdded loads what was stored), then its committed consumer entries apply in log
// order, and leadership changes follow the entries applied before them. A replica replays its Raft log while
// it opens, before the meta layer sees it, so registration happens at the first hook.
// Consumer snapshots wait only for registration and queued entries, never for leadership work (which may
// itself wait for a commit of the very group that is taking the snapshot).
import { LEADERSHIP_START_WAIT_MS } from '../consumer/consumer-state-placement.js';
import { settledWithin } from '../consumer/settled-within.js';
import type { JetStreamLogger } from '../message-bus.js';
import type { ReplicatedStreamConsumers } from './consumer-replication-streams.js';
import type { StreamReplica } from './stream-replica.js';

interface ReplicaConsumers {
  registered: boolean;
  /** The consumers have taken the last leadership change (started or released). */
  leading: boolean;
  /** Bumped by every leadership change: only the newest one's outcome sets `leading`. */
  changes: number;
  /** Entries queued before registration finished (applied in order after it). */
  queued: number;
  applies: Promise<void>;
  leadership: Promise<void>;
}

const EMPTY = new Uint8Array(0);
/**
 * A leadership change waits this long at most for the replica's earlier hooks (registration, queued entries,
 * the previous change) before it goes to the consumers anyway, so a stuck earlier step cannot keep a new
 * leader from serving (its stream's requests wait for `leads`). Twice the consumers' own start bound.
 */
export const LEADERSHIP_HOOK_WAIT_MS = 2 * LEADERSHIP_START_WAIT_MS;

export class ReplicaConsumerHooks {
  private readonly byGroup = new Map<string, ReplicaConsumers>();
  /** Replicas being closed: their last hooks (leadership lost on stop) must not register them again. */
  private readonly closing = new WeakSet<object>();

  constructor(
    private readonly consumers: ReplicatedStreamConsumers,
    private readonly log: JetStreamLogger,
  ) {}

  private of(replica: StreamReplica): ReplicaConsumers | null {
    if (this.closing.has(replica)) return null;
    const group = replica.assignment.group;
    let rc = this.byGroup.get(group);
    if (rc === undefined) {
      const registration = this.consumers
        .replicaAdded(replica.stream, {
          proposeConsumerEntry: (payload) => replica.proposeConsumerEntry(payload),
          clusterInfo: () => replica.clusterInfo(),
          stepDown: async () => {
            const err = replica.stepDown();
            if (err !== null) throw err;
          },
        })
        .catch((err: unknown) => this.failed(replica, err));
      const fresh: ReplicaConsumers = { registered: false, leading: false, changes: 0, queued: 0, applies: registration, leadership: registration };
      void registration.then(() => (fresh.registered = true));
      this.byGroup.set(group, fresh);
      rc = fresh;
    }
    return rc;
  }

  /** The replica is open: resolves once its consumers are registered. */
  async added(replica: StreamReplica): Promise<void> {
    await this.of(replica)?.applies;
  }

  applyConsumerEntry(replica: StreamReplica, payload: Buffer): void | Promise<void> {
    const rc = this.of(replica);
    if (rc === null) return;
    if (rc.registered && rc.queued === 0) {
      this.consumers.applyConsumerEntry(replica, payload);
      return;
    }
    rc.queued++;
    rc.applies = rc.applies
      .then(() => this.consumers.applyConsumerEntry(replica, payload))
      .catch((err: unknown) => this.failed(replica, err))
      .finally(() => rc.queued--);
    return rc.applies;
  }

  leadershipChanged(replica: StreamReplica, leading: boolean): void {
    const rc = this.of(replica);
    if (rc === null) return;
    const change = ++rc.changes;
    if (!leading) rc.leading = false;
    // In order after the earlier hooks, but bounded: one stuck on a commit must not hold this change forever.
    const before = Promise.all([rc.leadership, rc.applies]);
    rc.leadership = settledWithin(before, LEADERSHIP_HOOK_WAIT_MS)
      .then((inTime) => {
        if (!inTime) this.log.warn({ stream: replica.name, leading, waitedMs: LEADERSHIP_HOOK_WAIT_MS }, 'consumer leadership change went ahead of stuck earlier work');
        return this.consumers.leadershipChanged(replica, leading);
      })
      .catch((err: unknown) => this.failed(replica, err))
      .finally(() => {
        // An older change finishing late must not undo a newer one (true after a queued false, say).
        if (rc.changes === change) rc.leading = leading;
      });
  }

  /**
   * True once the consumers run for this replica's leadership: until then its stream's requests wait
   * unanswered (a consumer create would otherwise race the consumers' start), as between two leaders.
   */
  leads(replica: StreamReplica): boolean {
    return this.byGroup.get(replica.assignment.group)?.leading === true;
  }

  async snapshotConsumers(replica: StreamReplica): Promise<Uint8Array> {
    const rc = this.of(replica);
    if (rc === null) return EMPTY;
    await rc.applies;
    return this.consumers.consumerSnapshot(replica);
  }

  async restoreConsumers(replica: StreamReplica, data: Uint8Array): Promise<void> {
    const rc = this.of(replica);
    if (rc === null) return;
    await rc.applies;
    this.consumers.restoreConsumerSnapshot(replica, data);
  }

  /** The replica is closing: wait for its queued work, then forget it (later hooks are ignored). */
  async removing(replica: StreamReplica): Promise<void> {
    this.closing.add(replica);
    const group = replica.assignment.group;
    const rc = this.byGroup.get(group);
    if (rc === undefined) return;
    await rc.applies;
    await rc.leadership;
    if (this.byGroup.get(group) === rc) this.byGroup.delete(group);
  }

  private failed(replica: StreamReplica, err: unknown): void {
    this.log.error({ stream: replica.name, err: String(err) }, 'replicated consumer work failed');
  }
}
