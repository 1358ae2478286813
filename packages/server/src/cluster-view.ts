// Clustered JetStream as monitoring, metrics and shutdown read it (`JetStreamService.cluster`, contracts in
// @flotilla/jetstream cluster/cluster-contracts.ts).
import type { ClusteredJetStreamView, JetStreamService, RaftGroupStatus } from '@flotilla/jetstream';

export type ClusterView = ClusteredJetStreamView;
export type GroupStatus = RaftGroupStatus;

/** `js.cluster` when JetStream runs clustered on this node, else null. */
export function clusterViewOf(js: JetStreamService | null): ClusterView | null {
  return js?.cluster ?? null;
}
