// Serves a matched `$JS.API` endpoint from this node's own streams and consumers (a single node: every
// request; a cluster: those this node answers, see cluster/clustered-jetstream.ts). Every endpoint in the
// table gets an answer here, except where nats-server gives none either (see api-endpoints.ts).
import type { BusMessage } from '../message-bus.js';
import type { ApiError } from './api-error.js';
import type { ApiEndpoint, LocalApi } from './api-endpoints.js';
import { JsErrors } from './api-errors.js';
import { requiredApiLevelError } from './api-level.js';

export interface LocalDispatch extends LocalApi {
  /** Clustered JetStream: cluster-only endpoints are served, not refused with 10010. */
  readonly clustered: boolean;
  /** The consumer endpoints (their stream's leader in a cluster); false = no answer from this node. */
  readonly consumers: { handleApi(t: readonly string[], msg: BusMessage): boolean };
}

/** False when this node does not answer (no such stream here, not its leader, …): nats-server's silence. */
export function serveLocally(endpoint: ApiEndpoint, api: LocalDispatch, t: readonly string[], msg: BusMessage): boolean {
  if (endpoint.clusterOnly === true && !api.clustered) return refuse(endpoint, api, msg, JsErrors.clusteringRequired());
  if (!endpoint.implemented) return refuse(endpoint, api, msg, JsErrors.notImplemented(endpoint.operation));
  // 2.14 refuses an API request that needs a newer API level (pulls and direct gets are not API handlers there).
  if (endpoint.outsideApiStats !== true) {
    const levelError = requiredApiLevelError(msg.header);
    if (levelError !== null) return refuse(endpoint, api, msg, levelError);
  }
  if (endpoint.scope === 'consumer') return api.consumers.handleApi(t, msg);
  return endpoint.serve?.(api, t, msg) ?? false;
}

function refuse(endpoint: ApiEndpoint, api: LocalDispatch, msg: BusMessage, error: ApiError): true {
  void api.streams.run(endpoint.responseType, msg.reply, () => {
    throw error;
  });
  return true;
}
