// This node's place in the cluster: the gRPC listener, a dialer per route, one active link per peer
// (duplicates resolved the same way on both ends), identity checks, gossip of peers, liveness pings, and
// dispatch of incoming frames to the routing layer and to Raft.
import { networkInterfaces } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { computeProof, newNonce, verifyProof, type ProverRole } from './cluster-secret.js';
import { channelCredentials, onTlsClientError, serverCredentials, type ClusterTlsMaterial } from './cluster-tls.js';
import { FaultRules } from './fault-rules.js';
import { PeerLink, type LinkOwner, type LinkStream } from './peer-link.js';
import { RouteDialer, type DialOutcome, type DialerHost } from './route-dialer.js';
import {
  LINK_METHOD_PATH,
  LINK_PROTOCOL_VERSION,
  decodeBatch,
  encodeBatch,
  type Frame,
  type HelloFrame,
  type InterestFrame,
  type PeerInfoWire,
  type RaftMessageWire,
  type RefuseFrame,
  type RoutedMessageFrame,
} from './wire.js';

export interface ClusterLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface ClusterNodeOptions {
  /** '' = no configured name: adopt the first peer's */
  clusterName: string;
  serverName: string;
  serverId: string;
  /** host:port clients can use to reach this node */
  clientUrl: string;
  /** host:port of this node's websocket listener, when it has one */
  wsUrl?: string;
  /** server_tags, sent to peers in Hello for JetStream placement */
  tags?: readonly string[];
  /** where the gRPC listener binds; port -1 or 0 = any free port; absent = dial only */
  listen?: { host: string; port: number };
  /** host advertised to peers when listening on a wildcard address */
  advertiseHost?: string;
  /** peers' cluster addresses, host:port */
  routes: readonly string[];
  /** Raft NodeId of this node in every group; default derived from the server name */
  raftNodeId?: number;
  /** drop/delay/partition rules may be set (see FaultRules); false keeps them inert */
  faultsEnabled?: boolean;
  log: ClusterLogger;
  pingIntervalMs?: number;
  /** a link that has received nothing for this long is closed */
  staleAfterMs?: number;
  /** per-link bound of frames waiting to be written */
  maxPendingBytes?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** shared cluster secret (see cluster-secret.ts secretOf); '' or absent = none required */
  secret?: string;
  /** per configured route (host:port): the secret from credentials in its URL, used when dialing it */
  routeSecrets?: ReadonlyMap<string, string>;
  /**
   * With a secret: an inbound link not admitted within this is refused, as nats-server closes a route that
   * does not authenticate within `cluster { authorization { timeout } }`. Default 2000.
   */
  authTimeoutMs?: number;
  /** mutual TLS on every link (listener and dials) */
  tls?: ClusterTlsMaterial;
}

export interface PeerView {
  serverId: string;
  serverName: string;
  clientUrl: string;
  /** '' when the peer has no websocket listener */
  wsUrl: string;
  /** the peer's server_tags */
  tags: string[];
  clusterUrl: string;
  raftNodeId: number;
  /** true when this node dialed the link in use */
  outbound: boolean;
  /** the peer reads account names on interest and messages (HelloFrame.accounts) */
  accounts: boolean;
  /** The link in use, for /routez: its id, when it opened, last frame either way, queued bytes, frames and bytes each way. */
  link?: { id: number; openedMs: number; lastActivityMs: number; pendingBytes: number; framesSent: number; framesReceived: number; bytesSent: number; bytesReceived: number };
}

/** Traffic with one peer (by server name) since this node started, across every link to it. */
export interface PeerTraffic {
  serverName: string;
  framesSent: number;
  framesReceived: number;
  bytesSent: number;
  bytesReceived: number;
  /** links that completed the hello exchange (a duplicate link replacing a live one counts too) */
  linksEstablished: number;
  /** active links to it that closed */
  linksLost: number;
  /** links established after a lost one: the peer came back */
  reconnects: number;
  /** a duplicate link just replaced the active one; its successor is not a reconnect */
  replacing: boolean;
  /** Date.now() of the last frame received from it, 0 = never */
  lastReceivedMs: number;
  /** true while a link to it is active */
  connected: boolean;
}

