// Monitoring HTTP endpoints with nats-server's JSON shapes: /healthz, /varz, /connz, /jsz, /routez, and
// Prometheus /metrics.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlotillaServer } from './server.js';
import { connz } from './connz.js';
import { healthz } from './healthz.js';
import { jsz } from './jsz.js';
import { inLameDuck } from './lame-duck.js';
import { createMetricsRegistry, type MetricsRegistry } from './metrics.js';
import { routez } from './peers-view.js';
import { varz } from './varz.js';

export { formatUptime } from './uptime-format.js';

const ENDPOINTS = ['/healthz', '/varz', '/connz', '/jsz', '/routez', '/metrics'];

export class MonitoringServer {
  private readonly http: Server;
  private boundPort = 0;
  private lastCpu = process.cpuUsage();
  private lastCpuAtMs = Date.now();
  private cpuPercent = 0;
  private metrics: MetricsRegistry | null = null;

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
    try {
      switch (url.pathname.replace(/\/+$/, '') || '/') {
        case '/':
          return json(200, { endpoints: ENDPOINTS });
        case '/routez':
          return json(200, routez(this.server));
        case '/metrics':
          return this.serveMetrics(res);
        case '/healthz': {
          const answer = healthz(this.server, url.searchParams, inLameDuck(this.server));
          return json(answer.httpStatus, answer.body);
        }
        case '/varz':
          return json(200, varz(this.server, this.boundPort, this.sampleCpu(Date.now())));
        case '/connz':
          return json(200, connz(this.server, url.searchParams));
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
