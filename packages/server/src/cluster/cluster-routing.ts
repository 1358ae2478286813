// Core NATS across the cluster, as nats-server routes do it: local interest goes to every peer (deltas, and a
// full sync when a link comes up); a message published here goes once to each peer with matching interest,
// naming the queue groups that peer must serve; a message from a peer is delivered locally only. A queue group
// draws its member among all of the cluster's (a peer's counted as many times as it has members), as
// nats-server does, so a member on the publishing node gets no more than its share.
import {
  ClusterNode,
  GrpcRaftTransport,
  LocalInterest,
  RemoteInterestTable,
  type ClusterListener,
  type ClusterLogger,
  type InterestEntry,
  type InterestFrame,
  type PeerView,
  type RoutedMessageFrame,
} from '@flotilla/cluster';
import type { ClusterRoute, MessageRouter } from '../message-router.js';
import type { Subscription } from '../subscription.js';
import type { ClusterSecurity } from './cluster-security.js';
import { isClusterVisible } from './cluster-visible.js';

export interface ClusterRoutingOptions {
  clusterName: string;
  serverName: string;
  serverId: string;
  /** host:port for clients, as INFO connect_urls lists it */
  clientUrl: string;
  listen?: { host: string; port: number };
  routes: readonly string[];
  faultsEnabled: boolean;
  /** shared secret and/or mutual TLS for node links (see cluster-security.ts) */
  security?: ClusterSecurity;
}

export class ClusterRouting implements ClusterRoute, ClusterListener {
  readonly node: ClusterNode;
  readonly raftTransport: GrpcRaftTransport;
  readonly localInterest = new LocalInterest();
  readonly remoteInterest = new RemoteInterestTable();
  /** Called when the set of client URLs in the cluster changes (INFO connect_urls). */
  onConnectUrlsChanged: (() => void) | null = null;
  routedOut = 0;
  routedIn = 0;
  private readonly peerListeners = new Set<(peer: PeerView, up: boolean) => void>();

  constructor(
    private readonly router: MessageRouter,
    private readonly options: ClusterRoutingOptions,
    log: ClusterLogger,
  ) {
    this.node = new ClusterNode({
      clusterName: options.clusterName,
      serverName: options.serverName,
      serverId: options.serverId,
      clientUrl: options.clientUrl,
      ...(options.listen ? { listen: options.listen } : {}),
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
  }

  async start(): Promise<void> {
    // Subscriptions made before clustering started (JetStream's, say) still count.
    for (const sub of this.router.sublist.all()) this.subscribed(sub);
    this.router.cluster = this;
    await this.node.start();
  }

  async stop(): Promise<void> {
    if (this.router.cluster === this) this.router.cluster = null;
    await this.node.stop();
  }

  /** Tells `fn` whenever a peer links up or goes away (for the meta group, say); returns the unsubscribe. */
  addPeerListener(fn: (peer: PeerView, up: boolean) => void): () => void {
    this.peerListeners.add(fn);
    return () => this.peerListeners.delete(fn);
  }

  /** Route information in the spirit of nats-server's /routez, for the monitoring endpoint. */
  routez(): Record<string, unknown> {
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
      local_interest: this.localInterest.size,
      routes: peers.map((p) => ({
        remote_id: p.serverId,
        remote_name: p.serverName,
        did_solicit: p.outbound,
        cluster_url: p.clusterUrl,
        client_url: p.clientUrl,
        raft_node_id: p.raftNodeId,
        interest: this.remoteInterest.entriesOf(p.serverId),
      })),
    };
  }

  /** Every node's client URL, this node's first. */
  connectUrls(): string[] {
    const urls = [this.options.clientUrl];
    for (const p of this.node.peers()) if (p.clientUrl !== '' && !urls.includes(p.clientUrl)) urls.push(p.clientUrl);
    return urls;
  }

  // ---- ClusterRoute (called by the router) ---------------------------------------------------

  subscribed(sub: Subscription): void {
    if (!isClusterVisible(sub)) return;
    this.announce(this.localInterest.add(sub.subject, sub.queue, sub.owner.cid !== 0));
  }

  unsubscribed(sub: Subscription): void {
    if (!isClusterVisible(sub)) return;
    const entry = this.localInterest.remove(sub.subject, sub.queue, sub.owner.cid !== 0);
    if (entry !== null) this.announce(entry);
  }

  hasRemoteInterest(subject: string): boolean {
    return this.remoteInterest.sublist.hasInterest(subject);
  }

  hasRemoteClientInterest(subject: string): boolean {
    return this.remoteInterest.sublist.hasInterest(subject) && this.remoteInterest.hasClientInterest(subject);
  }

  remoteQueueWeight(subject: string, queue: string): number {
    return this.remoteInterest.queueWeight(subject, queue);
  }

  forward(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    servedQueues: readonly string[],
    route: string | null,
  ): number {
    const plan = this.remoteInterest.plan(route ?? subject, (q) => servedQueues.includes(q));
    if (plan === null) return 0;
    let sent = 0;
    for (let i = 0; i < plan.length; i++) {
      const [peerId, queues] = plan[i]!;
      const frame = { msg: { subject, reply: reply ?? '', message, headerBytes, queues: queues as string[], route: route ?? '' } };
      if (this.node.send(peerId, frame, true)) sent++;
    }
    this.routedOut += sent;
    return sent;
  }

  // ---- ClusterListener (called by the node) --------------------------------------------------

  peerUp(peer: PeerView): void {
    this.node.send(peer.serverId, { interest: { full: true, entries: this.localInterest.snapshot() } });
    this.onConnectUrlsChanged?.();
    for (const fn of this.peerListeners) fn(peer, true);
  }

  peerDown(peer: PeerView): void {
    this.remoteInterest.removePeer(peer.serverId);
    this.onConnectUrlsChanged?.();
    for (const fn of this.peerListeners) fn(peer, false);
  }

  interest(peerId: string, update: InterestFrame): void {
    this.remoteInterest.apply(peerId, update);
  }

  message(_peerId: string, msg: RoutedMessageFrame): void {
    this.routedIn++;
    const m = msg.message;
    const buf = Buffer.isBuffer(m) ? m : Buffer.from(m.buffer, m.byteOffset, m.byteLength);
    this.router.deliverRouted(msg.subject, msg.reply === '' ? null : msg.reply, msg.headerBytes, buf, msg.queues, msg.route === '' ? null : msg.route);
  }

  private announce(entry: InterestEntry): void {
    const frame = { interest: { full: false, entries: [entry] } };
    for (const p of this.node.peers()) this.node.send(p.serverId, frame);
  }
}
