// What a config reload changes (nats-server's diffOptions): the old and new resolved options compared key by
// key. A key that may change at run time becomes a ReloadChange for config-reload.ts to apply; a key that
// may not fails the whole reload with nats-server's "config reload not supported for <Field>: old=…, new=…"
// (its Go field name), so the old config stays. A key this table does not know is refused the same way:
// a new option is not reloadable until someone says how.
import { isDeepStrictEqual } from 'node:util';
import { formatGoDuration } from './config/go-duration.js';
import type { ClusterOptions, JetStreamOptions, LogLevel, ServerOptions } from './config/options.js';
import { accountsBesidesSystem } from './config/system-account-only.js';

/** Limits read per use (or per connection, applied to the live ones by reloadLimits). */
export type ReloadableLimit =
  | 'maxPayloadBytes'
  | 'maxControlLineBytes'
  | 'maxConnections'
  | 'pingIntervalMs'
  | 'pingMax'
  | 'writeDeadlineMs';

export type ReloadChange =
  | { kind: 'limit'; key: ReloadableLimit; value: number }
  | { kind: 'logLevel'; level: LogLevel }
  /** log_file (a file before and after: flotilla cannot switch between stdout and a file), its limits */
  | { kind: 'logFile'; path: string; sizeLimitBytes: number; maxFiles: number }
  /** users, passwords, tokens, nkeys, permissions, no_auth_user, auth timeout: a new ClientAuth */
  | { kind: 'authorization' }
  | { kind: 'tls' }
  | { kind: 'routesAdded'; routes: string[] }
  | { kind: 'routesRemoved'; routes: string[] }
  | { kind: 'jetstreamLimits'; maxMemoryStoreBytes: number; maxFileStoreBytes: number }
  /** an account's `limits {}` or `mappings {}` (null: the global account's top-level mappings) */
  | { kind: 'accountLimits'; account: string }
  | { kind: 'mappings'; account: string | null }
  /** imports and exports between the accounts */
  | { kind: 'accountLinks' }
  | { kind: 'accountsAdded'; names: string[] }
  | { kind: 'accountsRemoved'; names: string[] }
  | { kind: 'pidFile'; oldPath: string | undefined; newPath: string | undefined };

export class ReloadRefused extends Error {
  readonly code = 'reload_not_supported';
}

/** Keys that are never reloadable, by nats-server's Go field name (for its error text). */
const FIXED_KEYS: Partial<Record<keyof ServerOptions, string>> = {
  host: 'Host',
  port: 'Port',
  serverName: 'ServerName',
  httpHost: 'HTTPHost',
  httpPort: 'HTTPPort',
  systemAccount: 'SystemAccount',
  noSystemAccount: 'NoSystemAccount',
  lameDuckDurationMs: 'LameDuckDuration',
  lameDuckGracePeriodMs: 'LameDuckGracePeriod',
  // not in nats-server 2.14's reloadable set either
  maxSubscriptions: 'MaxSubs',
  maxPendingBytes: 'MaxPending',
  // reloadable in nats-server, not yet in flotilla: refused rather than silently kept
  portsFileDir: 'PortsFileDir',
};

const LIMIT_KEYS: readonly ReloadableLimit[] = [
  'maxPayloadBytes',
  'maxControlLineBytes',
  'maxConnections',
  'pingIntervalMs',
  'pingMax',
  'writeDeadlineMs',
];

/** Not options of the running server: where they came from, and warnings already given. */
const IGNORED_KEYS: ReadonlySet<string> = new Set(['configFile', 'ignoredBlocks']);

