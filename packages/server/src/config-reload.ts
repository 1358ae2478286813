// SIGHUP / `--signal reload`: read the config file again, as nats-server's Reload. The new options are
// resolved exactly as at start (same flags over the same file), diffed against the running ones
// (config-reload-diff.ts), and every change is applied through the component that owns it — the client
// auth, TLS context, routes, JetStream limits, account limits and mappings, the logger, the limits each
// connection reads. A config with an error, or a change that cannot happen at run time, fails the reload
// before anything is applied: the old config stays and the reason is logged.
import type { Logger } from 'pino';
import { ClientAuth } from './client-auth.js';
import { AuthCallout } from './operator/auth-callout.js';
import { resolveOptions } from './config/load-options.js';
import type { ServerOptions } from './config/options.js';
import { diffOptions, type ReloadChange } from './config-reload-diff.js';
import { websocketAuthOf } from './websocket/websocket-auth.js';
import { reauthorizeClients } from './config-reload-clients.js';
import { removePidFile, writePidFile } from './pid-file.js';
import { ClientTls } from './security/client-tls.js';
import { reconfigureLogFile, setLogLevel } from './logger.js';
import { SubjectMappings } from './accounts/subject-mappings.js';
import type { FlotillaServer } from './server.js';

export class ReloadFailed extends Error {
  readonly code = 'reload_failed';
}

/** How the running options were resolved, so a reload resolves the new ones the same way. */
export interface ReloadSource {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  readFile?: (path: string) => string;
}

/** One reload at a time; a signal during a reload waits for it (at most one waits: later ones join it). */
export class ConfigReloader {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** routers of reload-added accounts already answering $JS.API with 10039 (an account may come back) */
  private readonly notEnabledServed = new WeakSet<object>();

  constructor(
    private readonly server: FlotillaServer,
    private readonly log: Logger,
    private readonly source: ReloadSource,
  ) {}

