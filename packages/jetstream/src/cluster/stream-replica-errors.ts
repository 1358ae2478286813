// Errors a replicated stream answers with, by the names its call sites use (views onto api/js-error-table.ts).
import type { ApiError } from '../api/api-error.js';
import { ClusterErrors } from './meta-errors.js';

/** nats-server's 503/10008: the group cannot take the request now (leader change); clients retry. */
export const unavailableError = (): ApiError => ClusterErrors.unavailable();

/** A leader step-down with no other member to take over. */
export const noReplacementPeerError = (): ApiError => ClusterErrors.noReplacementPeer();
