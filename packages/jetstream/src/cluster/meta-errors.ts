// The API errors of clustered JetStream (reference jetstream-api.md §3, cluster-semantics.md §6-§7), as views
// onto the error table (api/js-error-table.ts).
import { jsError } from '../api/js-error-table.js';

export const ClusterErrors = {
  /** No meta leader (or no quorum): catalogue calls get this promptly. */
  unavailable: () => jsError('JSClusterNotAvailErr'),
  noSuitablePeers: () => jsError('JSClusterNoPeersErrF', { err: 'no suitable peers for placement' }),
  noReplacementPeer: () => jsError('JSClusterNoPeersErrF', { err: 'no replacement peer connected' }),
  peerNotMember: () => jsError('JSClusterPeerNotMemberErr'),
} as const;