  /** Resolves when the reload is applied; rejects (ReloadFailed / ReloadRefused) with the old config kept. */
  reload(): Promise<void> {
    if (this.running === null) return (this.running = this.run().finally(() => (this.running = null)));
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.reload();
      });
    return this.queued;
  }

  private async run(): Promise<void> {
    const server = this.server;
    if (server.options.configFile === undefined) throw new ReloadFailed('can only reload config when a file is provided using -c or --config');
    const resolved = resolveOptions([...this.source.argv], this.source.env, this.source.readFile);
    if (resolved.kind === 'config-error') throw new ReloadFailed(resolved.message);
    if (resolved.kind === 'usage-error') throw new ReloadFailed(resolved.message);
    if (resolved.kind !== 'run') throw new ReloadFailed(`unexpected result of reading the options: ${resolved.kind}`);
    const next = resolved.options;
    carryGeneratedNoAuthUser(server.options, next);
    // Accounts exist before the auth that logs users into them, and go after it closed their clients.
    const changes = diffOptions(server.options, next).sort((a, b) => APPLY_ORDER[a.kind] - APPLY_ORDER[b.kind]);
    // Everything that can fail is built before anything is applied.
    const tlsChange = changes.some((c) => c.kind === 'tls') && next.tls !== undefined;
    if (tlsChange) new ClientTls(next.tls!);
    const auth = changes.some((c) => c.kind === 'authorization')
      ? new ClientAuth(next.authorization, next.tls, {
          ...(next.accounts !== undefined ? { accounts: next.accounts } : {}),
          ...(next.noAuthUser !== undefined ? { noAuthUser: next.noAuthUser } : {}),
          // operator mode (the JWT trust and the accounts pushed since start) carries over; auth callout is the new config's
          ...withoutCallout(server.auth.delegates()),
          ...(next.authorization?.callout !== undefined ? { callout: new AuthCallout(next.authorization.callout, server) } : {}),
        })
      : null;
    for (const w of resolved.warnings) this.log.warn(w);
    for (const change of changes) await this.apply(change, next, auth);
    if (changes.some((c) => c.kind === 'accountLinks' || c.kind === 'accountLimits' || c.kind === 'mappings' || c.kind === 'accountsAdded' || c.kind === 'accountsRemoved')) setOrDelete(server.options, 'accounts', next.accounts);
    server.configLoadMs = Date.now();
    this.log.info({ changes: changes.map(describe) }, 'Reloaded server configuration');
  }

  private async apply(change: ReloadChange, next: ServerOptions, auth: ClientAuth | null): Promise<void> {
    const server = this.server;
    const o = server.options;
    switch (change.kind) {
      case 'limit': {
        o[change.key] = change.value;
        if (change.key === 'maxPayloadBytes' || change.key === 'maxControlLineBytes') for (const c of server.clients.values()) c.reloadLimits();
        if (change.key === 'pingIntervalMs') for (const c of server.clients.values()) c.armPingTimer();
        if (change.key === 'maxConnections') this.closeOverMaxConnections(change.value);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      }
      case 'logLevel':
        o.logLevel = change.level;
        setLogLevel(this.log, change.level);
        server.traceEnabled = change.level === 'trace';
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      case 'authorization': {
        const old = server.auth;
        const oldWebsocket = server.websocketAuth;
        server.auth = auth!;
        setOrDelete(o, 'authorization', next.authorization);
        setOrDelete(o, 'noAuthUser', next.noAuthUser);
        setOrDelete(o, 'accounts', next.accounts);
        // The websocket block's override is built over the server's users: rebuild it over the new ones.
        server.websocketAuth = websocketAuthOf(o, auth!);
        const clients = [...server.clients.values()];
        const global = server.accounts.global.name;
        const counts = await reauthorizeClients(clients.filter((c) => c.usesServerAuth), auth!, old, global, this.log);
        const overridden = clients.filter((c) => !c.usesServerAuth);
        if (overridden.length > 0) {
          const more = await reauthorizeClients(overridden, server.websocketAuth, oldWebsocket, global, this.log);
          counts.kept += more.kept;
          counts.closedMoved += more.closedMoved;
          counts.closedUnauthorized += more.closedUnauthorized;
          counts.subscriptionsRemoved += more.subscriptionsRemoved;
        }
        if (oldWebsocket !== old) await oldWebsocket.close();
        await old.close();
        this.log.info(counts, 'Reloaded: authorization users');
        return;
      }
      case 'logFile':
        reconfigureLogFile(this.log, change.path, { sizeLimitBytes: change.sizeLimitBytes, maxFiles: change.maxFiles });
        o.logFile = change.path;
        setOrDelete(o, 'logSizeLimitBytes', next.logSizeLimitBytes);
        setOrDelete(o, 'logMaxFiles', next.logMaxFiles);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      case 'tls':
        server.clientTls?.reload(next.tls!);
        o.tls = next.tls!;
        this.log.info('Reloaded: tls');
        return;
      case 'routesAdded':
        for (const route of change.routes) server.cluster?.node.addRoute(route, true);
        o.cluster!.routes = [...next.cluster!.routes];
        this.log.info({ routes: change.routes }, 'Reloaded: cluster routes');
        return;
      case 'routesRemoved':
        for (const route of change.routes) server.cluster?.node.removeRoute(route);
        o.cluster!.routes = [...next.cluster!.routes];
        for (const route of change.routes) this.log.info(`Removed route ${route}`);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      case 'jetstreamLimits': {
        const services = server.accountJetStreams !== null ? [...server.accountJetStreams.entries()].map(([, js]) => js) : server.jetstream ? [server.jetstream] : [];
        for (const js of services) {
          js.options.maxMemoryStoreBytes = change.maxMemoryStoreBytes;
          js.options.maxFileStoreBytes = change.maxFileStoreBytes;
        }
        o.jetstream.maxMemoryStoreBytes = change.maxMemoryStoreBytes;
        o.jetstream.maxFileStoreBytes = change.maxFileStoreBytes;
        server.jetStreamLimits = { memoryBytes: change.maxMemoryStoreBytes, fileBytes: change.maxFileStoreBytes };
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      }
      case 'accountLimits': {
        const limits = next.accounts!.find((a) => a.name === change.account)!.limits!;
        const account = server.accounts.find(change.account);
        if (account?.limits) Object.assign(account.limits, limits);
        for (const c of server.clients.values()) if (c.account === change.account) c.reloadLimits();
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      }
      case 'mappings': {
        const mappings = change.account === null ? next.mappings : next.accounts!.find((a) => a.name === change.account)!.mappings;
        const account = change.account === null ? server.accounts.global : server.accounts.find(change.account);
        if (account) account.router.mappings = mappings !== undefined && mappings.length > 0 ? new SubjectMappings(mappings) : null;
        if (change.account === null) setOrDelete(o, 'mappings', next.mappings);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      }
      case 'accountsAdded':
        for (const name of change.names) await this.addAccount(next, name);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      case 'accountsRemoved':
        for (const name of change.names) {
          for (const c of [...server.clients.values()]) if (c.account === name) c.close('Client Closed');
          server.accounts.remove(name);
        }
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
      case 'accountLinks':
        server.accounts.rewire(next.accounts ?? []);
        this.log.info('Reloaded: accounts imports and exports');
        return;
      case 'pidFile':
        // nothing fails half-way through applying: an unwritable pid file is logged, the reload goes on
        try {
          if (change.newPath) writePidFile(change.newPath);
        } catch (err) {
          this.log.error({ err: (err as Error).message }, `Could not write pidfile ${change.newPath}`);
        }
        if (change.oldPath && change.oldPath !== change.newPath) removePidFile(change.oldPath);
        setOrDelete(o, 'pidFile', change.newPath);
        this.log.info(`Reloaded: ${describe(change)}`);
        return;
    }
  }

  /** An account without JetStream: its subject space, routed to the peers, with the system account's imports and JetStream's 10039. */
  private async addAccount(next: ServerOptions, name: string): Promise<void> {
    const server = this.server;
    const account = server.accounts.add(next.accounts!.find((a) => a.name === name)!);
    server.cluster?.addAccount(name, account.router);
    server.system?.accountAdded(account);
    if ((server.jetstream !== null || server.accountJetStreams !== null) && !this.notEnabledServed.has(account.router)) {
      this.notEnabledServed.add(account.router);
      const [{ serveJetStreamNotEnabled }, { InternalBus }] = await Promise.all([import('@flotilla/jetstream'), import('./internal-bus.js')]);
      serveJetStreamNotEnabled(new InternalBus(account.router, server.cluster !== null), next.jetstream.domain || undefined);
    }
  }

  /** nats-server closes connections (any ones; here the newest) until the count fits a lowered max_connections. */
  private closeOverMaxConnections(max: number): void {
    const clients = [...this.server.clients.values()];
    const over = clients.length - max;
    if (max <= 0 || over <= 0) return;
    for (const c of clients.slice(-over)) c.close('Maximum Connections Exceeded');
    this.log.info(`Closed ${over} connections to fall within max_connections`);
  }
}

