// Core NATS across the cluster, as nats-server routes do it: local interest goes to every peer (deltas, and a
// full sync when a link comes up); a message published here goes once to each peer with matching interest,
// naming the queue groups that peer must serve; a message from a peer is delivered locally only. A queue group
// draws its member among all of the cluster's (a peer's counted as many times as it has members), as
// nats-server does, so a member on the publishing node gets no more than its share. Each account is routed on
// its own (account-route.ts): interest and messages carry the account's name, the global account's none.
import {
  ClusterNode,
  GrpcRaftTransport,
  type ClusterListener,
  type ClusterLogger,
  type InterestFrame,
  type LocalInterest,
  type PeerView,
  type RemoteInterestTable,
  type RoutedMessageFrame,
} from '@flotilla/cluster';
import type { ClusterRoute, MessageRouter, RoutedTrace } from '../message-router.js';
import type { Subscription } from '../subscription.js';
import { GLOBAL_ACCOUNT_NAME } from '../accounts/account.js';
import { AccountRoute } from './account-route.js';
import { carriesTraceDest } from '../message-trace/trace-headers.js';
import { deliverRoutedWithTrace } from '../message-trace/routed-trace.js';
import type { ClusterSecurity } from './cluster-security.js';
import { formatUptime } from '../uptime-format.js';

export interface ClusterRoutingOptions {
  clusterName: string;
  serverName: string;
  serverId: string;
  /** host:port for clients, as INFO connect_urls lists it */
  clientUrl: string;
  /** host:port of the websocket listener (ws clients' connect_urls), when there is one */
  wsUrl?: string;
  listen?: { host: string; port: number };
  /** `cluster_advertise`: the host (or host:port) peers are told to dial */
  advertise?: string;
  /** `server_tags`, told to peers for JetStream placement */
  tags?: readonly string[];
  routes: readonly string[];
  faultsEnabled: boolean;
  /** shared secret and/or mutual TLS for node links (see cluster-security.ts) */
  security?: ClusterSecurity;
  /**
   * The configured accounts besides the global one (whose router is the constructor's), each routed under
   * its name; every node builds the same from its config, and a peer's frames for an account unknown here
   * are dropped, never delivered in another account.
   */
  accounts?: ReadonlyArray<{ name: string; router: MessageRouter }>;
}

/** Accounts whose interest is kept before they are configured here, and frames kept per account. */
const MAX_EARLY_ACCOUNTS = 16;
const MAX_EARLY_FRAMES_PER_ACCOUNT = 2_000;

export class ClusterRouting implements ClusterRoute, ClusterListener {
  readonly node: ClusterNode;
  /** This node's server_tags. */
  readonly tags: readonly string[];
  readonly raftTransport: GrpcRaftTransport;
  /** The `server` object of this node's message trace events; set by the server (routed traced messages wait for it). */
  traceServerInfo: (() => Record<string, unknown>) | null = null;
  /** Called when the set of client URLs in the cluster changes (INFO connect_urls). */
  onConnectUrlsChanged: (() => void) | null = null;
  routedOut = 0;
  routedIn = 0;
  /** Interest and message frames naming an account this node does not have (its config differs from the sender's). */
  unknownAccountDrops = 0;
  private readonly unknownAccountsLogged = new Set<string>();
  private readonly peerListeners = new Set<(peer: PeerView, up: boolean) => void>();
  private readonly global: AccountRoute;
  private readonly named = new Map<string, AccountRoute>();
  private started = false;

  constructor(
    private readonly router: MessageRouter,
    private readonly options: ClusterRoutingOptions,
    private readonly log: ClusterLogger,
  ) {
    this.tags = options.tags ?? [];
    this.node = new ClusterNode({
      clusterName: options.clusterName,
      serverName: options.serverName,
      serverId: options.serverId,
      clientUrl: options.clientUrl,
      ...(options.wsUrl !== undefined ? { wsUrl: options.wsUrl } : {}),
      ...(options.listen ? { listen: options.listen } : {}),
      ...(options.tags !== undefined ? { tags: options.tags } : {}),
      ...(options.advertise !== undefined && options.advertise !== '' ? { advertiseHost: options.advertise } : {}),
      routes: options.routes,
      faultsEnabled: options.faultsEnabled,
      log,
      ...(options.security
        ? {
            secret: options.security.secret,
            routeSecrets: options.security.routeSecrets,
            authTimeoutMs: options.security.authTimeoutMs,
            ...(options.security.tls ? { tls: options.security.tls } : {}),
          }
        : {}),
    });
    this.node.listener = this;
    this.raftTransport = new GrpcRaftTransport(this.node);
    this.global = new AccountRoute(router, this.node, undefined, this);
    for (const a of options.accounts ?? []) this.addAccount(a.name, a.router);
  }