export function diffOptions(old: ServerOptions, next: ServerOptions): ReloadChange[] {
  const changes: ReloadChange[] = [];
  const keys = new Set([...Object.keys(old), ...Object.keys(next)]) as Set<keyof ServerOptions>;
  let authChanged = false;
  let logFileChanged = false;
  for (const key of keys) {
    const a = old[key];
    const b = next[key];
    if (IGNORED_KEYS.has(key) || isDeepStrictEqual(a, b)) continue;
    if ((LIMIT_KEYS as readonly string[]).includes(key)) {
      changes.push({ kind: 'limit', key: key as ReloadableLimit, value: b as number });
      continue;
    }
    const fixed = FIXED_KEYS[key];
    if (fixed !== undefined) throw refused(fixed, shown(key, a), shown(key, b));
    switch (key) {
      case 'logLevel':
        changes.push({ kind: 'logLevel', level: next.logLevel });
        continue;
      case 'logFile':
        if (old.logFile === undefined || next.logFile === undefined) throw refused('LogFile', old.logFile ?? '', next.logFile ?? '');
        logFileChanged = true;
        continue;
      case 'logSizeLimitBytes':
      case 'logMaxFiles':
        if (old.logFile === undefined || next.logFile === undefined) throw refused(key === 'logMaxFiles' ? 'LogMaxFiles' : 'LogSizeLimit', shown(key, a), shown(key, b));
        logFileChanged = true;
        continue;
      case 'authorization':
      case 'noAuthUser':
        if (key === 'noAuthUser') noAuthUserProblem(old, next);
        authChanged = true;
        continue;
      case 'accounts':
        authChanged = diffAccounts(old, next, changes) || authChanged;
        continue;
      case 'mappings':
        changes.push({ kind: 'mappings', account: null });
        continue;
      case 'tls':
        if (old.tls === undefined || next.tls === undefined) throw refused('TLSConfig', old.tls ? 'enabled' : 'none', next.tls ? 'enabled' : 'none');
        changes.push({ kind: 'tls' });
        // verify_and_map decides how clients authenticate: the auth is rebuilt with the new TLS options
        if (old.tls.verifyAndMap !== next.tls.verifyAndMap) authChanged = true;
        continue;
      case 'jetstream':
        diffJetStream(old.jetstream, next.jetstream, changes);
        continue;
      case 'cluster':
        diffCluster(old.cluster, next.cluster, changes);
        continue;
      case 'pidFile':
        changes.push({ kind: 'pidFile', oldPath: old.pidFile, newPath: next.pidFile });
        continue;
      default:
        throw refused(String(key), shown(key, a), shown(key, b));
    }
  }
  if (authChanged) changes.push({ kind: 'authorization' });
  if (logFileChanged) changes.push({ kind: 'logFile', path: next.logFile!, sizeLimitBytes: next.logSizeLimitBytes ?? 0, maxFiles: next.logMaxFiles ?? 0 });
  return changes;
}

function refused(field: string, oldValue: string, newValue: string): ReloadRefused {
  return new ReloadRefused(`config reload not supported for ${field}: old=${oldValue}, new=${newValue}`);
}

/** Go's %v of the value, near enough: durations as Go prints them, absent as "". */
function shown(key: keyof ServerOptions, v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' && key.endsWith('Ms')) return formatGoDuration(v);
  // a block's content may hold secrets (credentials, keys): only lists of plain values are shown
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return `[${v.join(' ')}]`;
  if (typeof v === 'object') return '{...}';
  return String(v);
}

/** nats-server: dropping no_auth_user is allowed only along with its user; any other change is refused. */
function noAuthUserProblem(old: ServerOptions, next: ServerOptions): void {
  const before = old.noAuthUser ?? '';
  const after = next.noAuthUser ?? '';
  if (before !== '' && after === '') {
    const users = [...(next.authorization?.users ?? []), ...(next.accounts ?? []).flatMap((a) => a.users)];
    if (!users.some((u) => u.user === before)) return;
  }
  throw refused('NoAuthUser', before, after);
}

/**
 * Users and permissions of accounts reload (as part of the new ClientAuth); limits, mappings, imports and
 * exports of an account apply in place; accounts without JetStream may come and go (a removed account's
 * clients are closed). An account's JetStream is fixed: its streams are held by JetStream and the routes.
 */
function diffAccounts(oldOptions: ServerOptions, nextOptions: ServerOptions, changes: ReloadChange[]): boolean {
  const old = oldOptions.accounts ?? [];
  const next = nextOptions.accounts ?? [];
  const added = next.filter((b) => !old.some((a) => a.name === b.name));
  const removed = old.filter((a) => !next.some((b) => b.name === a.name));
  let usersChanged = added.length > 0 || removed.length > 0;
  let linksChanged = usersChanged;
  for (const a of [...added, ...removed]) {
    if (a.jetstream !== undefined) throw new ReloadRefused(`config reload not supported for adding or removing account ${a.name} with jetstream`);
  }
  // JetStream runs either as the global account's or per account (system-account-only.ts): that is fixed at start
  if (oldOptions.jetstream.enabled && accountsBesidesSystem(oldOptions) !== accountsBesidesSystem(nextOptions)) {
    throw new ReloadRefused('config reload not supported for accounts: JetStream would move between the global account and per-account JetStream');
  }
  if (added.length > 0) changes.push({ kind: 'accountsAdded', names: added.map((a) => a.name) });
  if (removed.length > 0) changes.push({ kind: 'accountsRemoved', names: removed.map((a) => a.name) });
  for (const b of next) {
    const a = old.find((o) => o.name === b.name);
    if (a === undefined) continue;
    if (!isDeepStrictEqual(a.users, b.users)) usersChanged = true;
    if (!isDeepStrictEqual(a.exports, b.exports) || !isDeepStrictEqual(a.imports, b.imports)) linksChanged = true;
    if (!isDeepStrictEqual(a.jetstream, b.jetstream)) throw new ReloadRefused(`config reload not supported for jetstream limits of account ${b.name}`);
    if (!isDeepStrictEqual(a.limits, b.limits)) {
      if (a.limits === undefined || b.limits === undefined) throw new ReloadRefused(`config reload not supported for adding or removing limits of account ${b.name}`);
      changes.push({ kind: 'accountLimits', account: b.name });
    }
    if (!isDeepStrictEqual(a.mappings ?? [], b.mappings ?? [])) changes.push({ kind: 'mappings', account: b.name });
    const known = new Set(['name', 'users', 'exports', 'imports', 'jetstream', 'limits', 'mappings']);
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!known.has(k) && !isDeepStrictEqual((a as unknown as Record<string, unknown>)[k], (b as unknown as Record<string, unknown>)[k])) {
        throw new ReloadRefused(`config reload not supported for ${k} of account ${b.name}`);
      }
    }
  }
  if (linksChanged) changes.push({ kind: 'accountLinks' });
  return usersChanged;
}

