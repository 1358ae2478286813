// /varz as nats-server serves it (cluster-semantics §8), with the jetstream {config, stats, meta} section.
import { cpus } from 'node:os';
import { msToNs } from '@flotilla/store';
import type { FlotillaServer } from './server.js';
import { clusterViewOf } from './cluster-view.js';
import { jetStreamConfigJson, jetStreamStatsJson } from './jsz.js';
import { metaClusterJson } from './meta-cluster-json.js';
import { jetStreamRuns, jetStreamsByAccount } from './monitored-jetstreams.js';
import { formatUptime } from './uptime-format.js';
import { ADVERTISED_NATS_VERSION, FLOTILLA_VERSION, PROTOCOL_VERSION } from './version.js';

export function varz(s: FlotillaServer, httpPort: number, cpuPercent: number): Record<string, unknown> {
  const o = s.options;
  const now = Date.now();
  const stats = s.accounts.totals();
  const cluster = s.cluster;
  return {
    server_id: s.serverId,
    server_name: s.serverName,
    version: ADVERTISED_NATS_VERSION,
    flotilla_version: FLOTILLA_VERSION,
    proto: PROTOCOL_VERSION,
    go: `node${process.version}`,
    host: o.host,
    port: s.port,
    auth_required: s.auth.required || undefined,
    connect_urls: cluster?.connectUrls() ?? [],
    max_connections: o.maxConnections,
    ping_interval: msToNs(o.pingIntervalMs),
    ping_max: o.pingMax,
    http_host: o.httpHost,
    http_port: httpPort,
    max_control_line: o.maxControlLineBytes,
    max_payload: o.maxPayloadBytes,
    max_pending: o.maxPendingBytes,
    cluster:
      cluster !== null
        ? {
            name: cluster.node.clusterName,
            addr: o.cluster?.listen?.host ?? '',
            cluster_port: cluster.node.port,
            urls: o.cluster?.routes ?? [],
          }
        : {},
    write_deadline: msToNs(o.writeDeadlineMs),
    start: new Date(s.startMs).toISOString(),
    config_load_time: new Date(s.configLoadMs).toISOString(),
    now: new Date(now).toISOString(),
    uptime: formatUptime(now - s.startMs),
    mem: process.memoryUsage.rss(),
    cores: cpus().length,
    cpu: cpuPercent,
    connections: s.clients.size,
    total_connections: s.totalConnections,
    routes: cluster?.node.peers().length ?? 0,
    remotes: cluster?.node.peers().length ?? 0,
    in_msgs: stats.inMsgs,
    out_msgs: stats.outMsgs,
    in_bytes: stats.inBytes,
    out_bytes: stats.outBytes,
    slow_consumers: s.slowConsumers,
    subscriptions: s.accounts.subscriptionCount(),
    ...(s.accounts.system !== null ? { system_account: s.accounts.system.name } : {}),
    jetstream: jetStreamSection(s),
    websocket: websocketSection(s),
  };
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
