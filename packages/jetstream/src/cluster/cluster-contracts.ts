// The seams of clustered JetStream, fixed first so the meta group, the stream groups, consumer replication,
// monitoring and the server can be built side by side. Extend only additively.
import type { SharedPlacementLoad } from './meta-placement.js';
import type { NodeId, RaftLogStore, Transport } from '@flotilla/raft';
import type { StreamConfig } from '../stream/stream-config-types.js';

/** A cluster node as JetStream sees it. */
export interface ClusterPeer {
  name: string;
  raftNodeId: NodeId;
  serverId: string;
  /** true while a live link to it exists (always true for self) */
  active: boolean;
  /** its server_tags (lower case), as its link announced them */
  tags?: readonly string[];
}

/** What the server gives clustered JetStream: identity, the peer view, and the Raft plumbing. */
export interface ClusterEnvironment {
  clusterName: string;
  self: { name: string; raftNodeId: NodeId; serverId: string; tags?: readonly string[] };
  /** `jetstream { unique_tag }`: no two replicas of a stream on nodes sharing a value of this tag prefix */
  uniqueTag?: string;
  /** Every node known (linked now or configured/gossiped before), self included. */
  peers(): ClusterPeer[];
  /** Called whenever a peer link comes up or goes down. Returns an unsubscribe. */
  onPeersChanged(listener: () => void): () => void;
  /** Number of nodes expected in the cluster (self + distinct configured routes), for meta bootstrap. */
  expectedClusterSize: number;
  /** One durable multi-group Raft log for every group on this node (group commit). */
  raftStore: RaftLogStore;
  transport: Transport;
  /** Test-only behaviour, set by the server from its environment; absent in production. */
  testKnobs?: ClusterTestKnobs;
  /**
   * With accounts: the JetStream account this member serves. Its meta group (`_meta_.<account>`, so its own
   * catalogue) and its stream groups carry the name; absent without accounts (the one `_meta_` group).
   */
  account?: string;
  /** With accounts: every account's catalogue on this node, so placement balances the nodes over them all. */
  sharedLoad?: SharedPlacementLoad;
}

/** Test-only behaviour of the stream groups (the server maps FLOTILLA_TEST_* variables to these). */
export interface ClusterTestKnobs {
  /** Leaders ack a publish at proposal time: a deliberate bug the chaos checker must catch. */
  pubAckBeforeCommit?: boolean;
  /** Stream groups snapshot after this many applied entries (default 8192), so end-to-end tests compact. */
  streamSnapshotEveryEntries?: number;
}

/** The meta group's record of one stream: the catalogue entry every node holds. */
export interface StreamAssignment {
  config: StreamConfig;
  /** RFC 3339, as StreamInfo.created */
  created: string;
  /** Raft group id, unique per incarnation of the stream (a re-created stream gets a new group). */
  group: string;
  /** Voters, in placement order; the first is the preferred leader. */
  peers: NodeId[];
  /**
   * Which node may found the group (write its bootstrap entry into an empty log); absent: peers[0]. NONE once
   * the peers changed: a stream whose replicas moved (placement change, SERVER.REMOVE) must not be founded
   * afresh, empty, by a newcomer placed first.
   */
  founder?: NodeId;
  /** ACCOUNT.STREAM.MOVE: the peers before the move, so CANCEL_MOVE can go back while it is under way. */
  moveFrom?: NodeId[];
  /** The account whose stream it is (nats-server's sa.Client.Account); absent without accounts. */
  account?: string;
}

export type GroupRole = 'leader' | 'follower' | 'candidate';

/** One Raft group's health, for /jsz, /healthz, /metrics and the `cluster` blocks. */
export interface RaftGroupStatus {
  group: string;
  kind: 'meta' | 'stream';
  /** stream name for kind 'stream' */
  stream?: string;
  role: GroupRole;
  term: number;
  commit: number;
  applied: number;
  leader: NodeId;
  leaderChanges: number;
  /** The other voters as this node sees them (leader: from replication progress; follower: lag unknown = 0). */
  replicas: Array<{ raftNodeId: NodeId; name: string; current: boolean; offline: boolean; activeAgoMs: number; lag: number }>;
}

/** Observers for metrics; every member is optional so a node without /metrics pays nothing. */
export interface ClusterObserver {
  proposalCommitted?(group: string, seconds: number): void;
  leaderChanged?(group: string, leader: NodeId, term: number): void;
}

/**
 * One stream's replica on this node (its Raft group member + local store). Implemented by
 * `stream-replica.ts`; the meta layer opens one for every assignment that names this node.
 */
export interface StreamReplicaView {
  readonly name: string;
  readonly assignment: StreamAssignment;
  /** Leader AND caught up with every entry of earlier terms: it may serve and sequence publishes. */
  isLeader(): boolean;
  /** Current leader's raft id, or 0 (raft NONE) when the group has none. */
  leaderId(): NodeId;
  status(): RaftGroupStatus;
  /** The StreamInfo `cluster` block as nats-server reports it (leader omitted when leaderless). */
  clusterInfo(): object;
}

/** What monitoring and shutdown read from clustered JetStream (`JetStreamService.cluster`). */
export interface ClusteredJetStreamView {
  readonly clusterName: string;
  metaStatus(): RaftGroupStatus;
  /** Meta leader's name, or '' when leaderless. */
  metaLeaderName(): string;
  clusterSize(): number;
  streamAssignments(): StreamAssignment[];
  /** Replicas on this node. */
  replicas(): StreamReplicaView[];
  /** /healthz's JetStream check: null when healthy, else nats-server's error text; `metaOnly` skips the streams. */
  healthError(options?: { metaOnly?: boolean }): string | null;
  /** SIGTERM: transfer every leadership this node holds to a current peer, bounded by timeoutMs. */
  handOffLeaderships(timeoutMs: number): Promise<void>;
}
