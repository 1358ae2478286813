// What this node gives each of its stream replicas (StreamReplicaHost): the stream services every stream
// gets, the cluster environment with the catalogue's nodes, the metrics observer, and the consumers' hooks.
import type { JetStreamLogger, MessageBus } from '../message-bus.js';
import type { Stream, StreamHost } from '../stream/stream.js';
import type { ClusterEnvironment, ClusterObserver, ClusterPeer } from './cluster-contracts.js';
import type { ReplicaConsumerHooks } from './clustered-jetstream-consumers.js';
import type { StreamReplica, StreamReplicaHost } from './stream-replica.js';

/** The node's services a replica reads at use: its streams' host and the metrics observer the server sets. */
export interface ReplicaNode extends StreamHost {
  readonly clusterObserver: ClusterObserver | undefined;
  /** Publishes an advisory (counted by the metrics hook) when someone listens. */
  advisory?(subject: string, body: object): void;
  /** Names of the consumers this node holds for the stream (replicated, running or not). */
  storedConsumerNames?(stream: string): string[];
}

export interface KnownPeers {
  /** Every node known: linked now, seen since start, or named in the catalogue. */
  knownPeers(): ClusterPeer[];
}

/**
 * The cluster environment as replicas see it: replicas name their peers from the known nodes, so nodes down
 * since this node started are known from the catalogue.
 */
export class ReplicaEnvironment implements ClusterEnvironment {
  constructor(
    private readonly env: ClusterEnvironment,
    private readonly known: KnownPeers,
  ) {}

  get clusterName(): string {
    return this.env.clusterName;
  }

  get self(): ClusterEnvironment['self'] {
    return this.env.self;
  }

  get expectedClusterSize(): number {
    return this.env.expectedClusterSize;
  }

  get raftStore(): ClusterEnvironment['raftStore'] {
    return this.env.raftStore;
  }

  get transport(): ClusterEnvironment['transport'] {
    return this.env.transport;
  }

  get testKnobs(): ClusterEnvironment['testKnobs'] {
    return this.env.testKnobs;
  }

  peers(): ClusterPeer[] {
    return this.known.knownPeers();
  }

  onPeersChanged(listener: () => void): () => void {
    return this.env.onPeersChanged(listener);
  }
}

export class NodeStreamReplicaHost implements StreamReplicaHost {
  constructor(
    private readonly node: ReplicaNode,
    readonly env: ClusterEnvironment,
    private readonly consumers: ReplicaConsumerHooks,
  ) {}

  get bus(): MessageBus {
    return this.node.bus;
  }

  get log(): JetStreamLogger {
    return this.node.log;
  }

  get domain(): string | undefined {
    return this.node.domain;
  }

  get observer(): ClusterObserver | undefined {
    return this.node.clusterObserver;
  }

  streamPurged(stream: Stream): void {
    this.node.streamPurged(stream);
  }

  storageExceeded(kind: 'file' | 'memory'): boolean {
    return this.node.storageExceeded(kind);
  }

  accountLimitExceeded(kind: 'file' | 'memory', subject: string, headerBytes: number, dataBytes: number, replicas: number): boolean {
    return this.node.accountLimitExceeded?.(kind, subject, headerBytes, dataBytes, replicas) ?? false;
  }

  hasConsumerInterest(stream: Stream, subject: string): boolean {
    return this.node.hasConsumerInterest(stream, subject);
  }

  leadershipChanged(replica: StreamReplica, leading: boolean): void {
    this.consumers.leadershipChanged(replica, leading);
  }

  advisory(subject: string, body: object): void {
    if (this.node.advisory !== undefined) this.node.advisory(subject, body);
    else if (this.bus.hasInterest(subject)) this.bus.publish(subject, null, null, Buffer.from(JSON.stringify(body)));
  }

  storedConsumerNames(stream: string): string[] {
    return this.node.storedConsumerNames?.(stream) ?? [];
  }

  applyConsumerEntry(replica: StreamReplica, payload: Buffer): void | Promise<void> {
    return this.consumers.applyConsumerEntry(replica, payload);
  }

  snapshotConsumers(replica: StreamReplica): Promise<Uint8Array> {
    return this.consumers.snapshotConsumers(replica);
  }

  restoreConsumers(replica: StreamReplica, data: Uint8Array): Promise<void> {
    return this.consumers.restoreConsumers(replica, data);
  }
}
