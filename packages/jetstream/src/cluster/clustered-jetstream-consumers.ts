// The stream replicas' consumer hooks on this node, in the order the ConsumerService needs them: a replica
// registers first (replicaAdded loads what was stored), then its committed consumer entries apply in log
// order, and leadership changes follow the entries applied before them. A replica replays its Raft log while
// it opens, before the meta layer sees it, so registration happens at the first hook.
// Consumer snapshots wait only for registration and queued entries, never for leadership work (which may
// itself wait for a commit of the very group that is taking the snapshot).
import type { ConsumerService } from '../consumer/consumer-service.js';
import type { JetStreamLogger } from '../message-bus.js';
import type { StreamReplica } from './stream-replica.js';

interface ReplicaConsumers {
  registered: boolean;
  /** The ConsumerService has taken the last leadership change (consumers started or released). */
  leading: boolean;
  /** Entries queued before registration finished (applied in order after it). */
  queued: number;
  applies: Promise<void>;
  leadership: Promise<void>;
}

const EMPTY = new Uint8Array(0);

export class ReplicaConsumerHooks {
  private readonly byGroup = new Map<string, ReplicaConsumers>();
  /** Replicas being closed: their last hooks (leadership lost on stop) must not register them again. */
  private readonly closing = new WeakSet<object>();

  constructor(
    private readonly consumers: ConsumerService,
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
      const fresh: ReplicaConsumers = { registered: false, leading: false, queued: 0, applies: registration, leadership: registration };
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
    const applies = rc.applies;
    if (!leading) rc.leading = false;
    rc.leadership = rc.leadership
      .then(() => applies)
      .then(() => this.consumers.leadershipChanged(replica, leading))
      .catch((err: unknown) => this.failed(replica, err))
      .finally(() => (rc.leading = leading));
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
