// /varz as nats-server serves it (cluster-semantics §8), with the jetstream {config, stats, meta} section.
import { cpus } from 'node:os';
import { msToNs } from '@flotilla/store';
import type { FlotillaServer } from './server.js';
import { clusterViewOf } from './cluster-view.js';
import { jetStreamConfigJson, jetStreamStatsJson } from './jsz.js';
import { metaClusterJson } from './meta-cluster-json.js';
import { jetStreamRuns, jetStreamsByAccount } from './monitored-jetstreams.js';
import { formatUptime } from './uptime-format.js';
import { configDigest } from './config-digest.js';
import { DEFAULT_TLS_TIMEOUT_MS } from './config/options.js';
import { ADVERTISED_NATS_VERSION, FLOTILLA_VERSION, PROTOCOL_VERSION } from './version.js';

/** nats-server's defaults when the config sets none: TLS handshakes 2 s; auth 2 s, or the TLS timeout + 1 s with TLS. */
const DEFAULT_TLS_TIMEOUT_SEC = DEFAULT_TLS_TIMEOUT_MS / 1000;
const DEFAULT_AUTH_TIMEOUT_SEC = 2;

/**
 * Keys in nats-server 2.14's order (monitor.go Varz); `omitempty` ones only when set. The ones a feature
 * Flotilla does not have would fill are their zero values (gateway, leaf, mqtt blocks empty; disk I/O wait
 * stats 0: no disk semaphore), see docs/monitoring.md.
 */
export function varz(s: FlotillaServer, httpPort: number, cpuPercent: number, httpReqStats: Record<string, number> = {}): Record<string, unknown> {
  const o = s.options;
  const now = Date.now();
  const stats = s.accounts.totals();
  const client = clientTraffic(s);
  const cluster = s.cluster;
  const tlsTimeoutSec = o.tls !== undefined ? o.tls.timeoutMs / 1000 : DEFAULT_TLS_TIMEOUT_SEC;
  const authTimeoutSec = o.authorization?.timeoutSec ?? (o.tls !== undefined ? tlsTimeoutSec + 1 : DEFAULT_AUTH_TIMEOUT_SEC);
  const connectUrls = cluster?.connectUrls() ?? [];
  const v: Record<string, unknown> = {
    server_id: s.serverId,
    server_name: s.serverName,
    version: ADVERTISED_NATS_VERSION,
    flotilla_version: FLOTILLA_VERSION,
    proto: PROTOCOL_VERSION,
    go: `node${process.version}`,
    host: o.host,
    port: s.port,
  };
  if (s.auth.required) v['auth_required'] = true;
  if (o.tls !== undefined) v['tls_required'] = true;
  if (o.tls?.verify === true || o.tls?.verifyAndMap === true) v['tls_verify'] = true;
  if (connectUrls.length > 0) v['connect_urls'] = connectUrls;
  const wsConnectUrls = cluster !== null && s.websocketListener !== null ? cluster.wsConnectUrls() : [];
  if (wsConnectUrls.length > 0) v['ws_connect_urls'] = wsConnectUrls;
  v['max_connections'] = o.maxConnections;
  if (o.maxSubscriptions > 0) v['max_subscriptions'] = o.maxSubscriptions;
  Object.assign(v, {
    ping_interval: msToNs(o.pingIntervalMs),
    ping_max: o.pingMax,
    http_host: o.httpHost,
    http_port: httpPort,
    http_base_path: '',
    https_port: 0,
    auth_timeout: authTimeoutSec,
    max_control_line: o.maxControlLineBytes,
    max_payload: o.maxPayloadBytes,
    max_pending: o.maxPendingBytes,
    cluster:
      cluster !== null
        ? {
            name: cluster.node.clusterName,
            addr: o.cluster?.listen?.host ?? '',
            cluster_port: cluster.node.port,
            auth_timeout: (o.cluster?.authorization?.timeoutMs ?? DEFAULT_AUTH_TIMEOUT_SEC * 1000) / 1000,
            urls: o.cluster?.routes ?? [],
            tls_timeout: DEFAULT_TLS_TIMEOUT_SEC,
          }
        : {},
    gateway: {},
    leaf: {},
    mqtt: {},
    websocket: websocketSection(s),
    jetstream: jetStreamSection(s),
    tls_timeout: tlsTimeoutSec,
    write_deadline: msToNs(o.writeDeadlineMs),
    start: new Date(s.startMs).toISOString(),
    now: new Date(now).toISOString(),
    uptime: formatUptime(now - s.startMs),
    mem: process.memoryUsage.rss(),
    cores: cpus().length,
    gomaxprocs: cpus().length,
    cpu: cpuPercent,
    connections: s.clients.size,
    total_connections: s.totalConnections,
    routes: cluster?.node.peers().length ?? 0,
    remotes: cluster?.node.peers().length ?? 0,
    leafnodes: 0,
    in_msgs: stats.inMsgs,
    in_bytes: stats.inBytes,
    in_client_msgs: client.inMsgs,
    in_client_bytes: client.inBytes,
    out_msgs: stats.outMsgs,
    out_bytes: stats.outBytes,
    out_client_msgs: client.outMsgs,
    out_client_bytes: client.outBytes,
    slow_consumers: s.slowConsumers,
    stale_connections: s.staleConnections,
    stalled_clients: 0,
    subscriptions: s.accounts.subscriptionCount(),
    http_req_stats: httpReqStats,
    config_load_time: new Date(s.configLoadMs).toISOString(),
    config_digest: configDigest(o.configFile, s.configLoadMs),
  });
  if (s.accounts.system !== null) v['system_account'] = s.accounts.system.name;
  // Every slow consumer Flotilla counts is a client's (routes are gRPC links with their own flow control).
  v['slow_consumer_stats'] = { clients: s.slowConsumers, routes: 0, gateways: 0, leafs: 0 };
  v['stale_connection_stats'] = { clients: s.staleConnections, routes: 0, gateways: 0, leafs: 0 };
  v['disk_io_wait_stats'] = { waiters: 0, waits: 0, wait_time: 0, max_wait_time: 0 };
  return v;
}

