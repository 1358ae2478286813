// The system account on this server (nats-server's `internal` in events.go): its internal clients answer
// `$SYS.REQ.*` for the system account's users and, through the system imports, each account's own
// requests; it publishes the client events, the STATSZ heartbeat and the shutdown and lame-duck events.
// Nothing of it is visible outside the system account except what the imports give every account.
import type { Account } from '../accounts/account.js';
import type { ClientConnection } from '../client-connection.js';
import { CpuPercent } from '../cpu-percent.js';
import { serveClaimRequests } from './claims-requests.js';
import type { FlotillaServer } from '../server.js';
import { accountStat, connectionsOf } from './account-figures.js';
import { connectEvent, disconnectEvent, newEventId } from './client-events.js';
import { filteredOut, type EventFilter } from './event-filter.js';
import { accountEndpoints, serverEndpoints, statzOrSkip } from './endpoints.js';
import { InternalClient, type SystemRequest } from './internal-client.js';
import { acceptedEncoding, encodeAnswer } from './response-encoding.js';
import { ServerInfoStamp } from './server-info.js';
import { serverStats } from './statsz.js';
import { StatszHeartbeat } from './statsz-heartbeat.js';
import {
  ACCOUNT_REQ_ACCOUNT_TOKEN,
  ACCOUNT_REQ_TOKENS,
  SERVER_PING,
  accountConns,
  accountConnsOld,
  accountDirect,
  accountPing,
  authError,
  connectEvent as connectSubject,
  disconnectEvent as disconnectSubject,
  serverDirect,
  serverPing,
  serverStatsz,
  serverShutdown,
} from './subjects.js';
import { importsFor, type ImportedEndpoint } from './system-imports.js';
import { userInfo } from './user-info.js';
import { requestOptions, zAnswer, type Endpoint } from './z-request.js';

const ACCOUNT_CONNS_TYPE = 'io.nats.server.advisory.v1.account_connections';

export class SystemAccount {
  private readonly stamp: ServerInfoStamp;
  private readonly cpu = new CpuPercent();
  private readonly sys: InternalClient;
  private readonly clients: InternalClient[] = [];
  private readonly heartbeat: StatszHeartbeat;
  private peerHook: (() => void) | null = null;
  private stopClaimSync: () => void = () => {};
  private stopped = false;
  private readonly wiredRouters = new WeakSet<object>();
  private readonly failed = (err: unknown, subject: string): void => {
    const e = err instanceof Error ? err : new Error(String(err));
    this.server.log.error({ subject, err: e.message, stack: e.stack }, 'system account request failed');
  };

  constructor(
    private readonly server: FlotillaServer,
    readonly account: Account,
  ) {
    this.stamp = new ServerInfoStamp(server);
    this.sys = new InternalClient(account.router, this.failed);
    this.clients.push(this.sys);
    this.heartbeat = new StatszHeartbeat(() => this.broadcastStatsz());
  }

  start(): void {
    const s = this.server;
    const sys = this.sys;
    sys.subscribe(SERVER_PING, (r) => this.statsz(sys, r));
    const direct = (name: string, handle: (r: SystemRequest) => void): void => {
      sys.subscribe(serverPing(name), handle);
      sys.subscribe(serverDirect(s.serverId, name), handle);
    };
    direct('STATSZ', (r) => this.statsz(sys, r));
    direct('IDZ', (r) => this.reply(sys, r.reply, JSON.stringify({ name: s.serverName, host: s.options.host, id: s.serverId })));
    for (const [name, endpoint] of Object.entries(serverEndpoints(s, this.cpu))) direct(name, (r) => this.answer(sys, r, endpoint));
    for (const [name, endpointFor] of Object.entries(accountEndpoints(s))) {
      sys.subscribe(accountDirect('*', name), (r) => {
        const account = accountOf(r.subject);
        if (account !== null) this.answer(sys, r, endpointFor(account));
      });
    }
    sys.subscribe(accountDirect('*', 'CONNS'), (r) => this.conns(r));
    sys.subscribe(accountPing('STATZ'), (r) =>
      this.answer(sys, r, (o) => statzOrSkip(s, Array.isArray(o['accounts']) ? (o['accounts'] as string[]) : [], o['include_unused'] === true)),
    );
    for (const account of s.accounts.all()) this.wireImports(account);
    if (s.auth.operator !== undefined) this.stopClaimSync = serveClaimRequests(s, s.auth.operator, sys, this.stamp, () => !this.stopped);
    this.heartbeat.start();
  }