/** What the routing layer hears from the cluster. */
export interface ClusterListener {
  peerUp(peer: PeerView): void;
  peerDown(peer: PeerView): void;
  interest(peerId: string, update: InterestFrame): void;
  message(peerId: string, msg: RoutedMessageFrame): void;
}

export type RaftFrameHandler = (msg: RaftMessageWire, peerId: string) => void;

const GOSSIPED_ROUTE_MAX_FAILURES = 10;
/** nats-server's AUTH_TIMEOUT: how long an inbound route has to authenticate unless configured. */
const DEFAULT_AUTH_TIMEOUT_MS = 2000;
/** Bound of the per-peer traffic table: peers are admitted nodes, so this is far above any real cluster. */
const PEER_TRAFFIC_MAX = 256;
const BATCH_BYTES_LIMIT = 256 * 1024 * 1024;

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': BATCH_BYTES_LIMIT,
  'grpc.max_send_message_length': BATCH_BYTES_LIMIT,
  'grpc-node.flow_control_window': 16 * 1024 * 1024,
  // A fresh TCP connection per dial, so a restarted peer is never reached through a dead pooled one.
  'grpc.use_local_subchannel_pool': 1,
  'grpc.enable_retries': 0,
};

const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': BATCH_BYTES_LIMIT,
  'grpc.max_send_message_length': BATCH_BYTES_LIMIT,
  'grpc-node.flow_control_window': 16 * 1024 * 1024,
  'grpc-node.max_session_memory': 1024,
};

export class ClusterNode implements LinkOwner, DialerHost {
  readonly serverId: string;
  readonly serverName: string;
  readonly raftNodeId: number;
  readonly faults = new FaultRules();
  stopped = false;
  listener: ClusterListener | null = null;
  onRaft: RaftFrameHandler | null = null;
  private name: string;
  private readonly log: ClusterLogger;
  private server: grpc.Server | null = null;
  private boundPort = 0;
  private readonly links = new Set<PeerLink>();
  private readonly active = new Map<string, PeerLink>();
  private readonly byRaftId = new Map<number, PeerLink>();
  private readonly dialers = new Map<string, RouteDialer>();
  private readonly dialWaiters = new Map<PeerLink, (o: DialOutcome) => void>();
  private readonly downWaiters = new Map<string, Array<() => void>>();
  private pingTimer: NodeJS.Timeout | null = null;
  /** Totals of closed links, per peer server name; live links' counters are added on read. */
  private readonly closedTraffic = new Map<string, PeerTraffic>();
  private readonly pingIntervalMs: number;
  private readonly staleAfterMs: number;
  private readonly maxPendingBytes: number;

  constructor(private readonly options: ClusterNodeOptions) {
    this.serverId = options.serverId;
    this.serverName = options.serverName;
    this.name = options.clusterName;
    this.log = options.log;
    this.raftNodeId = options.raftNodeId ?? raftNodeIdFor(options.serverName);
    this.pingIntervalMs = options.pingIntervalMs ?? 1000;
    this.staleAfterMs = options.staleAfterMs ?? 5000;
    this.maxPendingBytes = options.maxPendingBytes ?? 256 * 1024 * 1024;
  }

  /** The cluster name in force: the configured one, or the one adopted from a peer ('' before that). */
  get clusterName(): string {
    return this.name;
  }

  /** Bound gRPC port (0 when not listening). */
  get port(): number {
    return this.boundPort;
  }

  /** host:port peers dial to reach this node; '' when not listening. */
  get clusterUrl(): string {
    if (this.server === null) return '';
    const advertise = this.options.advertiseHost?.replace(/^nats(-route)?:\/\//i, '');
    // cluster_advertise with a port (a NAT or container port mapping) is taken as it is.
    if (advertise !== undefined && /^(\[[^\]]+\]|[^:]+):\d+$/.test(advertise)) return advertise;
    return `${advertisedHost(this.options.listen!.host, advertise)}:${this.boundPort}`;
  }

