// Which node answers a `$JS.API` request in a cluster (cluster-semantics §2): catalogue calls go to the meta
// leader, calls about one stream (its consumers included) to that stream's leader. The endpoint table
// (api/api-endpoints.ts) says which an endpoint is; this turns it into the route the router decides on.
import { endpointOf, type ApiEndpoint, type StreamOp } from '../api/api-endpoints.js';

export type { StreamOp };

export type ApiRoute =
  /** INFO, STREAM.CREATE/UPDATE/DELETE/NAMES/LIST/PEER.REMOVE, META.*, and every endpoint not implemented */
  | { kind: 'catalogue'; type: string }
  /** STREAM.INFO/PURGE/MSG.*, STREAM.LEADER.STEPDOWN, CONSUMER.*, DIRECT.GET */
  | { kind: 'stream'; stream: string; type: string; op: StreamOp }
  /** not an endpoint: every node stays silent */
  | { kind: 'none' };

const NONE: ApiRoute = { kind: 'none' };

/** `t`: the subject's tokens after `$JS.API` (or `$JS.<domain>.API`). */
export function routeOf(t: readonly string[]): ApiRoute {
  return routeOfEndpoint(endpointOf(t), t);
}

export function routeOfEndpoint(endpoint: ApiEndpoint | undefined, t: readonly string[]): ApiRoute {
  if (endpoint === undefined) return NONE;
  // An endpoint not implemented is refused by the meta leader: one node answers, whatever its scope.
  if (endpoint.scope === 'catalogue' || !endpoint.implemented) return { kind: 'catalogue', type: endpoint.responseType };
  return { kind: 'stream', stream: t[endpoint.streamToken!]!, type: endpoint.responseType, op: endpoint.streamOp ?? 'other' };
}