/** What client connections (not routes, not internal) sent and received: the closed ones' plus the open ones'. */
function clientTraffic(s: FlotillaServer): { inMsgs: number; outMsgs: number; inBytes: number; outBytes: number } {
  const t = { ...s.closedClientTraffic };
  for (const c of s.clients.values()) {
    t.inMsgs += c.inMsgs;
    t.outMsgs += c.outMsgs;
    t.inBytes += c.inBytes;
    t.outBytes += c.outBytes;
  }
  return t;
}

/** /varz `websocket`, nats-server's WebsocketOptsVarz (empty fields left out, as its omitempty). */
function websocketSection(s: FlotillaServer): Record<string, unknown> {
  const wo = s.options.websocket;
  const listener = s.websocketListener;
  if (wo === undefined || listener === null) return {};
  const v: Record<string, unknown> = {};
  if (wo.host !== '') v['host'] = wo.host;
  v['port'] = listener.port;
  if (wo.advertise !== undefined && wo.advertise !== '') v['advertise'] = wo.advertise;
  if (wo.noAuthUser !== undefined && wo.noAuthUser !== '') v['no_auth_user'] = wo.noAuthUser;
  if (wo.handshakeTimeoutMs > 0) v['handshake_timeout'] = msToNs(wo.handshakeTimeoutMs);
  if (wo.authorization?.timeoutSec !== undefined && wo.authorization.timeoutSec > 0) v['auth_timeout'] = wo.authorization.timeoutSec;
  if (wo.noTls) v['no_tls'] = true;
  if (wo.sameOrigin) v['same_origin'] = true;
  if (wo.allowedOrigins.length > 0) v['allowed_origins'] = [...wo.allowedOrigins];
  if (wo.compression) v['compression'] = true;
  return v;
}

/** /varz `jetstream` ({} without JetStream), stats over every JetStream account; the STATSZ message carries it too. */
export function jetStreamSection(s: FlotillaServer): Record<string, unknown> {
  if (!jetStreamRuns(s)) return {};
  const view = clusterViewOf(s.jetstream);
  return {
    config: jetStreamConfigJson(s),
    stats: jetStreamStatsJson(jetStreamsByAccount(s)),
    ...(view !== null ? { meta: metaClusterJson(view, s.serverName) } : {}),
  };
}
