// The parts of clustered JetStream (`JetStreamService.cluster`, see @flotilla/jetstream's
// cluster/cluster-contracts.ts) that monitoring, metrics and shutdown read, typed structurally here so the
// server does not depend on how the jetstream package exports them.
import type { JetStreamService } from '@flotilla/jetstream';

export type GroupRoleName = 'leader' | 'follower' | 'candidate';

export interface GroupReplicaStatus {
  raftNodeId: number;
  name: string;
  current: boolean;
  offline: boolean;
  activeAgoMs: number;
  lag: number;
}

export interface GroupStatus {
  group: string;
  kind: 'meta' | 'stream';
  stream?: string;
  role: GroupRoleName;
  term: number;
  commit: number;
  applied: number;
  leader: number;
  leaderChanges: number;
  replicas: GroupReplicaStatus[];
}

export interface ClusterObserverHooks {
  proposalCommitted?(group: string, seconds: number): void;
  leaderChanged?(group: string, leader: number, term: number): void;
}

export interface ReplicaLike {
  readonly name: string;
  isLeader(): boolean;
  status(): GroupStatus;
  clusterInfo(): object;
}

export interface ClusterView {
  readonly clusterName: string;
  metaStatus(): GroupStatus;
  metaLeaderName(): string;
  clusterSize(): number;
  replicas(): ReplicaLike[];
  healthError(): string | null;
  handOffLeaderships(timeoutMs: number): Promise<void>;
  /** Optional: registers metrics observers; returns the remover. */
  addObserver?(observer: ClusterObserverHooks): () => void;
}

/** `js.cluster` when JetStream runs clustered on this node, else null. */
export function clusterViewOf(js: JetStreamService | null): ClusterView | null {
  if (js === null) return null;
  return (js as unknown as { cluster?: ClusterView | null }).cluster ?? null;
}