/** nats-server's rules: enabling/disabling, the store directory and the domain are fixed; limits may only grow. */
function diffJetStream(old: JetStreamOptions, next: JetStreamOptions, changes: ReloadChange[]): void {
  if (old.enabled !== next.enabled) throw refused('JetStream', String(old.enabled), String(next.enabled));
  if (!old.enabled) return;
  if (old.storeDir !== next.storeDir) throw new ReloadRefused('config reload not supported for jetstream storage directory');
  if ((old.domain ?? '') !== (next.domain ?? '')) throw refused('JetStreamDomain', old.domain ?? '', next.domain ?? '');
  if (old.syncIntervalMs !== next.syncIntervalMs) {
    throw refused('SyncInterval', shown('syncIntervalMs' as keyof ServerOptions, old.syncIntervalMs), shown('syncIntervalMs' as keyof ServerOptions, next.syncIntervalMs));
  }
  const grows = (a: number, b: number): boolean => {
    if (a === b) return false;
    if (a === -1) throw new ReloadRefused('config reload not supported for jetstream dynamic max memory and store');
    if (b === -1) throw new ReloadRefused('config reload not supported for jetstream max memory and max store');
    if (b < a) throw new ReloadRefused('config reload not supported for decreasing jetstream max memory and store');
    return true;
  };
  const rest = (j: JetStreamOptions): JetStreamOptions => ({ ...j, storeDir: '', domain: '', maxMemoryStoreBytes: 0, maxFileStoreBytes: 0, syncIntervalMs: 0 });
  if (!isDeepStrictEqual(rest(old), rest(next))) throw refused('JetStream', '{...}', '{...}');
  const memory = grows(old.maxMemoryStoreBytes, next.maxMemoryStoreBytes);
  const file = grows(old.maxFileStoreBytes, next.maxFileStoreBytes);
  if (memory || file) changes.push({ kind: 'jetstreamLimits', maxMemoryStoreBytes: next.maxMemoryStoreBytes, maxFileStoreBytes: next.maxFileStoreBytes });
}

/** Routes may be added and removed; the listener (nats-server's texts), name, auth and TLS are refused. */
function diffCluster(old: ClusterOptions | undefined, next: ClusterOptions | undefined, changes: ReloadChange[]): void {
  if (old === undefined || next === undefined) throw refused('Cluster', old ? 'enabled' : 'none', next ? 'enabled' : 'none');
  const oldHost = old.listen?.host ?? '';
  const newHost = next.listen?.host ?? '';
  if (oldHost !== newHost) throw new ReloadRefused(`config reload not supported for cluster host: old=${oldHost}, new=${newHost}`);
  const oldPort = old.listen?.port ?? 0;
  const newPort = next.listen?.port ?? 0;
  if (oldPort !== newPort) throw new ReloadRefused(`config reload not supported for cluster port: old=${oldPort}, new=${newPort}`);
  if ((old.name ?? '') !== (next.name ?? '')) throw refused('Cluster.Name', old.name ?? '', next.name ?? '');
  if (!isDeepStrictEqual(old.authorization, next.authorization)) throw new ReloadRefused('config reload not supported for cluster authorization');
  if (!isDeepStrictEqual(old.tls, next.tls)) throw new ReloadRefused('config reload not supported for cluster TLS');
  if (!isDeepStrictEqual(old.routeCredentials, next.routeCredentials)) throw new ReloadRefused('config reload not supported for route credentials');
  const rest = (c: ClusterOptions): ClusterOptions => ({ ...c, routes: [], listen: { host: '', port: 0 }, name: '', authorization: {}, tls: undefined, routeCredentials: {} });
  if (!isDeepStrictEqual(rest(old), rest(next))) throw refused('Cluster', '{...}', '{...}');
  const removed = old.routes.filter((r) => !next.routes.includes(r));
  if (removed.length > 0) changes.push({ kind: 'routesRemoved', routes: removed });
  const added = next.routes.filter((r) => !old.routes.includes(r));
  if (added.length > 0) changes.push({ kind: 'routesAdded', routes: added });
}