  async start(): Promise<void> {
    const listen = this.options.listen;
    if (listen !== undefined) {
      const server = new grpc.Server(SERVER_OPTIONS);
      server.addService(
        {
          link: {
            path: LINK_METHOD_PATH,
            requestStream: true,
            responseStream: true,
            requestSerialize: encodeBatch,
            requestDeserialize: decodeBatch,
            responseSerialize: encodeBatch,
            responseDeserialize: decodeBatch,
            originalName: 'Link',
          },
        },
        { link: (call: grpc.ServerDuplexStream<Frame[], Frame[]>) => this.accept(call) },
      );
      const host = listen.host === '' ? '0.0.0.0' : listen.host;
      const port = listen.port < 0 ? 0 : listen.port;
      this.boundPort = await new Promise<number>((resolve, reject) =>
        server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, serverCredentials(this.options.tls), (err, p) =>
          err ? reject(err) : resolve(p),
        ),
      );
      this.server = server;
      if (this.options.tls !== undefined) {
        onTlsClientError(server, (err, socket) =>
          this.log.error(
            { ...(socket.remoteAddress ? { remote: `${socket.remoteAddress}:${socket.remotePort}` } : {}), error: err.message, code: err.code },
            'refusing route: TLS handshake failed (certificate missing or not signed by the cluster CA)',
          ),
        );
      }
      this.log.info(
        { host, port: this.boundPort, cluster: this.name, tls: this.options.tls !== undefined, auth: this.secretFor('') !== '' },
        'listening for cluster connections',
      );
    }
    this.pingTimer = setInterval(() => this.checkLinks(), this.pingIntervalMs);
    this.pingTimer.unref();
    for (const url of this.options.routes) this.addRoute(url, true);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    for (const d of this.dialers.values()) d.interrupt();
    for (const link of [...this.links]) link.close('node stopping');
    for (const waiters of this.downWaiters.values()) for (const w of waiters) w();
    this.downWaiters.clear();
    await Promise.all([...this.dialers.values()].map((d) => d.done));
    const server = this.server;
    if (server !== null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Starts dialing `url` (host:port) unless a dialer for it exists. */
  addRoute(url: string, configured: boolean): void {
    if (this.stopped || this.dialers.has(url)) return;
    const dialer = new RouteDialer(
      url,
      this,
      configured ? Number.POSITIVE_INFINITY : GOSSIPED_ROUTE_MAX_FAILURES,
      this.options.backoffMinMs ?? 50,
      this.options.backoffMaxMs ?? 2000,
    );
    this.dialers.set(url, dialer);
    dialer.start();
    if (!configured) void dialer.done.then(() => this.dialers.get(url) === dialer && this.dialers.delete(url));
  }

  /**
   * A config reload removed `url`: it is dialed no more. A link it made stays up until it closes (the peer
   * may still route to this node, and a Raft group should not lose a link to a reload).
   */
  removeRoute(url: string): void {
    const dialer = this.dialers.get(url);
    if (dialer === undefined) return;
    this.dialers.delete(url);
    dialer.cancel();
  }

  /** Linked peers. */
  peers(): PeerView[] {
    return [...this.active.values()].map((l) => viewOf(l));
  }

  /** Traffic per peer ever linked (bounded), for /metrics and the peers view. */
  peerTraffic(): PeerTraffic[] {
    const out = new Map<string, PeerTraffic>();
    for (const t of this.closedTraffic.values()) out.set(t.serverName, { ...t, connected: false });
    for (const link of this.active.values()) {
      const t = out.get(link.peerName) ?? emptyTraffic(link.peerName);
      t.framesSent += link.framesSent;
      t.framesReceived += link.framesReceived;
      t.bytesSent += link.bytesSent;
      t.bytesReceived += link.bytesReceived;
      t.lastReceivedMs = Math.max(t.lastReceivedMs, link.lastReceivedMs);
      t.connected = true;
      out.set(link.peerName, t);
    }
    return [...out.values()].sort((a, b) => a.serverName.localeCompare(b.serverName));
  }

  peer(serverId: string): PeerView | null {
    const link = this.active.get(serverId);
    return link === undefined ? null : viewOf(link);
  }

  /** Server id of the peer using Raft NodeId `id`, or null when it is not linked. */
  peerIdForRaftNode(id: number): string | null {
    return this.byRaftId.get(id)?.peer?.serverId ?? null;
  }

  /** Queues a frame to one peer; false when it is not linked (or a fault rule dropped it). */
  send(peerId: string, frame: Frame, droppable = false): boolean {
    const link = this.active.get(peerId);
    if (link === undefined) return false;
    if (droppable && this.options.faultsEnabled && this.faults.shouldDrop(link.peerName)) return false;
    link.send(frame);
    return true;
  }

  /** Queues a Raft message to the node with Raft NodeId `to`; false when it is not linked. */
  sendRaft(to: number, msg: RaftMessageWire): boolean {
    const link = this.byRaftId.get(to);
    if (link === undefined || link.state !== 'active') return false;
    if (this.options.faultsEnabled && this.faults.shouldDrop(link.peerName)) return false;
    link.send({ raft: msg });
    return true;
  }

  /** Fault hook: cut every link to these peers (by server name) and refuse them until heal(). */
  partition(peerNames: readonly string[]): void {
    if (!this.options.faultsEnabled) return;
    for (const n of peerNames) this.faults.partitioned.add(n);
    for (const link of [...this.links]) {
      if (link.peer !== null && this.faults.isPartitioned(link.peer.serverName)) {
        link.refuse({ code: 'partitioned', reason: `partitioned from ${this.serverName} by the fault hook` });
      }
    }
    this.log.warn({ peers: peerNames }, 'fault hook: partitioned');
  }

  /** Fault hook: clears every rule and redials at once. */
  heal(): void {
    this.faults.clear();
    for (const d of this.dialers.values()) d.retryNow();
    this.log.warn({}, 'fault hook: healed');
  }

  /** Fault-hook rules are inert unless enabled at start. */
  get faultsEnabled(): boolean {
    return this.options.faultsEnabled === true;
  }

  // ---- DialerHost ----------------------------------------------------------------------------

  dialOnce(url: string): Promise<DialOutcome> {
    return new Promise<DialOutcome>((resolve) => {
      if (this.stopped) return resolve({ peerId: null, established: false, refused: null, livedMs: 0 });
      const client = new grpc.Client(url, channelCredentials(this.options.tls), CHANNEL_OPTIONS);
      const call = client.makeBidiStreamRequest<Frame[], Frame[]>(LINK_METHOD_PATH, encodeBatch, decodeBatch, new grpc.Metadata());
      const stream: LinkStream = {
        write: (frames) => call.write(frames),
        on: (event: string, fn: (...args: never[]) => void) => call.on(event, fn as (...args: unknown[]) => void),
        close: () => {
          call.end();
          // Let a final Refuse reach the peer before the connection goes.
          setTimeout(() => {
            call.cancel();
            client.close();
          }, 200).unref();
        },
      };
      const link = new PeerLink(stream, true, this, this.maxPendingBytes, url);
      this.links.add(link);
      this.dialWaiters.set(link, resolve);
      link.send({ hello: this.hello(link, this.secretFor(url)) });
    });
  }

  isPeerActive(peerId: string): boolean {
    return this.active.has(peerId);
  }

  waitForPeerDown(peerId: string): Promise<void> {
    if (this.stopped || !this.active.has(peerId)) return Promise.resolve();
    return new Promise((resolve) => {
      let list = this.downWaiters.get(peerId);
      if (list === undefined) this.downWaiters.set(peerId, (list = []));
      list.push(resolve);
    });
  }

  // ---- LinkOwner -----------------------------------------------------------------------------

  onFrames(link: PeerLink, frames: Frame[]): void {
    for (const frame of frames) {
      if (link.state === 'closed') return;
      if (link.state === 'handshake') {
        // Until the peer is admitted nothing but identity frames counts: no interest, messages or Raft.
        if ('hello' in frame) this.onHello(link, frame.hello);
        else if ('auth' in frame) this.onAuth(link, frame.auth.proof);
        else if ('refuse' in frame) this.onRefused(link, frame.refuse);
        continue;
      }
      const peerId = link.peer!.serverId;
      if ('msg' in frame) {
        if (this.options.faultsEnabled && this.faults.shouldDrop(link.peerName)) continue;
        this.listener?.message(peerId, frame.msg);
      } else if ('raft' in frame) {
        if (this.options.faultsEnabled && this.faults.shouldDrop(link.peerName)) continue;
        this.onRaft?.(frame.raft, peerId);
      } else if ('interest' in frame) {
        this.listener?.interest(peerId, frame.interest);
      } else if ('peers' in frame) {
        this.onGossip(frame.peers.peers);
      } else if ('refuse' in frame) {
        this.onRefused(link, frame.refuse);
      }
      // ping: receiving it already refreshed the link's liveness
    }
  }

  onLinkClosed(link: PeerLink): void {
    this.links.delete(link);
    const peer = link.peer;
    if (peer !== null && this.active.get(peer.serverId) === link) {
      this.active.delete(peer.serverId);
      if (this.byRaftId.get(peer.raftNodeId) === link) this.byRaftId.delete(peer.raftNodeId);
      // Both ends dialing at once: one end drops a duplicate link for the other; the peer was never lost, so
      // neither this close nor the replacement's connect is logged as a peer event (debug only).
      const duplicate = link.refusedWith?.code === 'duplicate' || /^refused: duplicate\b/.test(link.closeReason);
      const fields = { peer: peer.serverName, peerId: peer.serverId, reason: link.closeReason };
      if (duplicate) this.log.debug(fields, 'route replaced by a duplicate link');
      else this.log.info(fields, 'route closed');
      const t = this.trafficOf(peer.serverName);
      if (t !== null) {
        t.framesSent += link.framesSent;
        t.framesReceived += link.framesReceived;
        t.bytesSent += link.bytesSent;
        t.bytesReceived += link.bytesReceived;
        t.lastReceivedMs = Math.max(t.lastReceivedMs, link.lastReceivedMs);
        if (duplicate) t.replacing = true;
        else t.linksLost++;
      }
      this.listener?.peerDown(viewOf(link));
      const waiters = this.downWaiters.get(peer.serverId);
      this.downWaiters.delete(peer.serverId);
      for (const w of waiters ?? []) w();
    } else if (link.outbound && peer === null && link.refusedWith === null) {
      // A certificate problem will not fix itself by redialing: say so at error level.
      if (this.options.tls !== undefined && /certificate|self.signed|ssl|tls/i.test(link.closeReason)) {
        this.log.error({ url: link.dialedUrl, reason: link.closeReason }, 'route dial failed: TLS handshake (the peer certificate is not signed by the cluster CA)');
      } else this.log.debug({ url: link.dialedUrl, reason: link.closeReason }, 'route dial failed');
    }
    const waiter = this.dialWaiters.get(link);
    if (waiter !== undefined) {
      this.dialWaiters.delete(link);
      waiter({
        peerId: peer?.serverId ?? null,
        established: link.everActive,
        refused: link.refusedWith?.code ?? refusalOf(link.closeReason),
        livedMs: Date.now() - link.openedMs,
      });
    }
  }

  delayFor(link: PeerLink): number {
    return this.options.faultsEnabled && link.peer !== null ? this.faults.delayFor(link.peer.serverName) : 0;
  }

  // ---- internals -----------------------------------------------------------------------------

  private accept(call: grpc.ServerDuplexStream<Frame[], Frame[]>): void {
    if (this.stopped) {
      call.end();
      return;
    }
    const stream: LinkStream = {
      write: (frames) => call.write(frames),
      on: (event: string, fn: (...args: never[]) => void) => call.on(event, fn as (...args: unknown[]) => void),
      close: () => call.end(),
    };
    const link = new PeerLink(stream, false, this, this.maxPendingBytes);
    call.on('cancelled', () => link.close('peer cancelled the stream'));
    this.links.add(link);
    link.send({ hello: this.hello(link, this.secretFor('')) });
    if (link.secret !== '') this.startAuthTimer(link);
  }

  /** Refuses an inbound link still in its handshake when the authentication timeout has passed. */
  private startAuthTimer(link: PeerLink): void {
    const timeoutMs = this.options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;
    const timer = setTimeout(() => {
      // Checked after the I/O phase: when the loop was blocked past the deadline, a proof already waiting on
      // the socket is read before the verdict.
      setImmediate(() => {
        if (link.state !== 'handshake') return;
        const hello = link.peer;
        this.log.error({ peer: hello?.serverName, peerId: hello?.serverId, timeoutMs }, 'refusing route: authentication timeout');
        link.refuse({ code: 'auth_required', reason: 'authentication timeout' });
      });
    }, timeoutMs);
    timer.unref();
  }

  /** The secret a link uses: a dialed route's own URL credentials, else the node's. */
  private secretFor(dialedUrl: string): string {
    return (dialedUrl === '' ? undefined : this.options.routeSecrets?.get(dialedUrl)) ?? this.options.secret ?? '';
  }

  private hello(link: PeerLink, secret: string): HelloFrame {
    link.secret = secret;
    link.nonce = newNonce();
    return {
      clusterName: this.name,
      serverName: this.serverName,
      serverId: this.serverId,
      clientUrl: this.options.clientUrl,
      clusterUrl: this.clusterUrl,
      raftNodeId: this.raftNodeId,
      version: LINK_PROTOCOL_VERSION,
      nonce: link.nonce,
      auth: secret !== '',
      accounts: true,
      ...(this.options.wsUrl !== undefined && this.options.wsUrl !== '' ? { wsUrl: this.options.wsUrl } : {}),
      ...(this.options.tags !== undefined && this.options.tags.length > 0 ? { tags: [...this.options.tags] } : {}),
    };
  }

  private onHello(link: PeerLink, hello: HelloFrame): void {
    if (link.peer !== null) {
      this.log.error({ peer: link.peer.serverName, url: link.dialedUrl || undefined }, 'refusing route: second hello');
      return link.refuse({ code: 'bad_auth', reason: 'hello sent twice' });
    }
    link.peer = hello;
    const who = { peer: hello.serverName, peerId: hello.serverId, url: link.dialedUrl || undefined };
    if (hello.version !== LINK_PROTOCOL_VERSION) {
      this.log.error({ ...who, version: hello.version }, 'refusing route: unsupported link protocol version');
      return link.refuse({ code: 'version', reason: `link protocol ${LINK_PROTOCOL_VERSION} required` });
    }
    if (hello.serverId === this.serverId) return link.refuse({ code: 'self', reason: 'route to self' });
    if (this.name !== '' && hello.clusterName !== '' && hello.clusterName !== this.name) {
      this.log.error(
        { ...who, theirCluster: hello.clusterName, ourCluster: this.name },
        'refusing route: cluster name mismatch',
      );
      return link.refuse({ code: 'wrong_cluster', reason: `cluster name ${this.name} expected, got ${hello.clusterName}` });
    }
    if (link.secret === '') return this.admit(link, hello);
    if (hello.auth !== true) {
      this.log.error(who, 'refusing route: peer presented no cluster secret');
      return link.refuse({ code: 'auth_required', reason: 'this cluster requires a secret' });
    }
    // Prove our secret to the peer, and wait for its proof before admitting it.
    link.awaitingAuth = true;
    link.send({ auth: { proof: computeProof(link.secret, this.proofInput(link, hello, 'self')) } });
  }

  private onAuth(link: PeerLink, proof: Uint8Array): void {
    // A node without a secret ignores proofs: the peer that demands one refuses us if it must.
    if (link.secret === '') return;
    const hello = link.peer;
    const who = { peer: hello?.serverName, peerId: hello?.serverId, url: link.dialedUrl || undefined };
    if (hello === null || !link.awaitingAuth) {
      this.log.error(who, 'refusing route: cluster secret proof out of order');
      return link.refuse({ code: 'bad_auth', reason: 'auth before hello' });
    }
    link.awaitingAuth = false;
    if (!verifyProof(link.secret, this.proofInput(link, hello, 'peer'), proof)) {
      this.log.error(who, 'refusing route: cluster secret mismatch');
      return link.refuse({ code: 'bad_auth', reason: 'cluster secret mismatch' });
    }
    this.admit(link, hello);
  }

  /** What a proof covers; `prover` says whether this node or the peer is proving. */
  private proofInput(link: PeerLink, hello: HelloFrame, prover: 'self' | 'peer') {
    const peerNonce = hello.nonce ?? new Uint8Array(0);
    const selfRole: ProverRole = link.outbound ? 'dialer' : 'acceptor';
    const peerRole: ProverRole = link.outbound ? 'acceptor' : 'dialer';
    return prover === 'self'
      ? { role: selfRole, verifierNonce: peerNonce, proverNonce: link.nonce, proverId: this.serverId, verifierId: hello.serverId }
      : { role: peerRole, verifierNonce: link.nonce, proverNonce: peerNonce, proverId: hello.serverId, verifierId: this.serverId };
  }

  /** Identity is proven (or no secret is required): the remaining checks, then the link goes live. */
  private admit(link: PeerLink, hello: HelloFrame): void {
    const who = { peer: hello.serverName, peerId: hello.serverId, url: link.dialedUrl || undefined };
    const sameName =
      hello.serverName === this.serverName ||
      [...this.active.values()].some((l) => l.peer!.serverName === hello.serverName && l.peer!.serverId !== hello.serverId);
    if (sameName) {
      // Server names pick Raft node ids, so two live nodes with one name must never both join.
      this.log.error(who, 'refusing route: another node already uses this server name');
      return link.refuse({ code: 'duplicate_name', reason: `server name ${hello.serverName} is already in the cluster` });
    }
    if (this.options.faultsEnabled && this.faults.isPartitioned(hello.serverName)) {
      return link.refuse({ code: 'partitioned', reason: 'partitioned by the fault hook' });
    }
    if (this.name === '' && hello.clusterName !== '') {
      this.name = hello.clusterName;
      this.log.info({ cluster: this.name }, 'adopted the cluster name of a peer');
    }
    const existing = this.active.get(hello.serverId);
    if (existing !== undefined) {
      // Both ends keep the link dialed by the node with the smaller server id; same dialer: the older link.
      const keepNew = dialerOf(link, this.serverId) < dialerOf(existing, this.serverId);
      const loser = keepNew ? existing : link;
      loser.refuse({ code: 'duplicate', reason: 'already linked to this node' });
      if (!keepNew) return;
    }
    this.activate(link, hello);
  }

  private activate(link: PeerLink, hello: HelloFrame): void {
    link.state = 'active';
    link.everActive = true;
    this.active.set(hello.serverId, link);
    this.byRaftId.set(hello.raftNodeId, link);
    const traffic = this.trafficOf(hello.serverName);
    const replacement = traffic?.replacing === true;
    if (traffic !== null) {
      traffic.linksEstablished++;
      traffic.replacing = false;
      if (traffic.linksLost > traffic.reconnects) traffic.reconnects++;
    }
    const fields = { peer: hello.serverName, peerId: hello.serverId, clientUrl: hello.clientUrl, outbound: link.outbound };
    if (replacement) this.log.debug(fields, 'route connected (replacing a duplicate link)');
    else this.log.info(fields, 'route connected');
    // Tell the new peer about everyone else, and everyone else about it, so the mesh completes.
    const others = [...this.active.values()].filter((l) => l !== link).map((l) => peerInfoOf(l.peer!));
    if (others.length > 0) link.send({ peers: { peers: others } });
    for (const other of this.active.values()) if (other !== link) other.send({ peers: { peers: [peerInfoOf(hello)] } });
    this.listener?.peerUp(viewOf(link));
  }

  /** The closed-link totals of a peer, created on first use; null once the table is full. */
  private trafficOf(serverName: string): PeerTraffic | null {
    let t = this.closedTraffic.get(serverName);
    if (t === undefined) {
      if (this.closedTraffic.size >= PEER_TRAFFIC_MAX) return null;
      t = emptyTraffic(serverName);
      this.closedTraffic.set(serverName, t);
    }
    return t;
  }

  private onRefused(link: PeerLink, refusal: RefuseFrame): void {
    link.refusedWith = refusal;
    const who = { peer: link.peer?.serverName, url: link.dialedUrl || undefined, code: refusal.code, reason: refusal.reason };
    if (['wrong_cluster', 'version', 'duplicate_name', 'auth_required', 'bad_auth'].includes(refusal.code)) this.log.error(who, 'route refused by peer');
    else this.log.debug(who, 'route refused by peer');
    link.close(`refused by peer: ${refusal.code}`);
  }

  private onGossip(peers: readonly PeerInfoWire[]): void {
    for (const p of peers) {
      if (p.serverId === this.serverId || p.clusterUrl === '' || this.active.has(p.serverId)) continue;
      if (this.options.faultsEnabled && this.faults.isPartitioned(p.serverName)) continue;
      this.addRoute(p.clusterUrl, false);
    }
  }

  private checkLinks(): void {
    const now = Date.now();
    for (const link of [...this.links]) {
      if (now - link.lastReceivedMs > this.staleAfterMs) {
        link.close(link.state === 'handshake' ? 'handshake timed out' : 'stale link: nothing received');
      } else if (link.state === 'active' && now - link.lastSentMs >= this.pingIntervalMs) {
        link.send({ ping: { sentMs: now } });
      }
    }
  }
}

function emptyTraffic(serverName: string): PeerTraffic {
  return { serverName, framesSent: 0, framesReceived: 0, bytesSent: 0, bytesReceived: 0, linksEstablished: 0, linksLost: 0, reconnects: 0, replacing: false, lastReceivedMs: 0, connected: false };
}

function dialerOf(link: PeerLink, selfId: string): string {
  return link.outbound ? selfId : link.peer!.serverId;
}

function refusalOf(reason: string): string | null {
  const m = /^refused: (\w+)/.exec(reason);
  return m ? m[1]! : null;
}

function viewOf(link: PeerLink): PeerView {
  const p = link.peer!;
  return {
    serverId: p.serverId,
    serverName: p.serverName,
    clientUrl: p.clientUrl,
    wsUrl: p.wsUrl ?? '',
    tags: p.tags ?? [],
    clusterUrl: p.clusterUrl,
    raftNodeId: p.raftNodeId,
    outbound: link.outbound,
    accounts: p.accounts === true,
    link: {
      id: link.id,
      openedMs: link.openedMs,
      lastActivityMs: Math.max(link.lastReceivedMs, link.lastSentMs),
      pendingBytes: link.pendingBytes,
      framesSent: link.framesSent,
      framesReceived: link.framesReceived,
      bytesSent: link.bytesSent,
      bytesReceived: link.bytesReceived,
    },
  };
}

function peerInfoOf(h: HelloFrame): PeerInfoWire {
  return { serverId: h.serverId, serverName: h.serverName, clusterUrl: h.clusterUrl, clientUrl: h.clientUrl };
}

/** A wildcard listen address advertises the given host, else the first external IPv4 address, else loopback. */
export function advertisedHost(listenHost: string, advertise?: string): string {
  if (advertise) return advertise;
  if (listenHost !== '' && listenHost !== '0.0.0.0' && listenHost !== '::') return listenHost;
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** A stable positive 31-bit Raft NodeId from a server name (FNV-1a), so a restarted node keeps its id. */
export function raftNodeIdFor(serverName: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < serverName.length; i++) {
    h ^= serverName.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 1) || 1;
}
