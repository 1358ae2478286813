// The replicated streams' consumers on this node: what the stream groups' hooks (clustered-jetstream-
// consumers.ts) call. A replica registers its stream with the ConsumerService under a placement in the
// stream's Raft group; its committed consumer entries, snapshots and leadership changes go to that placement.
import type { ConsumerService } from '../consumer/consumer-service.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import { AppliedConsumers } from './consumer-replication-state.js';
import { ReplicatedConsumerPlacement } from './consumer-replication-placement.js';
import type { ConsumerReplicationGroup } from './consumer-replication-storage.js';

/**
 * What identifies a stream replica in the stream group's hooks (StreamReplica has both). `stream`, when
 * given, must be the registered one: a stream deleted and created again under the same name is another
 * replica, and the old one's late hooks must not touch the new one's consumers.
 */
export interface ReplicaRef {
  readonly name: string;
  readonly stream?: StreamHandle;
}

export class ReplicatedStreamConsumers {
  constructor(readonly service: ConsumerService) {}

  /**
   * `stream` is replicated through `group` on this node (call it before the group applies entries or reports
   * leadership). Loads what this node stored before; consumers start only with leadershipChanged(true).
   */
  async replicaAdded(stream: StreamHandle, group: ConsumerReplicationGroup): Promise<void> {
    if (this.placementOf({ name: stream.name, stream }) !== undefined) return;
    const placement = new ReplicatedConsumerPlacement(group, stream, this.service.ctx, () => this.service.clock.nowMs());
    await this.service.streamAdded(stream, placement);
  }

  /** A consumer entry committed in the stream's group, applied on every replica (leader too). */
  applyConsumerEntry(replica: ReplicaRef, payload: Uint8Array): void {
    const placement = this.placementOf(replica);
    const log = this.service.ctx.log;
    if (placement === undefined) {
      log.warn({ stream: replica.name }, 'consumer entry for a stream without a replica here: ignored');
      return;
    }
    if (!placement.applyEntry(payload)) log.warn({ stream: replica.name, bytes: payload.length }, 'malformed consumer entry ignored');
  }

  /** Consumer state for the stream group's snapshot. */
  consumerSnapshot(replica: ReplicaRef): Buffer {
    return this.placementOf(replica)?.snapshot() ?? new AppliedConsumers(null, () => undefined).snapshot();
  }

  /** A snapshot installed on this (follower) replica replaces its consumer state. */
  restoreConsumerSnapshot(replica: ReplicaRef, data: Uint8Array): void {
    this.placementOf(replica)?.restore(data);
  }

  /** This node became (true) or stopped being (false) the stream's leader. */
  async leadershipChanged(replica: ReplicaRef, leading: boolean): Promise<void> {
    await this.placementOf(replica)?.leadershipChanged(leading);
  }

  /** The placement registered for `replica`'s stream; undefined when another replica (incarnation) is registered. */
  private placementOf(replica: ReplicaRef): ReplicatedConsumerPlacement | undefined {
    const placement = this.service.placementOf(replica.name);
    if (!(placement instanceof ReplicatedConsumerPlacement)) return undefined;
    if (replica.stream !== undefined && replica.stream !== placement.stream) return undefined;
    return placement;
  }
}
