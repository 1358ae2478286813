// The broker process on one node: the client listener, core routing, monitoring, and shutdown.
import { createServer, type Server as NetServer, type Socket, type AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { machineSizedLimits, type JetStreamServerLimits } from './jetstream-machine-limits.js';
import { setDamageObserver } from '@flotilla/store';
import { encodeInfo, encodeErr, ERR_MAX_CONNECTIONS } from '@flotilla/protocol';
import type { JetStreamService } from '@flotilla/jetstream';
import type { ServerOptions } from './config/options.js';
import { ClientAuth } from './client-auth.js';
import { OperatorAuth } from './operator/operator-auth.js';
import { AuthCallout } from './operator/auth-callout.js';
import { ClientConnection } from './client-connection.js';
import { ClientTls } from './security/client-tls.js';
import type { ClientHost } from './client-host.js';
import { MessageRouter } from './message-router.js';
import { Accounts } from './accounts/accounts.js';
import { systemAccountName } from './config/system-account-name.js';
import { accountsBesidesSystem } from './config/system-account-only.js';
import { SystemAccount } from './system-account/system-account.js';
import { ServerInfoStamp } from './system-account/server-info.js';
import { newNonce } from './security/nkey-signature.js';
import type { MonitoringServer } from './monitoring.js';
import { PortsFile } from './ports-file.js';
import { newServerKeys } from './server-id.js';
import { ADVERTISED_NATS_VERSION, PROTOCOL_VERSION } from './version.js';
// Cluster code (gRPC, protobufjs), JetStream and monitoring load only when configured: a core-only node
// then runs in ~10-20 MB less memory.
import type { ClusterRouting } from './cluster/cluster-routing.js';
import type { FaultControl } from './cluster/fault-control.js';
import type { JetStreamClusterEnvironment } from './cluster/jetstream-environment.js';
import type { AccountJetStreams } from './accounts/account-jetstreams.js';
import type { UpgradedClient, WebsocketListener } from './websocket/websocket-listener.js';
import { websocketAuthOf } from './websocket/websocket-auth.js';
import { clientAdvertiseUrl } from './cluster/advertise-url.js';
import type { LeafNodes } from './leafnode/leaf-nodes.js';

export interface ClosedConnectionRecord {
  cid: number;
  ip: string;
  port: number;
  startMs: number;
  stopMs: number;
  reason: string;
  name: string;
  /** /connz `type` */
  type: 'nats' | 'websocket';
  /** the account and user at close (/connz?state=closed&acc=, auth) */
  account: string;
  user: string;
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
}

const CLOSED_CONNECTIONS_KEPT = 1000;

export class FlotillaServer implements ClientHost {
  /** the server's nkey pair: serverId is its public key, and it signs auth callout requests */
  readonly serverKeys = newServerKeys();
  readonly serverId = this.serverKeys.getPublicKey();
  /** Numbers the message trace events this server sends, made on the first one. */
  private traceStamp: ServerInfoStamp | null = null;
  readonly serverName: string;
  /** replaced by a config reload (config-reload.ts) */
  auth: ClientAuth;
  readonly router = new MessageRouter();
  /** $G (on `router`) and the accounts of `accounts {}`, each with its own router */
  readonly accounts: Accounts;
  traceEnabled: boolean;
  readonly startMs = Date.now();
  /** when the options were last loaded: start, then each successful reload (/varz config_load_time) */
  configLoadMs = Date.now();
  readonly clients = new Map<number, ClientConnection>();
  /** Recently closed connections for /connz?state=closed; bounded ring. */
  readonly closedClients: ClosedConnectionRecord[] = [];
  totalConnections = 0;
  slowConsumers = 0;
  /** Connections closed for missing PINGs (nats-server's stale_connections). */
  staleConnections = 0;
  /** Traffic of the client connections closed so far (with the open ones': /varz in_client_msgs …). */
  readonly closedClientTraffic = { inMsgs: 0, outMsgs: 0, inBytes: 0, outBytes: 0 };
  private nextCid = 1;
  private readonly listener: NetServer;
  private monitoring: MonitoringServer | null = null;
  /** JetStream on this node, when enabled (`-js` / `jetstream {}`); with accounts, the first JetStream account's. */
  jetstream: JetStreamService | null = null;
  /** JetStream's server limits in force: the configured ones, else sized from the machine at start (jetstream-machine-limits.ts). */
  jetStreamLimits: JetStreamServerLimits | null = null;
  /** With `accounts {}` and JetStream: each JetStream-enabled account's own JetStream (one node). */
  accountJetStreams: AccountJetStreams | null = null;
  private portsFile: PortsFile | null = null;
  /** Routes to the other nodes, when clustering is configured (`--cluster`/`--routes`/`cluster {}`). */
  cluster: ClusterRouting | null = null;
  private faultControl: FaultControl | null = null;
  /** Clustered JetStream's Raft plumbing (log store, transport), when JetStream runs in a cluster. */
  private jsEnvironment: JetStreamClusterEnvironment | null = null;
  private dirty: ClientConnection[] = [];
  private flushScheduled = false;
  private clientPort = 0;
  /** client TLS when configured (tls {} or --tls...) */
  readonly clientTls: ClientTls | null;
  private shuttingDown = false;
  /** `$SYS` on this server (null with no_system_account) */
  readonly system: SystemAccount | null = null;
  /** the `websocket {}` listener, when it has a port */
  private websocket: WebsocketListener | null = null;
  /** who may connect over WebSocket: the websocket block's auth override, or the server's */
  websocketAuth: ClientAuth;
  /** `leafnodes {}`: the leafnode listener and remotes, when configured */
  leafNodes: LeafNodes | null = null;

  constructor(
    readonly options: ServerOptions,
    readonly log: Logger,
  ) {
    this.serverName = options.serverName ?? this.serverId;
    this.accounts = new Accounts(this.router, options.accounts, systemAccountName(options), options.mappings);
    if (this.accounts.system !== null) this.system = new SystemAccount(this, this.accounts.system);
    this.auth = new ClientAuth(options.authorization, options.tls, {
      ...(options.accounts !== undefined ? { accounts: options.accounts } : {}),
      ...(options.noAuthUser !== undefined ? { noAuthUser: options.noAuthUser } : {}),
      ...(options.operator !== undefined
        ? { operator: new OperatorAuth(options.operator, (m) => log.warn(m)), accountCallout: (account: string, user: string) => AuthCallout.ofAccount(this, account, user) }
        : {}),
      ...(options.authorization?.callout !== undefined ? { callout: new AuthCallout(options.authorization.callout, this) } : {}),
    });
    this.websocketAuth = websocketAuthOf(options, this.auth);
    // Unreadable certificate files fail here, before anything listens.
    this.clientTls = options.tls ? new ClientTls(options.tls) : null;
    this.traceEnabled = options.logLevel === 'trace';
    this.listener = createServer({ noDelay: true }, (socket) => this.accept(socket));
  }

  get port(): number {
    return this.clientPort;
  }

  get httpPort(): number {
    return this.monitoring?.port ?? 0;
  }

  /** the WebSocket listener's port (0 without one) and whether it serves TLS */
  get websocketListener(): { port: number; tls: boolean } | null {
    return this.websocket === null ? null : { port: this.websocket.port, tls: this.websocket.tls };
  }

  async start(): Promise<void> {
    const o = this.options;
    // Clustered JetStream needs the cluster links (its Raft transport) first, and they need the client
    // port (connect_urls): listener, cluster, then JetStream. A single node keeps JetStream first.
    // Its subscriptions are in place before the first client can connect.
    this.system?.start();
    const clusteredJs = o.jetstream.enabled && this.clusterConfigured();
    if (o.jetstream.enabled && !clusteredJs) await this.startJetStream();
    await new Promise<void>((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen({ host: o.host, port: o.port < 0 ? 0 : o.port }, () => {
        this.listener.off('error', reject);
        resolve();
      });
    });
    this.clientPort = (this.listener.address() as AddressInfo).port;
    // An accept that fails (out of file descriptors: EMFILE) must not take the process down; the listener goes on.
    this.listener.on('error', (err) => this.log.error({ err: String(err) }, 'client listener error'));
    this.log.info({ host: o.host, port: this.clientPort, serverId: this.serverId, name: this.serverName }, 'listening for client connections');
    await this.startWebsocket();
    await this.startCluster();
    if (o.leafnodes !== undefined) {
      const { startLeafNodes } = await import('./leafnode/start-leaf-nodes.js');
      this.leafNodes = await startLeafNodes(this, o.leafnodes);
    }
    if (clusteredJs) await this.startJetStream();
    if (o.httpPort !== 0) {
      const { MonitoringServer } = await import('./monitoring.js');
      this.monitoring = new MonitoringServer(this);
      await this.monitoring.start(o.httpHost, o.httpPort < 0 ? 0 : o.httpPort);
      this.log.info({ host: o.httpHost, port: this.monitoring.port }, 'listening for monitoring');
    }
    if (o.portsFileDir) {
      this.portsFile = new PortsFile(o.portsFileDir);
      this.portsFile.write({
        nats: PortsFile.urls('nats', o.host, this.clientPort),
        monitoring: this.monitoring ? PortsFile.urls('http', o.httpHost, this.monitoring.port) : [],
        ...(this.cluster && this.cluster.node.port > 0
          ? { cluster: PortsFile.urls('nats', o.cluster!.listen!.host, this.cluster.node.port) }
          : {}),
        ...(this.websocket !== null
          ? { websocket: PortsFile.urls(this.websocket.tls ? 'wss' : 'ws', o.websocket!.host || '0.0.0.0', this.websocket.port) }
          : {}),
      });
    }
    this.log.info({ version: ADVERTISED_NATS_VERSION }, 'server is ready');
  }

  /**
   * Lame-duck mode (ops, lame-duck.ts): new clients are refused (they try the next server) and connected ones
   * get nats-server's INFO with `ldm: true`; they keep being served until closed.
   */
  stopAccepting(): void {
    this.system?.lameDuck();
    if (this.listener.listening) this.listener.close();
    void this.websocket?.close();
    for (const conn of this.clients.values()) if (conn.connected) conn.enqueue(encodeInfo({ ...this.infoFor(conn.cid, conn.remoteIp, conn.type), ldm: true }));
  }

  /** Closes the listener and every connection; idempotent. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.log.info('shutting down');
    // Before the connections close, so the system account's subscribers get it.
    await this.system?.shutdown();
    const closed = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    const websocketClosed = this.websocket?.close();
    for (const conn of [...this.clients.values()]) conn.close('Server Shutdown');
    this.faultControl?.stop();
    const clusteredJs = this.jsEnvironment !== null;
    if (this.jsEnvironment !== null) {
      // Clustered: Raft groups stop before their log store closes and before the links go.
      await (this.accountJetStreams ?? this.jetstream)?.stop();
      await this.jsEnvironment.close().catch((err: unknown) => this.log.warn({ err: String(err) }, 'raft log store close failed'));
    }
    await this.leafNodes?.stop();
    await this.cluster?.stop();
    await this.monitoring?.stop();
    if (this.accountJetStreams !== null) await this.accountJetStreams.stop();
    else if (!clusteredJs) await this.jetstream?.stop();
    await this.auth.close();
    if (this.websocketAuth !== this.auth) await this.websocketAuth.close();
    this.accounts.close();
    this.portsFile?.remove();
    await closed;
    await websocketClosed;
  }

  // ---- ClientHost ----------------------------------------------------------------------------

  scheduleFlush(conn: ClientConnection): void {
    this.dirty.push(conn);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // setImmediate runs after every socket read of this turn, so output batches across publishers.
      setImmediate(this.flushDirty);
    }
  }

  onClientConnected(conn: ClientConnection): void {
    this.system?.clientConnected(conn);
  }

  onAuthFailed(conn: ClientConnection): void {
    this.system?.authFailed(conn, 'Authentication Failure');
  }

  traceServerInfo(): Record<string, unknown> {
    return (this.traceStamp ??= new ServerInfoStamp(this)).next();
  }

  countSlowConsumer(): void {
    this.slowConsumers++;
  }

  onClientClosed(conn: ClientConnection): void {
    this.clients.delete(conn.cid);
    this.closedClients.push({
      cid: conn.cid,
      ip: conn.remoteIp,
      port: conn.remotePort,
      startMs: conn.startMs,
      stopMs: Date.now(),
      reason: conn.closeReason ?? 'Client Closed',
      name: conn.name,
      type: conn.type,
      account: conn.account,
      user: conn.user,
      inMsgs: conn.inMsgs,
      outMsgs: conn.outMsgs,
      inBytes: conn.inBytes,
      outBytes: conn.outBytes,
    });
    if (this.closedClients.length > CLOSED_CONNECTIONS_KEPT) this.closedClients.shift();
    const t = this.closedClientTraffic;
    t.inMsgs += conn.inMsgs;
    t.outMsgs += conn.outMsgs;
    t.inBytes += conn.inBytes;
    t.outBytes += conn.outBytes;
    if (conn.closeReason === 'Stale Connection') this.staleConnections++;
    this.system?.clientClosed(conn, conn.closeReason ?? 'Client Closed');
    this.log.debug({ cid: conn.cid, reason: conn.closeReason }, 'client connection closed');
  }

  // ---- internals -----------------------------------------------------------------------------

  private clusterConfigured(): boolean {
    const c = this.options.cluster;
    return c !== undefined && (c.listen !== undefined || c.routes.length > 0);
  }

  private async startJetStream(): Promise<void> {
    const o = this.options;
    mkdirSync(o.jetstream.storeDir, { recursive: true });
    const limits = (this.jetStreamLimits = machineSizedLimits(o.jetstream));
    if (accountsBesidesSystem(o)) return this.startAccountJetStreams();
    // Loaded on demand like the cluster code: a core-only node does not pay for the stores' modules.
    const [{ JetStreamService, serveJetStreamNotEnabled }, { InternalBus }] = await Promise.all([import('@flotilla/jetstream'), import('./internal-bus.js')]);
    // JetStream is never the system account's: nats-server answers its $JS.API with 10039.
    if (this.accounts.system !== null) serveJetStreamNotEnabled(new InternalBus(this.accounts.system.router), o.jetstream.domain || undefined);
    let env: JetStreamClusterEnvironment | undefined;
    if (this.cluster !== null) {
      const { openJetStreamEnvironment } = await import('./cluster/jetstream-environment.js');
      env = await openJetStreamEnvironment(this.cluster, o.jetstream.storeDir, o.cluster?.routes ?? [], this.serverName, o.jetstream.uniqueTag);
      this.jsEnvironment = env;
    }
    const js = new JetStreamService(
      // In a cluster every JetStream subscription is announced: requests and publishes reach it from any node.
      new InternalBus(this.router, env !== undefined),
      {
        storeDir: o.jetstream.storeDir,
        maxMemoryStoreBytes: limits.memoryBytes,
        maxFileStoreBytes: limits.fileBytes,
        ...(o.jetstream.domain ? { domain: o.jetstream.domain } : {}),
        ...(o.jetstream.syncIntervalMs !== undefined ? { fileSync: { intervalMs: o.jetstream.syncIntervalMs } } : {}),
        serverName: this.serverName,
        serverId: this.serverId,
        ...(env !== undefined ? { cluster: env } : {}),
      },
      this.log.child({ component: 'jetstream' }),
    );
    const jsLog = this.log.child({ component: 'jetstream' });
    // Damage found while the stores open: every lost run is logged (and counted in /metrics, /jsz).
    setDamageObserver((d) => jsLog.error(d, 'stream store damage: records in this run are lost'));
    await js.start();
    this.jetstream = js;
    this.log.info({ storeDir: o.jetstream.storeDir, clustered: env !== undefined }, 'jetstream started');
  }

  /** One JetStream per JetStream-enabled account (accounts/account-jetstreams.ts); in a cluster each its own meta group. */
  private async startAccountJetStreams(): Promise<void> {
    const { AccountJetStreams } = await import('./accounts/account-jetstreams.js');
    let env: JetStreamClusterEnvironment | undefined;
    if (this.cluster !== null) {
      const { openJetStreamEnvironment } = await import('./cluster/jetstream-environment.js');
      env = await openJetStreamEnvironment(this.cluster, this.options.jetstream.storeDir, this.options.cluster?.routes ?? [], this.serverName, this.options.jetstream.uniqueTag);
      this.jsEnvironment = env;
    }
    const log = this.log.child({ component: 'jetstream' });
    setDamageObserver((d) => log.error(d, 'stream store damage: records in this run are lost'));
    const all = await AccountJetStreams.start({
      accounts: this.accounts,
      configured: this.options.accounts ?? [],
      options: { ...this.options.jetstream, maxMemoryStoreBytes: this.jetStreamLimits!.memoryBytes, maxFileStoreBytes: this.jetStreamLimits!.fileBytes },
      serverName: this.serverName,
      serverId: this.serverId,
      log: this.log,
      ...(env !== undefined ? { cluster: env } : {}),
    });
    this.accountJetStreams = all;
    this.jetstream = all.first;
    this.log.info({ storeDir: this.options.jetstream.storeDir, accounts: [...all.entries()].map(([name]) => name) }, 'jetstream started');
  }

  private async startCluster(): Promise<void> {
    const c = this.options.cluster;
    if (!this.clusterConfigured() || c === undefined) return;
    const [{ advertisedHost }, { ClusterRouting }, { FaultControl, faultHookEnabled }, { clusterSecurityOf }] = await Promise.all([
      import('@flotilla/cluster'),
      import('./cluster/cluster-routing.js'),
      import('./cluster/fault-control.js'),
      import('./cluster/cluster-security.js'),
    ]);
    const cluster = new ClusterRouting(
      this.router,
      {
        clusterName: c.name ?? '',
        serverName: this.serverName,
        serverId: this.serverId,
        // no_advertise: peers are not told this node's client URL either (nats-server's route INFO leaves it out).
        clientUrl: c.noAdvertise === true ? '' : clientAdvertiseUrl(this.options.clientAdvertise, advertisedHost(this.options.host), this.clientPort),
        ...(this.websocket !== null ? { wsUrl: this.options.websocket?.advertise || `${advertisedHost(this.options.websocket?.host || '0.0.0.0')}:${this.websocket.port}` } : {}),
        ...(c.listen ? { listen: c.listen } : {}),
        ...(this.options.serverTags !== undefined ? { tags: this.options.serverTags } : {}),
        ...(c.advertise !== undefined ? { advertise: c.advertise } : {}),
        routes: c.routes,
        faultsEnabled: faultHookEnabled(),
        security: clusterSecurityOf(c),
        accounts: [...this.accounts.all()].filter((a) => a !== this.accounts.global),
      },
      this.log.child({ component: 'cluster' }),
    );
    cluster.traceServerInfo = () => this.traceServerInfo();
    // nats-server sends an async INFO with the new connect_urls whenever the set changes.
    cluster.onConnectUrlsChanged = () => {
      for (const conn of this.clients.values()) if (conn.connected) conn.enqueue(encodeInfo(this.infoFor(conn.cid, conn.remoteIp, conn.type)));
    };
    await cluster.start();
    this.cluster = cluster;
    this.system?.clusterStarted();
    if (faultHookEnabled()) {
      this.faultControl = new FaultControl(this.router, cluster.node);
      this.faultControl.start();
      this.log.warn({ subject: `$FLOTILLA.FAULT.${this.serverName}` }, 'cluster fault hook enabled');
    }
  }

  private readonly flushDirty = (): void => {
    this.flushScheduled = false;
    const dirty = this.dirty;
    this.dirty = [];
    for (let i = 0; i < dirty.length; i++) {
      const conn = dirty[i]!;
      try {
        conn.flush();
      } catch (err) {
        conn.closeOnInternalError(err, 'output');
      }
    }
  };

  private accept(raw: Socket): void {
    const cid = this.nextCid++;
    if (this.shuttingDown) {
      raw.destroy();
      return;
    }
    const nonce = this.auth.noncesRequired ? newNonce() : null;
    const info = encodeInfo({ ...this.infoFor(cid, raw.remoteAddress ?? ''), ...(nonce !== null ? { nonce } : {}) });
    if (this.clients.size >= this.options.maxConnections) {
      // nats-server still speaks first: INFO, then the -ERR, then the close.
      raw.on('error', () => undefined);
      raw.write(info);
      raw.end(encodeErr(ERR_MAX_CONNECTIONS));
      this.log.info({ cid, max: this.options.maxConnections }, 'maximum connections exceeded');
      return;
    }
    let socket: Socket = raw;
    let secured = true;
    if (this.clientTls !== null) {
      // INFO in plain text, then the client's handshake (nats-server 2.9).
      raw.write(info);
      secured = false;
      socket = this.clientTls.upgrade(
        raw,
        () => (secured = true),
        (why) => {
          this.log.error({ cid, ip: raw.remoteAddress, err: why }, 'TLS handshake error');
          conn.close('TLS Handshake Failure');
        },
      );
    }
    const conn = new ClientConnection(cid, socket, this, nonce);
    this.clients.set(cid, conn);
    this.totalConnections++;
    socket.on('data', (chunk: Buffer) => conn.onData(chunk));
    socket.on('end', () => conn.close(secured ? 'Client Closed' : 'TLS Handshake Failure'));
    socket.on('error', (err) => {
      if (!secured) {
        this.log.error({ cid, ip: raw.remoteAddress, err: err.message }, 'TLS handshake error');
        return conn.close('TLS Handshake Failure');
      }
      this.log.debug({ cid, err: err.message }, 'client socket error');
      conn.close('Client Closed');
    });
    socket.on('close', () => conn.close(secured ? 'Client Closed' : 'TLS Handshake Failure'));
    this.log.debug({ cid, ip: socket.remoteAddress, port: socket.remotePort }, 'client connection created');
    conn.start(this.clientTls !== null ? null : info);
  }

  private async startWebsocket(): Promise<void> {
    const wo = this.options.websocket;
    if (wo === undefined || wo.port === 0) return;
    const { WebsocketListener } = await import('./websocket/websocket-listener.js');
    const log = this.log.child({ component: 'websocket' });
    this.websocket = new WebsocketListener(wo, this.options.maxPayloadBytes, log, (client) => this.acceptWebsocket(client));
    await this.websocket.start();
    const scheme = this.websocket.tls ? 'wss' : 'ws';
    this.log.info({ url: `${scheme}://${wo.host || '0.0.0.0'}:${this.websocket.port}` }, 'listening for websocket clients');
    if (!this.websocket.tls) this.log.warn('websocket not configured with TLS. DO NOT USE IN PRODUCTION!');
  }

  /** An upgraded WebSocket: the ordinary client connection, over the frame adapter, with the websocket block's auth. */
  private acceptWebsocket({ ws, transport }: UpgradedClient): void {
    const cid = this.nextCid++;
    if (this.shuttingDown) {
      ws.terminate();
      return;
    }
    const auth = this.websocketAuth;
    const nonce = auth.noncesRequired ? newNonce() : null;
    const ip = transport.remoteAddress ?? '';
    const info = encodeInfo({ ...this.infoFor(cid, ip, 'websocket'), ...(nonce !== null ? { nonce } : {}) });
    if (this.clients.size >= this.options.maxConnections) {
      ws.on('error', () => undefined);
      ws.send(info);
      ws.send(encodeErr(ERR_MAX_CONNECTIONS));
      ws.close(1008, 'Maximum Connections Exceeded');
      // a client that does not answer the close frame is not waited for (ws would wait 30 s)
      setTimeout(() => ws.terminate(), 1000).unref();
      this.log.info({ cid, max: this.options.maxConnections }, 'maximum connections exceeded');
      return;
    }
    const conn = new ClientConnection(cid, transport, this, nonce, auth, 'websocket');
    transport.closeReason = () => conn.closeReason;
    this.clients.set(cid, conn);
    this.totalConnections++;
    ws.on('message', (data: Buffer) => conn.onData(data));
    ws.on('close', () => conn.close('Client Closed'));
    ws.on('error', (err: Error & { code?: string }) => {
      // ws has already sent its close frame (1002 and the like) for a frame it refused
      this.log.debug({ cid, err: err.message, code: err.code }, 'websocket error');
      const tooBig = err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
      conn.close(tooBig ? 'Maximum Message Payload Exceeded' : err.code?.startsWith('WS_ERR_') ? 'Protocol Violation' : 'Client Closed');
    });
    this.log.debug({ cid, ip, port: transport.remotePort }, 'websocket client connection created');
    conn.start(info, this.options.websocket?.pingIntervalMs ?? this.options.pingIntervalMs);
  }

  /** INFO as nats-server sends it; a WebSocket client's names the websocket listener, its TLS and auth. */
  private infoFor(cid: number, remoteIp: string, type: 'nats' | 'websocket' = 'nats'): Record<string, unknown> {
    if (type === 'websocket') return this.websocketInfoFor(cid, remoteIp);
    const o = this.options;
    const info: Record<string, unknown> = {
      server_id: this.serverId,
      server_name: this.serverName,
      version: ADVERTISED_NATS_VERSION,
      proto: PROTOCOL_VERSION,
      go: `node${process.version}`,
      host: o.host,
      port: this.clientPort,
      headers: true,
      ...(this.auth.required ? { auth_required: true } : {}),
      ...(this.clientTls !== null ? { tls_required: true } : {}),
      ...(this.clientTls?.verify ? { tls_verify: true } : {}),
      max_payload: o.maxPayloadBytes,
      jetstream: this.jetstream !== null || this.accountJetStreams !== null,
      client_id: cid,
      client_ip: remoteIp.replace(/^::ffff:/, ''),
    };
    const clusterName = this.cluster?.node.clusterName || o.cluster?.name;
    if (clusterName) info['cluster'] = clusterName;
    // no_advertise: clients learn no other server from this one (nats-server omits connect_urls).
    if (this.cluster && o.cluster?.noAdvertise !== true) info['connect_urls'] = this.cluster.connectUrls();
    return info;
  }

  private websocketInfoFor(cid: number, remoteIp: string): Record<string, unknown> {
    const info = this.infoFor(cid, remoteIp);
    const ws = this.websocket;
    info['host'] = this.options.websocket?.host ?? '';
    info['port'] = ws?.port ?? 0;
    delete info['tls_required'];
    delete info['tls_verify'];
    if (ws?.tls === true) {
      info['tls_required'] = true;
      info['tls_available'] = true;
    }
    delete info['auth_required'];
    if (this.websocketAuth.required) info['auth_required'] = true;
    // the cluster's websocket URLs, as nats-server gives them to WebSocket clients
    if (this.cluster && this.options.cluster?.noAdvertise !== true) info['connect_urls'] = this.cluster.wsConnectUrls();
    else delete info['connect_urls'];
    return info;
  }
}
