// The API errors of clustered JetStream (reference jetstream-api.md §3, cluster-semantics.md §6-§7).
import { ApiError } from '../api/api-error.js';

export const ClusterErrors = {
  /** No meta leader (or no quorum): catalogue calls get this promptly. */
  unavailable: () => new ApiError(503, 10008, 'JetStream system temporarily unavailable'),
  noSuitablePeers: () => new ApiError(400, 10005, 'no suitable peers for placement'),
  noReplacementPeer: () => new ApiError(400, 10005, 'no replacement peer connected'),
  peerNotMember: () => new ApiError(400, 10040, 'peer not a member'),
} as const;
