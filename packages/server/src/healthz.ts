// /healthz as nats-server answers it: {"status":"ok"} or 503 with {"status":"unavailable","error":…}.
// Healthy means: JetStream (when enabled) is running and, when clustered, this node has a meta leader,
// is current with it, and every stream group it belongs to is current (the clustered view decides), for
// every JetStream account's view.
import type { FlotillaServer } from './server.js';
import { clusterViewsOf, jetStreamsByAccount } from './monitored-jetstreams.js';

export interface HealthAnswer {
  httpStatus: 200 | 503;
  body: { status: 'ok' } | { status: 'unavailable' | 'error'; error: string };
}

export function healthz(server: FlotillaServer, params: URLSearchParams, lameDuck: boolean): HealthAnswer {
  const jsEnabledOnly = isTrue(params.get('js-enabled-only')) || isTrue(params.get('js-enabled'));
  const jsServerOnly = isTrue(params.get('js-server-only'));
  const unavailable = (error: string): HealthAnswer => ({ httpStatus: 503, body: { status: 'unavailable', error } });
  // A node in lame-duck mode is going away: load balancers and Kubernetes should stop sending to it.
  if (lameDuck) return unavailable('server is in lame duck mode');
  const jsExpected = server.options.jetstream.enabled;
  if (!jsExpected) {
    return jsEnabledOnly ? unavailable('JetStream not enabled') : { httpStatus: 200, body: { status: 'ok' } };
  }
  // With accounts, JetStream runs even when no account has it (server.jetstream is then null).
  if (server.jetstream === null && server.accountJetStreams === null) return unavailable('JetStream not enabled');
  if (jsEnabledOnly) return { httpStatus: 200, body: { status: 'ok' } };
  for (const view of clusterViewsOf(jetStreamsByAccount(server))) {
    if (view.metaLeaderName() === '') return unavailable('JetStream has not established contact with a meta leader');
    // js-server-only skips the per-stream and per-consumer checks; the meta ones still count.
    const error = view.healthError({ metaOnly: jsServerOnly });
    if (error !== null) return unavailable(error);
  }
  return { httpStatus: 200, body: { status: 'ok' } };
}

export function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}
