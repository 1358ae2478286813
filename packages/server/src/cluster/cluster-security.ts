// The cluster options' credentials and certificates turned into what ClusterNode needs: the node's shared
// secret, per-route secrets from route URLs, the time an inbound route has to authenticate, and the mutual-TLS
// material (read once at start).
import { loadClusterTls, secretOf, type ClusterTlsMaterial } from '@flotilla/cluster';
import type { ClusterOptions } from '../config/options.js';

export interface ClusterSecurity {
  /** '' = no secret required */
  secret: string;
  routeSecrets: Map<string, string>;
  /** an inbound link that has not authenticated within this is closed (only while a secret is required) */
  authTimeoutMs: number;
  tls?: ClusterTlsMaterial;
}

/** nats-server's AUTH_TIMEOUT, the default without TLS; with TLS its default is the TLS timeout plus 1 s. */
const DEFAULT_AUTH_TIMEOUT_MS = 2000;

export function clusterSecurityOf(c: ClusterOptions): ClusterSecurity {
  const routeSecrets = new Map<string, string>();
  for (const [route, creds] of Object.entries(c.routeCredentials ?? {})) {
    const s = secretOf(creds);
    if (s !== '') routeSecrets.set(route, s);
  }
  // Without an authorization block, the credentials the routes carry are the cluster's secret, so inbound
  // links and gossiped dials use the same one.
  let secret = secretOf(c.authorization);
  if (secret === '') secret = routeSecrets.values().next().value ?? '';
  const configured = c.authorization?.timeoutMs;
  const authTimeoutMs = configured !== undefined && configured > 0 ? configured : c.tls ? c.tls.timeoutMs + 1000 : DEFAULT_AUTH_TIMEOUT_MS;
  return {
    secret,
    routeSecrets,
    authTimeoutMs,
    ...(c.tls ? { tls: loadClusterTls({ certFile: c.tls.certFile, keyFile: c.tls.keyFile, caFile: c.tls.caFile }) } : {}),
  };
}
