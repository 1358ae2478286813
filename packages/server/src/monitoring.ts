// Monitoring HTTP endpoints with nats-server's JSON shapes: /healthz, /varz, /connz, /subsz, /accountz,
// /accstatz, /jsz, /routez, /leafz, /gatewayz, /raftz, and Prometheus /metrics.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlotillaServer } from './server.js';
import { accountStatz, accountz, AccountNotFoundError } from './accountz.js';
import { connz, ConnzError } from './connz.js';
import { subsz, subszOptionsOf, SubszError } from './subsz.js';
import { CpuPercent } from './cpu-percent.js';
import { healthz } from './healthz.js';
import { jsz } from './jsz.js';
import { gatewayz, leafz } from './leafz-gatewayz.js';
import { queryBool, QueryParamError } from './query-bool.js';
import { raftzHttp, RaftzNotFound } from './raftz.js';
import { inLameDuck } from './lame-duck.js';
import { createMetricsRegistry, type MetricsRegistry } from './metrics.js';
import { routez } from './peers-view.js';
import { varz } from './varz.js';

export { formatUptime } from './uptime-format.js';

const ENDPOINTS = ['/healthz', '/varz', '/connz', '/subsz', '/accountz', '/accstatz', '/jsz', '/routez', '/leafz', '/gatewayz', '/raftz', '/ipqueuesz', '/metrics'];
/** The endpoints nats-server counts in /varz http_req_stats (its handlers that bump the map), `/subscriptionsz` as `/subsz`. */
const COUNTED = new Set(['/', '/varz', '/connz', '/routez', '/gatewayz', '/leafz', '/subsz', '/accountz', '/accstatz', '/jsz', '/healthz']);

export class MonitoringServer {
  private readonly http: Server;
  private boundPort = 0;
  private readonly cpu = new CpuPercent();
  private metrics: MetricsRegistry | null = null;
  /** /varz http_req_stats: requests per endpoint path (the known ones only, so the map stays bounded). */
  private readonly httpReqStats: Record<string, number> = {};

  constructor(private readonly server: FlotillaServer) {
    this.http = createServer((req, res) => this.handle(req, res));
  }

  get port(): number {
    return this.boundPort;
  }

  async start(host: string, port: number): Promise<void> {
    this.metrics = await createMetricsRegistry(this.server);
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
    this.metrics?.stop();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body, null, 2));
    };
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const counted = path === '/subscriptionsz' ? '/subsz' : path;
    if (COUNTED.has(counted)) this.httpReqStats[counted] = (this.httpReqStats[counted] ?? 0) + 1;
    try {
      switch (path) {
        case '/':
          return json(200, { endpoints: ENDPOINTS });
        case '/routez': {
          // nats-server's decodeSubs: "detail", else a boolean
          const detail = url.searchParams.get('subs')?.toLowerCase() === 'detail';
          const subs = detail ? 'detail' : queryBool(url.searchParams, 'subs') ? 'list' : 'none';
          return json(200, routez(this.server, subs));
        }
        case '/metrics':
          return this.serveMetrics(res);
        case '/leafz':
          return json(200, leafz(this.server, queryBool(url.searchParams, 'subs') === true));
        case '/gatewayz':
          if (url.searchParams.get('subs')?.toLowerCase() !== 'detail') queryBool(url.searchParams, 'subs');
          queryBool(url.searchParams, 'accs');
          return json(200, gatewayz(this.server));
        case '/ipqueuesz':
          // nats-server's map of its internal Go queues by name; Flotilla has none, so an empty map.
          queryBool(url.searchParams, 'all');
          return json(200, {});
        case '/raftz':
          return json(200, raftzHttp(this.server, url.searchParams));
        case '/healthz': {
          const answer = healthz(this.server, url.searchParams, inLameDuck(this.server));
          return json(answer.httpStatus, answer.body);
        }
        case '/varz':
          return json(200, varz(this.server, this.boundPort, this.cpu.sample(), { ...this.httpReqStats }));
        case '/connz':
          return json(200, connz(this.server, url.searchParams));
        case '/subsz':
        case '/subscriptionsz':
          return json(200, subsz(this.server, subszOptionsOf(url.searchParams)));
        case '/accountz':
          return json(200, accountz(this.server, url.searchParams.get('acc') ?? undefined));
        case '/accstatz': {
          const unused = url.searchParams.get('unused');
          return json(200, accountStatz(this.server, [], unused === '1' || unused === 'true'));
        }
        case '/jsz': {
          const answer = jsz(this.server, url.searchParams);
          if (answer.httpStatus === 400) {
            res.writeHead(400, { 'content-type': 'text/plain' });
            res.end(answer.text);
            return;
          }
          return json(200, answer.body);
        }
        default:
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('404 page not found\n');
      }
    } catch (err) {
      // What nats-server refuses with a 400 and its error text.
      if (err instanceof RaftzNotFound) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(err.message);
        return;
      }
      if (err instanceof AccountNotFoundError || err instanceof SubszError || err instanceof QueryParamError || err instanceof ConnzError) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(err.message);
        return;
      }
      // A monitoring bug must answer 500, not take the broker down or hang the scraper.
      this.server.log.error({ path: url.pathname, err: String(err) }, 'monitoring endpoint failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${(err as Error).message}\n`);
    }
  }

  private serveMetrics(res: ServerResponse): void {
    const metrics = this.metrics;
    if (metrics === null) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('metrics not ready\n');
      return;
    }
    void metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      },
      (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`metrics failed: ${err.message}\n`);
      },
    );
  }
}
