// The stream replicas' side of this node's JetStream: a replica's stream is open here (it answers its own
// requests and its consumers run) from the moment its replica opens until it closes.
import type { OpenStreams } from '../catalogue/open-streams.js';
import type { ConsumerService } from '../consumer/consumer-service.js';
import type { ReplicaConsumerHooks } from './clustered-jetstream-consumers.js';
import type { StreamReplica } from './stream-replica.js';

export class ReplicaStreams {
  constructor(
    private readonly streams: OpenStreams,
    private readonly consumers: ConsumerService,
    private readonly replicaConsumers: ReplicaConsumerHooks,
  ) {}

  /** The replica leads and its consumers run: this node answers the stream's requests. */
  serves(replica: StreamReplica): boolean {
    return replica.isLeader() && this.replicaConsumers.leads(replica);
  }

  /** A replica opened: its stream serves local requests, its consumers start. */
  async added(replica: StreamReplica): Promise<void> {
    this.streams.set(replica.stream);
    await this.replicaConsumers.added(replica);
  }

  /** A replica's stream config changed (UPDATE): its running consumers are told, as on a single node. */
  configChanged(replica: StreamReplica): void {
    this.consumers.streamUpdated(replica.stream);
  }

  /** A replica is closing; `destroyed` when its stream leaves this node for good (consumers go too). */
  async removing(replica: StreamReplica, destroyed: boolean): Promise<void> {
    this.streams.deleteIfCurrent(replica.stream);
    await this.replicaConsumers.removing(replica);
    if (destroyed) await this.consumers.streamRemoved(replica.stream);
  }
}