  /** Once the cluster links exist (they start after this): a peer that links up gets a STATSZ. */
  clusterStarted(): void {
    const cluster = this.server.cluster;
    if (cluster === null || this.peerHook !== null || this.stopped) return;
    this.peerHook = cluster.addPeerListener((_peer, up) => {
      // after the link's own bookkeeping (interest sync) is done
      if (up) setImmediate(() => this.heartbeat.broadcast());
    });
  }

  /** After CONNECT: `$SYS.ACCOUNT.<acc>.CONNECT`, and the account's connection count. */
  clientConnected(c: ClientConnection): void {
    if (this.stopped) return;
    const subject = connectSubject(c.account);
    this.guarded(subject, () => {
      if (this.sys.hasInterest(subject)) this.sys.publish(subject, JSON.stringify(connectEvent(c, this.stamp.next())));
      this.accountConnsChanged(c.account);
    });
  }

  /** `$SYS.ACCOUNT.<acc>.DISCONNECT` for every client that goes, with its account at the time. */
  clientClosed(c: ClientConnection, reason: string): void {
    if (this.stopped) return;
    const subject = disconnectSubject(c.account);
    this.guarded(subject, () => {
      if (this.sys.hasInterest(subject)) this.sys.publish(subject, JSON.stringify(disconnectEvent(c, this.stamp.next(), reason)));
      if (c.connected) this.accountConnsChanged(c.account);
    });
  }

  /** `$SYS.SERVER.<id>.CLIENT.AUTH.ERR` when a client fails authentication. */
  authFailed(c: ClientConnection, reason: string): void {
    if (this.stopped) return;
    const subject = authError(this.server.serverId);
    this.guarded(subject, () => {
      if (this.sys.hasInterest(subject)) this.sys.publish(subject, JSON.stringify(disconnectEvent(c, this.stamp.next(), reason)));
    });
  }

  /** `$SYS.SERVER.<id>.LAMEDUCK`: this server is going away. */
  lameDuck(): void {
    if (!this.stopped) this.sys.publish(`$SYS.SERVER.${this.server.serverId}.LAMEDUCK`, JSON.stringify(this.stamp.next()));
  }

  /**
   * `$SYS.SERVER.<id>.SHUTDOWN` (before the connections close, so its subscribers get it), then silence. Resolves
   * once the cluster links have written it: a link closing drops what it has not flushed yet (its flush runs
   * on setImmediate, so one turn later it is out).
   */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    const routed = this.sys.publish(serverShutdown(this.server.serverId), JSON.stringify(this.stamp.next()));
    this.stopped = true;
    this.heartbeat.stop();
    this.stopClaimSync();
    this.peerHook?.();
    for (const c of this.clients) c.close();
    if (routed && this.server.cluster !== null) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  // ---- requests ------------------------------------------------------------------------------

  /** nats-server's zReq; `compressible`: a successful answer honours Accept-Encoding (USER.INFO's does not). */
  private answer(client: InternalClient, r: SystemRequest, endpoint: Endpoint, compressible = true): void {
    if (r.reply === null || this.stopped) return;
    const answer = zAnswer(this.server, this.stamp, r.body, endpoint);
    if (answer === null) return;
    const encoded = encodeAnswer(answer.json, compressible && !answer.failed ? acceptedEncoding(r.header) : 'none');
    client.publishMessage(r.reply, encoded.header, encoded.body);
  }

  private reply(client: InternalClient, reply: string | null, json: string): void {
    if (reply !== null && !this.stopped) client.publish(reply, json);
  }

  /** nats-server's statszReq: no reply means "broadcast on the STATSZ subject" (the rate window cleared first). */
  private statsz(client: InternalClient, r: SystemRequest): void {
    if (r.reply === null && r.body.length === 0) return this.heartbeat.broadcastNow();
    let options: Record<string, unknown>;
    try {
      options = requestOptions(r.body);
    } catch (err) {
      return this.reply(client, r.reply ?? serverStatsz(this.server.serverId), JSON.stringify({ server: this.stamp.next(), error: { code: 400, description: (err as Error).message } }));
    }
    if (filteredOut(this.server, options as EventFilter)) return;
    if (r.reply === null) return this.heartbeat.broadcastNow();
    this.reply(client, r.reply, this.statszJson());
  }

