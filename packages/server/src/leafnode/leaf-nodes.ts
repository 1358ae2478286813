// The leafnode side of a server: the listener leafs attach to, the remotes this server attaches to (each
// retried with back-off while down), and the state /leafz reports.
import { createServer, connect, type Server as NetServer, type AddressInfo } from 'node:net';
import type { LeafNodeOptions } from './leafnode-options.js';
import { LeafLink, type LeafLinkHost } from './leaf-link.js';
import { LoopDetection } from './loop-detection.js';
import type { MessageRouter } from '../message-router.js';

export interface LeafNodesHost {
  readonly serverId: string;
  readonly serverName: string;
  readonly version: string;
  readonly maxPayloadBytes: number;
  readonly domain: string;
  readonly clientHost: string;
  routerOf(account: string): MessageRouter | undefined;
  log: LeafLinkHost['log'];
}

const GLOBAL = '$G';
const MAX_BACKOFF_MS = 30_000;

export class LeafNodes {
  readonly links = new Set<LeafLink>();
  private readonly loops = new LoopDetection();
  private listener: NetServer | null = null;
  private listenPort = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly linkHost: LeafLinkHost;

  constructor(
    private readonly options: LeafNodeOptions,
    private readonly host: LeafNodesHost,
  ) {
    const self = this;
    this.linkHost = {
      serverId: host.serverId,
      serverName: host.serverName,
      version: host.version,
      maxPayloadBytes: host.maxPayloadBytes,
      domain: host.domain,
      loops: this.loops,
      log: host.log,
      routerOf: (a) => host.routerOf(a),
      acceptInfo: (cid) => self.acceptInfo(cid),
      isDuplicate: (l) => [...self.links].some((o) => o !== l && o.solicited === null && o.remoteId === l.remoteId && o.account === l.account),
      linkUp: (l) => {
        self.links.add(l);
        host.log.info({ account: l.account, remote: l.remoteName, solicited: l.solicited !== null }, 'leafnode connection established');
      },
      linkDown: (l, reason, retry) => self.linkDown(l, reason, retry),
    };
  }

  get port(): number {
    return this.listenPort;
  }

  /** `leafnode_urls` of INFO: where leafs attach to this server. */
  leafnodeUrls(): string[] {
    if (this.listener === null) return [];
    const h = this.options.host === '0.0.0.0' || this.options.host === '' ? this.host.clientHost : this.options.host;
    return [`${h === '0.0.0.0' ? '127.0.0.1' : h}:${this.listenPort}`];
  }

  private acceptInfo(cid: number): Record<string, unknown> {
    return {
      server_id: this.host.serverId,
      name: this.host.serverName,
      version: this.host.version,
      go: 'go1.22',
      host: this.options.host,
      port: this.listenPort,
      headers: true,
      auth_required: true,
      max_payload: this.host.maxPayloadBytes,
      proto: 1,
      leafnode_urls: this.leafnodeUrls(),
      // a soliciting nats-server takes an INFO without client_id and leafnode_urls for a wrong port
      client_id: cid,
      ...(this.host.domain !== '' ? { domain: this.host.domain } : {}),
    };
  }

  async start(): Promise<void> {
    const o = this.options;
    if (o.port !== 0) {
      const server = createServer({ noDelay: true }, (socket) => {
        if (this.stopped) {
          socket.destroy();
          return;
        }
        new LeafLink(this.linkHost, socket, null, { users: o.users, defaultAccount: o.authAccount ?? GLOBAL, ...(o.authTimeoutMs !== undefined ? { authTimeoutMs: o.authTimeoutMs } : {}) });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: o.host, port: o.port < 0 ? 0 : o.port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => this.host.log.warn({ err: String(err) }, 'leafnode listener error'));
      this.listener = server;
      this.listenPort = (server.address() as AddressInfo).port;
      this.host.log.info({ host: o.host, port: this.listenPort }, 'listening for leafnode connections');
    }
    o.remotes.forEach((r, i) => this.solicit(i, 0, 0));
  }

  private readonly attempts = new Map<number, number>();

  private solicit(index: number, urlIndex: number, delayMs: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.stopped) return;
      const remote = this.options.remotes[index]!;
      const raw = remote.urls[urlIndex % remote.urls.length]!;
      const url = new URL(raw);
      const socket = connect({ host: url.hostname, port: Number(url.port || 7422) });
      const link = new LeafLink(this.linkHost, socket, { url, account: remote.account ?? GLOBAL }, null);
      this.remoteOf.set(link, { index, urlIndex });
    }, delayMs);
    this.timers.add(t);
  }

  private readonly remoteOf = new Map<LeafLink, { index: number; urlIndex: number }>();

  private linkDown(link: LeafLink, reason: string, retryAfterMs: number): void {
    const wasUp = this.links.delete(link);
    if (wasUp) this.host.log.info({ account: link.account, remote: link.remoteName, reason }, 'leafnode connection closed');
    const r = this.remoteOf.get(link);
    this.remoteOf.delete(link);
    if (r === undefined || this.stopped) return;
    // Back-off: the configured delay, doubling while attempts fail, reset by a link that came up.
    const n = wasUp ? 0 : (this.attempts.get(r.index) ?? 0) + 1;
    this.attempts.set(r.index, n);
    const base = Math.max(50, this.options.reconnectMs);
    const delay = Math.max(retryAfterMs, Math.min(MAX_BACKOFF_MS, wasUp ? base : base * 2 ** Math.min(n - 1, 5)));
    this.solicit(r.index, r.urlIndex + (wasUp ? 0 : 1), delay);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const l of [...this.links]) l.close('Server Shutdown');
    for (const l of [...this.remoteOf.keys()]) l.close('Server Shutdown');
    if (this.listener !== null) await new Promise<void>((resolve) => this.listener!.close(() => resolve()));
  }

  /** /leafz `leafs` entries (nats-server's LeafInfo). */
  leafz(subs: boolean): Record<string, unknown>[] {
    return [...this.links].map((l) => ({
      name: l.remoteName,
      is_spoke: l.solicited !== null,
      account: l.account,
      ip: l.remoteAddress.ip,
      port: l.remoteAddress.port,
      rtt: '0s',
      in_msgs: l.inMsgs,
      out_msgs: l.outMsgs,
      in_bytes: l.inBytes,
      out_bytes: l.outBytes,
      subscriptions: l.subscriptionCount,
      ...(subs ? { subscriptions_list: l.remoteSubjects() } : {}),
    }));
  }
}