/**
 * A system-account-only config gets a no_auth_user with a random name each time it is read
 * (system-account-only.ts): the running one is kept, or every reload of such a config would be refused.
 */
function carryGeneratedNoAuthUser(old: ServerOptions, next: ServerOptions): void {
  const generated = (o: ServerOptions): boolean =>
    o.noAuthUser !== undefined && /^nats-\d+$/.test(o.noAuthUser) && o.authorization?.users?.length === 1 && o.authorization.users[0]!.user === o.noAuthUser && Object.keys(o.authorization).length === 1;
  if (!generated(old) || !generated(next)) return;
  next.noAuthUser = old.noAuthUser!;
  next.authorization = old.authorization!;
}

function setOrDelete<K extends keyof ServerOptions>(o: ServerOptions, key: K, value: ServerOptions[K] | undefined): void {
  if (value === undefined) delete o[key];
  else o[key] = value;
}

const APPLY_ORDER: Record<ReloadChange['kind'], number> = {
  accountsAdded: 0,
  limit: 1,
  logLevel: 1,
  logFile: 1,
  tls: 1,
  routesAdded: 1,
  routesRemoved: 1,
  jetstreamLimits: 1,
  accountLimits: 1,
  mappings: 1,
  pidFile: 1,
  authorization: 2,
  accountLinks: 3,
  accountsRemoved: 4,
};

const LIMIT_NAMES: Record<string, string> = {
  maxPayloadBytes: 'max_payload',
  maxControlLineBytes: 'max_control_line',
  maxConnections: 'max_connections',
  pingIntervalMs: 'ping_interval',
  pingMax: 'ping_max',
  writeDeadlineMs: 'write_deadline',
};

/** nats-server's "Reloaded: ..." wording. */
function describe(change: ReloadChange): string {
  switch (change.kind) {
    case 'limit':
      return `${LIMIT_NAMES[change.key]} = ${change.value}`;
    case 'logLevel':
      return `log level = ${change.level}`;
    case 'logFile':
      return `log_file = ${change.path} (size limit ${change.sizeLimitBytes}, max files ${change.maxFiles})`;
    case 'authorization':
      return 'authorization';
    case 'tls':
      return 'tls';
    case 'routesAdded':
      return `cluster routes + ${change.routes.join(',')}`;
    case 'routesRemoved':
      return `cluster routes - ${change.routes.join(',')}`;
    case 'jetstreamLimits':
      return `JetStream max_mem_store = ${change.maxMemoryStoreBytes}, max_file_store = ${change.maxFileStoreBytes}`;
    case 'accountLimits':
      return `limits of account ${change.account}`;
    case 'mappings':
      return `mappings of account ${change.account ?? '$G'}`;
    case 'accountLinks':
      return 'accounts imports and exports';
    case 'accountsAdded':
      return `accounts added: ${change.names.join(', ')}`;
    case 'accountsRemoved':
      return `accounts removed: ${change.names.join(', ')}`;
    case 'pidFile':
      return `pid_file = ${change.newPath ?? ''}`;
  }
}

function withoutCallout<T extends { callout?: unknown }>(d: T): Omit<T, 'callout'> {
  const { callout: _replaced, ...rest } = d;
  return rest;
}
