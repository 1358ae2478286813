// Monitoring HTTP endpoints with nats-server's JSON shapes: /healthz, /varz, /connz.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import type { Registry } from 'prom-client';
import type { FlotillaServer } from './server.js';
import { createMetricsRegistry } from './metrics.js';
import type { ClientConnection } from './client-connection.js';
import { ADVERTISED_NATS_VERSION, FLOTILLA_VERSION, PROTOCOL_VERSION } from './version.js';

const CONNZ_DEFAULT_LIMIT = 1024;

export class MonitoringServer {
  private readonly http: Server;
  private boundPort = 0;
  private lastCpu = process.cpuUsage();
  private lastCpuAtMs = Date.now();
  private cpuPercent = 0;
  private readonly metrics: Registry;

  constructor(private readonly server: FlotillaServer) {
    this.http = createServer((req, res) => this.handle(req, res));
    this.metrics = createMetricsRegistry(server);
  }

  get port(): number {
    return this.boundPort;
  }

  async start(host: string, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen({ host, port }, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.http.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: unknown;
    switch (url.pathname.replace(/\/+$/, '') || '/') {
      case '/':
        body = { endpoints: ['/healthz', '/varz', '/connz', '/routez', '/metrics'] };
        break;
      case '/routez':
        body = this.server.cluster?.routez() ?? {
          server_id: this.server.serverId,
          server_name: this.server.serverName,
          num_routes: 0,
          routes: [],
        };
        break;
      case '/metrics':
        void this.metrics.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': this.metrics.contentType });
            res.end(text);
          },
          (err: Error) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(`metrics failed: ${err.message}\n`);
          },
        );
        return;
      case '/healthz':
        body = { status: 'ok' };
        break;
      case '/varz':
        body = this.varz();
        break;
      case '/connz':
        body = this.connz(url.searchParams);
        break;
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found\n');
        return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body, null, 2));
  }

  varz(): Record<string, unknown> {
    const s = this.server;
    const o = s.options;
    const now = Date.now();
    const stats = s.router.stats;
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
      max_connections: o.maxConnections,
      ping_interval: o.pingIntervalMs * 1_000_000,
      ping_max: o.pingMax,
      http_host: o.httpHost,
      http_port: this.boundPort,
      max_control_line: o.maxControlLineBytes,
      max_payload: o.maxPayloadBytes,
      max_pending: o.maxPendingBytes,
      write_deadline: o.writeDeadlineMs * 1_000_000,
      start: new Date(s.startMs).toISOString(),
      now: new Date(now).toISOString(),
      uptime: formatUptime(now - s.startMs),
      mem: process.memoryUsage.rss(),
      cores: cpus().length,
      cpu: this.sampleCpu(now),
      connections: s.clients.size,
      total_connections: s.totalConnections,
      routes: s.cluster?.node.peers().length ?? 0,
      remotes: s.cluster?.node.peers().length ?? 0,
      in_msgs: stats.inMsgs,
      out_msgs: stats.outMsgs,
      in_bytes: stats.inBytes,
      out_bytes: stats.outBytes,
      slow_consumers: s.slowConsumers,
      subscriptions: s.router.sublist.count,
      jetstream: { config: o.jetstream.enabled ? { store_dir: o.jetstream.storeDir } : undefined },
    };
  }

  connz(params: URLSearchParams): Record<string, unknown> {
    const s = this.server;
    const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
    const limit = Math.max(1, Number(params.get('limit') ?? CONNZ_DEFAULT_LIMIT) || CONNZ_DEFAULT_LIMIT);
    const withSubs = params.get('subs') === '1' || params.get('subs') === 'true' || params.get('subs') === 'detail';
    const now = Date.now();
    if (params.get('state') === 'closed') {
      const closed = s.closedClients.slice(offset, offset + limit).map((c) => ({
        cid: c.cid,
        kind: 'Client',
        type: 'nats',
        ip: c.ip.replace(/^::ffff:/, ''),
        port: c.port,
        start: new Date(c.startMs).toISOString(),
        stop: new Date(c.stopMs).toISOString(),
        reason: c.reason,
        name: c.name || undefined,
        in_msgs: c.inMsgs,
        out_msgs: c.outMsgs,
        in_bytes: c.inBytes,
        out_bytes: c.outBytes,
      }));
      return { server_id: s.serverId, now: new Date(now).toISOString(), num_connections: closed.length, total: s.closedClients.length, offset, limit, connections: closed };
    }
    const all = [...s.clients.values()].sort((a, b) => a.cid - b.cid);
    const page = all.slice(offset, offset + limit).map((c) => connInfo(c, now, withSubs));
    return {
      server_id: s.serverId,
      now: new Date(now).toISOString(),
      num_connections: page.length,
      total: all.length,
      offset,
      limit,
      connections: page,
    };
  }

  private sampleCpu(nowMs: number): number {
    const elapsedMs = nowMs - this.lastCpuAtMs;
    if (elapsedMs >= 250) {
      const used = process.cpuUsage(this.lastCpu);
      this.cpuPercent = Math.round(((used.user + used.system) / 1000 / elapsedMs) * 1000) / 10;
      this.lastCpu = process.cpuUsage();
      this.lastCpuAtMs = nowMs;
    }
    return this.cpuPercent;
  }
}

function connInfo(c: ClientConnection, nowMs: number, withSubs: boolean): Record<string, unknown> {
  const info: Record<string, unknown> = {
    cid: c.cid,
    kind: 'Client',
    type: 'nats',
    ip: c.remoteIp.replace(/^::ffff:/, ''),
    port: c.remotePort,
    start: new Date(c.startMs).toISOString(),
    last_activity: new Date(c.lastActivityMs).toISOString(),
    uptime: formatUptime(nowMs - c.startMs),
    idle: formatUptime(nowMs - c.lastActivityMs),
    pending_bytes: c.pendingBytes,
    in_msgs: c.inMsgs,
    out_msgs: c.outMsgs,
    in_bytes: c.inBytes,
    out_bytes: c.outBytes,
    subscriptions: c.subs.size,
    name: c.name || undefined,
    lang: c.lang || undefined,
    version: c.version || undefined,
    authorized_user: c.user || undefined,
  };
  if (withSubs) info['subscriptions_list'] = [...c.subs.values()].map((sub) => sub.subject);
  return info;
}

/** nats-server's uptime format: 1d2h3m4s, leading zero units omitted. */
export function formatUptime(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${d}d${h}h${m}m${s}s`;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