  /**
   * Routes one more account (other than $G), for an account made after the links came up: its
   * subscriptions so far go to every peer linked now as deltas, and later peers get them in their sync.
   */
  addAccount(name: string, router: MessageRouter): void {
    if (this.named.has(name)) return;
    const route = new AccountRoute(router, this.node, name, this);
    this.named.set(name, route);
    if (this.started) route.attach();
    // What peers told of it before it existed here (an account a claims push reached them first with):
    // their interest frames are deltas, so replaying them in order gives the peer's interest now.
    const early = this.earlyInterest.get(name);
    this.earlyInterest.delete(name);
    for (const f of early?.frames ?? []) route.remoteInterest.apply(f.peerId, f.update);
    if (early?.overflowed === true) this.log.warn({ account: name }, 'early cluster interest of an account overflowed its bound; some remote subscriptions are missing until the peers relink');
  }

  /**
   * Interest frames naming an account not configured here yet, kept (bounded) for addAccount: accounts pushed
   * live (operator mode) reach the nodes one after another, and a peer's early subscriptions must not be lost.
   */
  private readonly earlyInterest = new Map<string, { frames: Array<{ peerId: string; update: InterestFrame }>; overflowed: boolean }>();

  private keepEarlyInterest(peerId: string, account: string, update: InterestFrame): void {
    let e = this.earlyInterest.get(account);
    if (e === undefined) {
      if (this.earlyInterest.size >= MAX_EARLY_ACCOUNTS) return;
      e = { frames: [], overflowed: false };
      this.earlyInterest.set(account, e);
    }
    if (e.frames.length >= MAX_EARLY_FRAMES_PER_ACCOUNT) e.overflowed = true;
    else e.frames.push({ peerId, update });
  }

  /** The global account's interest: this node's, and what peers told. */
  get localInterest(): LocalInterest {
    return this.global.localInterest;
  }

  get remoteInterest(): RemoteInterestTable {
    return this.global.remoteInterest;
  }

  async start(): Promise<void> {
    // Subscriptions made before clustering started (JetStream's, say) still count.
    this.global.attach();
    for (const r of this.named.values()) r.attach();
    this.started = true;
    await this.node.start();
  }

  async stop(): Promise<void> {
    this.global.detach();
    for (const r of this.named.values()) r.detach();
    await this.node.stop();
  }

  /** Tells `fn` whenever a peer links up or goes away (for the meta group, say); returns the unsubscribe. */
  addPeerListener(fn: (peer: PeerView, up: boolean) => void): () => void {
    this.peerListeners.add(fn);
    return () => this.peerListeners.delete(fn);
  }

  /**
   * Route information in the spirit of nats-server's /routez, for the monitoring endpoint; `subs` adds each
   * route's interest as nats-server's subscriptions_list (subjects) or subscriptions_list_detail.
   */
  routez(subs: 'none' | 'list' | 'detail' = 'none'): Record<string, unknown> {
    const peers = this.node.peers();
    return {
      server_id: this.options.serverId,
      server_name: this.options.serverName,
      cluster: this.node.clusterName,
      cluster_url: this.node.clusterUrl,
      raft_node_id: this.node.raftNodeId,
      num_routes: peers.length,
      routed_msgs_out: this.routedOut,
      routed_msgs_in: this.routedIn,
      local_interest: this.sumOver((r) => r.localInterest.size),
      local_interest_by_account: this.byAccount((r) => r.localInterest.size),
      routes: peers.map((p) => ({
        ...(p.link !== undefined ? { rid: p.link.id } : {}),
        remote_id: p.serverId,
        remote_name: p.serverName,
        did_solicit: p.outbound,
        // Flotilla dials only the configured routes (no gossiped ones), so a solicited link is a configured one.
        is_configured: p.outbound,
        ...linkFigures(p),
        cluster_url: p.clusterUrl,
        client_url: p.clientUrl,
        raft_node_id: p.raftNodeId,
        interest: this.sumOver((r) => r.remoteInterest.entriesOf(p.serverId)),
        interest_by_account: this.byAccount((r) => r.remoteInterest.entriesOf(p.serverId)),
        ...this.subscriptionLists(p.serverId, subs),
      })),
    };
  }