  private broadcastStatsz(): void {
    const subject = serverStatsz(this.server.serverId);
    // Nobody listening here or on a peer: nats-server's publish would reach no one (and its internal client's
    // messages are not in /varz in_msgs); Flotilla's router counts every publish, so it is not made.
    this.guarded(subject, () => {
      if (!this.stopped && this.sys.hasInterest(subject)) this.sys.publish(subject, this.statszJson());
    });
  }

  private statszJson(): string {
    return JSON.stringify({ server: this.stamp.next(), statsz: serverStats(this.server, this.cpu.sample()) });
  }

  /** nats-server's connsRequest: an account's connection count, only from a server that has some. */
  private conns(r: SystemRequest): void {
    const name = accountOf(r.subject);
    if (name === null || r.reply === null) return;
    let asked: Record<string, unknown>;
    try {
      asked = requestOptions(r.body);
    } catch {
      return;
    }
    if (asked['acc'] !== undefined && asked['acc'] !== name) return;
    const account = this.server.accounts.find(name);
    if (account === undefined || connectionsOf(this.server, name).length === 0) return;
    this.reply(this.sys, r.reply, this.accountConnsJson(account));
  }

  private accountConnsJson(account: Account): string {
    return JSON.stringify({ type: ACCOUNT_CONNS_TYPE, id: newEventId(), timestamp: new Date().toISOString(), server: this.stamp.next(), ...accountStat(this.server, account) });
  }

  /** nats-server's accConnsUpdate: every account but the global one, on both subjects. */
  private accountConnsChanged(name: string): void {
    if (name === this.server.accounts.global.name) return;
    const account = this.server.accounts.find(name);
    if (account === undefined) return;
    for (const subject of [accountConnsOld(name), accountConns(name)]) {
      if (this.sys.hasInterest(subject)) this.sys.publish(subject, this.accountConnsJson(account));
    }
  }

  /** The system imports of `account`, answered in its own subject space. */
  /** An account a config reload added gets the system account's imports as the configured ones did. */
  accountAdded(account: Account): void {
    if (!this.stopped) this.wireImports(account);
  }

  private wireImports(account: Account): void {
    // an account removed and added again by reloads keeps its router, and with it these subscriptions
    if (this.wiredRouters.has(account.router)) return;
    this.wiredRouters.add(account.router);
    const imports = importsFor(this.server, account);
    if (imports.length === 0) return;
    const client = account === this.account ? this.sys : new InternalClient(account.router, this.failed);
    if (client !== this.sys) this.clients.push(client);
    const endpoints = accountEndpoints(this.server);
    const handlers: Record<ImportedEndpoint, (r: SystemRequest) => void> = {
      CONNZ: (r) => this.answer(client, r, endpoints['CONNZ']!(account.name)),
      STATZ: (r) => this.answer(client, r, endpoints['STATZ']!(account.name)),
      'USER.INFO': (r) => {
        const requester = this.server.clients.get(r.publisherCid);
        if (requester === undefined || requester.account !== account.name) return;
        this.answer(client, r, () => userInfo(requester), false);
      },
    };
    // USER.INFO reads the requester's connection, which only its own node has (a peer would find another client by its cid).
    for (const imp of imports) client.subscribe(imp.local, handlers[imp.endpoint], imp.endpoint === 'USER.INFO' ? 'local' : 'cluster');
  }

  /** Events come from the connection and timer paths: a bug building one is logged, never thrown there. */
  private guarded(subject: string, publish: () => void): void {
    try {
      publish();
    } catch (err) {
      this.failed(err, subject);
    }
  }
}

/** The account token of `$SYS.REQ.ACCOUNT.<acc>.<endpoint>`, null for a malformed subject. */
function accountOf(subject: string): string | null {
  const tokens = subject.split('.');
  return tokens.length === ACCOUNT_REQ_TOKENS ? tokens[ACCOUNT_REQ_ACCOUNT_TOKEN]! : null;
}
