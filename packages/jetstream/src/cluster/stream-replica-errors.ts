// Errors a replicated stream answers with that the single-node table (api/api-errors.ts) does not have.
import { ApiError } from '../api/api-error.js';

/** nats-server's 503/10008: the group cannot take the request now (leader change); clients retry. */
export const unavailableError = (): ApiError => new ApiError(503, 10008, 'JetStream system temporarily unavailable');

/** A leader step-down with no other member to take over. */
export const noReplacementPeerError = (): ApiError => new ApiError(400, 10005, 'no replacement peer connected');