  /** Every node's websocket URL (nodes without a websocket listener left out), this node's first. */
  wsConnectUrls(): string[] {
    const urls = this.options.wsUrl !== undefined ? [this.options.wsUrl] : [];
    for (const p of this.node.peers()) if (p.wsUrl !== '' && !urls.includes(p.wsUrl)) urls.push(p.wsUrl);
    return urls;
  }

  /** Every node's client URL, this node's first. */
  connectUrls(): string[] {
    const urls = [this.options.clientUrl];
    for (const p of this.node.peers()) if (p.clientUrl !== '' && !urls.includes(p.clientUrl)) urls.push(p.clientUrl);
    return urls;
  }

  // ---- ClusterRoute of the global account (its router holds the AccountRoute itself) ----------

  subscribed(sub: Subscription): void {
    this.global.subscribed(sub);
  }

  unsubscribed(sub: Subscription): void {
    this.global.unsubscribed(sub);
  }

  hasRemoteInterest(subject: string): boolean {
    return this.global.hasRemoteInterest(subject);
  }

  hasRemoteClientInterest(subject: string): boolean {
    return this.global.hasRemoteClientInterest(subject);
  }

  remoteQueueWeight(subject: string, queue: string): number {
    return this.global.remoteQueueWeight(subject, queue);
  }

  forward(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    servedQueues: readonly string[],
    route: string | null,
    trace?: RoutedTrace,
  ): number {
    return this.global.forward(subject, reply, headerBytes, message, servedQueues, route, trace);
  }

  // ---- ClusterListener (called by the node) --------------------------------------------------

  peerUp(peer: PeerView): void {
    this.global.syncTo(peer);
    for (const r of this.named.values()) r.syncTo(peer);
    this.onConnectUrlsChanged?.();
    for (const fn of this.peerListeners) fn(peer, true);
  }

  peerDown(peer: PeerView): void {
    // a relinked peer syncs in full again: its early frames are stale
    for (const e of this.earlyInterest.values()) e.frames = e.frames.filter((f) => f.peerId !== peer.serverId);
    this.global.remoteInterest.removePeer(peer.serverId);
    for (const r of this.named.values()) r.remoteInterest.removePeer(peer.serverId);
    this.onConnectUrlsChanged?.();
    for (const fn of this.peerListeners) fn(peer, false);
  }

  interest(peerId: string, update: InterestFrame): void {
    const route = update.account === undefined ? this.global : this.named.get(update.account);
    if (route === undefined) {
      this.keepEarlyInterest(peerId, update.account!, update);
      return this.unknownAccount(peerId, update.account!);
    }
    route.remoteInterest.apply(peerId, update);
  }

  message(peerId: string, msg: RoutedMessageFrame): void {
    this.routedIn++;
    const account = msg.account;
    let router = this.router;
    if (account !== undefined) {
      const route = this.named.get(account);
      if (route === undefined) return this.unknownAccount(peerId, account);
      router = route.router;
    }
    const m = msg.message;
    const buf = Buffer.isBuffer(m) ? m : Buffer.from(m.buffer, m.byteOffset, m.byteLength);
    // The one check an untraced message pays (message-trace/): this node traces its own part and reports it.
    if (msg.headerBytes > 0 && this.traceServerInfo !== null && carriesTraceDest(buf, msg.headerBytes)) {
      const arrival = {
        subject: msg.subject,
        reply: msg.reply === '' ? null : msg.reply,
        headerBytes: msg.headerBytes,
        message: buf,
        queues: msg.queues,
        route: msg.route === '' ? null : msg.route,
        fromPeer: peerId,
        peerName: this.node.peer(peerId)?.serverName ?? peerId,
        account: account ?? GLOBAL_ACCOUNT_NAME,
      };
      if (deliverRoutedWithTrace(router, arrival, this.traceServerInfo)) return;
    }
    router.deliverRouted(msg.subject, msg.reply === '' ? null : msg.reply, msg.headerBytes, buf, msg.queues, msg.route === '' ? null : msg.route, peerId);
  }

  /** Dropped, never delivered elsewhere; logged once per account, as it means the nodes' configs differ. */
  private unknownAccount(peerId: string, account: string): void {
    this.unknownAccountDrops++;
    if (this.unknownAccountsLogged.has(account) || this.unknownAccountsLogged.size >= 64) return;
    this.unknownAccountsLogged.add(account);
    const peer = this.node.peers().find((p) => p.serverId === peerId)?.serverName ?? peerId;
    this.log.warn({ peer, account }, 'dropping cluster traffic of an account not configured on this node');
  }

  /** A figure per account (`$G` for the global one): /routez's per-account interest, bounded by the config. */
  private byAccount(figure: (route: AccountRoute) => number): Record<string, number> {
    const out: Record<string, number> = { [GLOBAL_ACCOUNT_NAME]: figure(this.global) };
    for (const [name, r] of this.named) out[name] = figure(r);
    return out;
  }

  /**
   * nats-server's subscriptions_list / subscriptions_list_detail, both omitted when the route carries none. A
   * route subscription's sid is `<account> <subject>[ <queue>]` there, which is how it names the account; the
   * per-entry msgs and cid (the route connection's) are not tracked here and are left out.
   */
  private subscriptionLists(peerId: string, subs: 'none' | 'list' | 'detail'): Record<string, unknown> {
    if (subs === 'none') return {};
    const interest = this.interestOf(peerId);
    if (interest.length === 0) return {};
    if (subs === 'list') return { subscriptions_list: interest.map((e) => e.subject) };
    return {
      subscriptions_list_detail: interest.map((e) => ({
        subject: e.subject,
        ...(e.queue !== null ? { qgroup: e.queue } : {}),
        sid: e.queue !== null ? `${e.account} ${e.subject} ${e.queue}` : `${e.account} ${e.subject}`,
      })),
    };
  }

  /** A peer's interest in every account. */
  private interestOf(peerId: string): Array<{ account: string; subject: string; queue: string | null }> {
    const out: Array<{ account: string; subject: string; queue: string | null }> = [];
    const add = (account: string, r: AccountRoute): void => {
      for (const e of r.remoteInterest.interestOf(peerId)) out.push({ account, subject: e.subject, queue: e.queue });
    };
    add(GLOBAL_ACCOUNT_NAME, this.global);
    for (const [name, r] of this.named) add(name, r);
    return out;
  }

  private sumOver(figure: (route: AccountRoute) => number): number {
    let n = figure(this.global);
    for (const r of this.named.values()) n += figure(r);
    return n;
  }
}

/**
 * nats-server's RouteInfo figures of one link: `ip`/`port` of the peer's cluster listener, start, last
 * activity, uptime, idle, pending_size, and in/out msgs and bytes counted in link frames (every routed message,
 * interest update and Raft frame; bytes estimated from frame contents before gRPC framing).
 */
function linkFigures(p: PeerView): Record<string, unknown> {
  const l = p.link;
  if (l === undefined) return {};
  const now = Date.now();
  let ip = '';
  let port = 0;
  try {
    const u = new URL(p.clusterUrl.includes('://') ? p.clusterUrl : `nats://${p.clusterUrl}`);
    ip = u.hostname.replace(/^\[|\]$/g, '');
    port = Number(u.port) || 0;
  } catch {
    // an unparsable URL leaves them empty
  }
  return {
    ip,
    port,
    start: new Date(l.openedMs).toISOString(),
    last_activity: new Date(l.lastActivityMs).toISOString(),
    uptime: formatUptime(now - l.openedMs),
    idle: formatUptime(Math.max(0, now - l.lastActivityMs)),
    pending_size: l.pendingBytes,
    in_msgs: l.framesReceived,
    out_msgs: l.framesSent,
    in_bytes: l.bytesReceived,
    out_bytes: l.bytesSent,
  };
}
