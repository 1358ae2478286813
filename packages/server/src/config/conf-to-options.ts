// Applies a parsed nats-server config document to ServerOptions, the way nats-server's
// processConfigFileLine does: keys are matched case-insensitively, wrong types and unknown keys are
// errors naming file:line, integer durations are seconds (with a warning), and a key that only served
// as a `$variable` definition is not an unknown field. Blocks Flotilla does not serve yet are accepted
// with one warning each; keys Flotilla knows but does not implement are refused or warned about as
// unimplemented-keys.ts says.
import type { ConfDocument, ConfPosition, ConfValueKind } from './conf-parser.js';
import type { LeafNodeOptions, LeafRemoteOptions } from '../leafnode/leafnode-options.js';
import { parseGoDurationMs } from './go-duration.js';
import { parseLameDuckKey } from './lame-duck-keys.js';
import { normaliseRouteUrl, splitHostPort, urlCredentials, type HostPort } from './host-port.js';
import { isValidSubject } from '@flotilla/protocol';
import { unimplementedKey, type ConfScope } from './unimplemented-keys.js';
import { parseAuthCallout } from './auth-callout-keys.js';
import { parseOperators, parsePreload, parseResolver, parseTrustedKeys, type Parsed } from './operator-keys.js';
import { accountLinkProblems } from './account-links.js';
import { mappingProblem, type MappingDestinationOptions, type MappingOptions } from '../accounts/subject-mappings.js';
import { isValidPublicAccountKey, isValidPublicUserKey } from '../security/nkey-signature.js';
import { storeDirNameProblem } from './account-store-dir-name.js';
import {
  DEFAULT_TLS_TIMEOUT_MS,
  type AccountExport,
  type AccountImport,
  type AccountJetStreamOptions,
  type AccountLimitOptions,
  type AccountOptions,
  type ServiceResponseType,
  type AuthorizationOptions,
  type ClusterAuthorization,
  type ClusterOptions,
  type ClusterTlsOptions,
  type Permissions,
  type ResponsePermission,
  type ServerOptions,
  type SubjectPermission,
  type TlsOptions,
  type WebsocketOptions,
  type UserEntry,
  type OperatorOptions,
} from './options.js';

/** The account of users outside `accounts {}` (nats-server's globalAccountName); no account may take the name. */
export const GLOBAL_ACCOUNT = '$G';

/** Go's `%q` of a config value: a string double-quoted, an integer as the rune it codes ('\f' for 12). */
function goQuoted(v: unknown): string {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0x10ffff) {
    const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' };
    const c = named[v] ?? (v < 0x20 || v === 0x7f ? `\\x${v.toString(16).padStart(2, '0')}` : String.fromCodePoint(v));
    return `'${c}'`;
  }
  if (typeof v === 'boolean') return `%!q(bool=${v})`;
  return JSON.stringify(v);
}

/** nats-server's allow_responses: true (one response within two minutes). */
const DEFAULT_RESPONSE_PERMISSION: ResponsePermission = { maxMsgs: 1, expiresMs: 2 * 60_000 };

export interface ConfApplyResult {
  errors: string[];
  warnings: string[];
  /** true when the file named a monitoring host (http: "h:p"); otherwise it follows the client host */
  httpHostExplicit: boolean;
  /** file:line of max_payload, for the later max_payload vs max_pending check */
  maxPayloadLocation?: string;
  /** debug / trace as the file set them; flags given explicitly override each */
  debug: boolean;
  trace: boolean;
}

const MAX_INT32 = 2 ** 31 - 1;

const KIND_NAMES: Record<ConfValueKind, string> = {
  string: 'a string',
  integer: 'an integer',
  float: 'a float',
  bool: 'a boolean',
  datetime: 'a date-time',
  map: 'a block',
  array: 'an array',
};

/** A value together with where it was written. */
interface Located {
  value: unknown;
  pos: ConfPosition | undefined;
  name: string;
}

export function applyConfDocument(doc: ConfDocument, options: ServerOptions): ConfApplyResult {
  return new ConfApplier(doc, options).run();
}

class ConfApplier {
  private readonly errors: string[] = [];
  private readonly warnings: string[] = [];
  private httpHostExplicit = false;
  private maxPayloadLocation: string | undefined;
  private storeDirLocation: string | undefined;

  constructor(
    private readonly doc: ConfDocument,
    private readonly options: ServerOptions,
  ) {}

  run(): ConfApplyResult {
    const root = this.doc.root;
    for (const key of Object.keys(root)) this.applyTopLevel(this.entry(root, key));
    this.checkAccountsAgainstAuthorization();
    this.checkCalloutAllowedAccounts();
    const result: ConfApplyResult = {
      errors: this.errors,
      warnings: this.warnings,
      httpHostExplicit: this.httpHostExplicit,
      debug: this.debug,
      trace: this.trace,
    };
    if (this.maxPayloadLocation !== undefined) result.maxPayloadLocation = this.maxPayloadLocation;
    return result;
  }

  // ---- helpers ----

  private entry(container: object, key: string | number): Located {
    return { value: (container as Record<string | number, unknown>)[key], pos: this.doc.positionOf(container, key), name: String(key) };
  }
  private loc(e: Located): string {
    return e.pos ? `${e.pos.file}:${e.pos.line}` : 'config';
  }
  private error(e: Located, message: string): void {
    this.errors.push(`${this.loc(e)}: ${message}`);
  }
  private warn(e: Located, message: string): void {
    this.warnings.push(`${this.loc(e)}: ${message}`);
  }
  private kindOf(e: Located): ConfValueKind {
    if (e.pos) return e.pos.kind;
    if (Array.isArray(e.value)) return 'array';
    if (typeof e.value === 'boolean') return 'bool';
    if (typeof e.value === 'number') return Number.isInteger(e.value) ? 'integer' : 'float';
    if (typeof e.value === 'object' && e.value !== null) return 'map';
    return 'string';
  }
  private typeError(e: Located, expected: string): void {
    this.error(e, `${e.name}: expected ${expected}, got ${KIND_NAMES[this.kindOf(e)]}`);
  }
  private str(e: Located): string | undefined {
    if (typeof e.value === 'string') return e.value;
    this.typeError(e, 'a string');
    return undefined;
  }
  private bool(e: Located): boolean | undefined {
    if (typeof e.value === 'boolean') return e.value;
    this.typeError(e, 'a boolean (true/false, yes/no, on/off)');
    return undefined;
  }
  private int(e: Located): number | undefined {
    if (this.kindOf(e) === 'integer' && typeof e.value === 'number') return e.value;
    this.typeError(e, 'an integer');
    return undefined;
  }
  /** non-negative integer no larger than maxValue */
  private count(e: Located, maxValue = Number.MAX_SAFE_INTEGER): number | undefined {
    const n = this.int(e);
    if (n === undefined) return undefined;
    if (n < 0) return void this.error(e, `${e.name}: value can not be negative (got ${n})`);
    if (n > maxValue) return void this.error(e, `${e.name} value is too big (${n} > ${maxValue})`);
    return n;
  }
  private map(e: Located): Record<string, unknown> | undefined {
    if (this.kindOf(e) === 'map' && typeof e.value === 'object' && e.value !== null) return e.value as Record<string, unknown>;
    this.typeError(e, 'a block { ... }');
    return undefined;
  }
  private port(e: Located): number | undefined {
    const n = this.int(e);
    if (n === undefined) return undefined;
    if (n < -1 || n > 65535) return void this.error(e, `${e.name}: port must be -1..65535 (got ${n})`);
    return n;
  }
  /**
   * nats-server durations: a Go duration string, or (deprecated) an integer number of seconds.
   * `2m` lexes as the integer 2000000 in nats-server; Flotilla reads it as two minutes, which is what
   * every such config means.
   */
  private durationMs(e: Located): number | undefined {
    if (typeof e.value === 'string') {
      const ms = parseGoDurationMs(e.value);
      if (ms === undefined) return void this.error(e, `error parsing ${e.name}: invalid duration "${e.value}"`);
      if (ms < 0) return void this.error(e, `${e.name}: duration can not be negative`);
      return ms;
    }
    const raw = e.pos?.raw;
    if (raw !== undefined && /^\d+m$/.test(raw)) return Number(raw.slice(0, -1)) * 60_000;
    const seconds = this.int(e);
    if (seconds === undefined) return undefined;
    if (seconds < 0) return void this.error(e, `${e.name}: duration can not be negative`);
    this.warn(e, `${e.name} should be converted to a duration (e.g. "${seconds}s"); reading ${seconds} as seconds`);
    return seconds * 1000;
  }
  /** listen-style value: an integer port, or "host:port" */
  private listen(e: Located): { host?: string; port: number } | undefined {
    if (this.kindOf(e) === 'integer') {
      const port = this.port(e);
      return port === undefined ? undefined : { port };
    }
    if (typeof e.value !== 'string') return void this.typeError(e, 'a port or "host:port"');
    const hp = splitHostPort(e.value, true);
    if (typeof hp === 'string') return void this.error(e, `${e.name}: ${hp}`);
    return hp;
  }
  /**
   * A key Flotilla does not act on (unimplemented-keys.ts): refused when ignoring it would weaken security
   * or durability, otherwise a warning. An unknown key is an error unless it only defined a variable used
   * elsewhere (as nats-server). Returns true when the key was accepted with a warning.
   */
  private unhandled(e: Located, scope: ConfScope): boolean {
    const where = scope === 'top' ? '' : ` in ${scope}`;
    const known = unimplementedKey(scope, e.name);
    if (known?.effect === 'warn') {
      this.warn(e, `'${e.name}'${where} is not supported by flotilla yet and is ignored`);
      return true;
    }
    if (known?.effect === 'refuse') {
      this.error(e, `'${e.name}'${where} is not supported by flotilla yet; ignoring it would ${known.why}, so the server refuses to start`);
    } else this.unknown(e);
    return false;
  }
  private unknown(e: Located): void {
    if (e.pos?.usedAsVariable) return;
    this.error(e, `unknown field "${e.name}"`);
  }

  // ---- top level ----

  private applyTopLevel(e: Located): void {
    const o = this.options;
    const key = e.name.toLowerCase();
    switch (key) {
      case 'listen': {
        const hp = this.listen(e);
        if (hp) {
          if (hp.host !== undefined) o.host = hp.host === '' ? '0.0.0.0' : hp.host;
          o.port = hp.port;
        }
        return;
      }
      case 'port': {
        const p = this.port(e);
        if (p !== undefined) o.port = p;
        return;
      }
      case 'host':
      case 'net': {
        const s = this.str(e);
        if (s !== undefined) o.host = s;
        return;
      }
      case 'client_advertise': {
        const s = this.str(e);
        if (s !== undefined && s !== '') o.clientAdvertise = s;
        return;
      }
      case 'server_tags': {
        // A list of tags or one comma-separated string, as nats-server reads it; compared without case.
        const items = this.kindOf(e) === 'array' ? (e.value as unknown[]).map((_, i) => this.entry(e.value as object, i)) : [e];
        const tags: string[] = [];
        for (const item of items) {
          const s = this.str(item);
          if (s === undefined) return;
          for (const t of s.split(',')) if (t.trim() !== '') tags.push(t.trim().toLowerCase());
        }
        o.serverTags = [...new Set(tags)];
        return;
      }
      case 'server_name': {
        const s = this.str(e);
        if (s === undefined) return;
        if (/\s/.test(s)) return this.error(e, 'server_name can not contain spaces');
        o.serverName = s;
        return;
      }
      case 'debug':
      case 'trace':
      case 'trace_verbose': {
        const b = this.bool(e);
        if (b === undefined) return;
        if (key === 'debug') this.debug = b;
        else this.trace = b;
        o.logLevel = this.trace ? 'trace' : this.debug ? 'debug' : 'info';
        return;
      }
      case 'http': {
        const hp = this.listen(e);
        if (!hp) return;
        if (hp.host !== undefined) {
          o.httpHost = hp.host === '' ? '0.0.0.0' : hp.host;
          this.httpHostExplicit = true;
        }
        o.httpPort = hp.port;
        return;
      }
      case 'http_port':
      case 'monitor_port': {
        const p = this.port(e);
        if (p !== undefined) o.httpPort = p;
        return;
      }
      case 'logfile':
      case 'log_file': {
        const s = this.str(e);
        if (s !== undefined) o.logFile = s;
        return;
      }
      case 'logfile_size_limit':
      case 'log_size_limit': {
        const n = this.count(e);
        if (n !== undefined) o.logSizeLimitBytes = n;
        return;
      }
      case 'logfile_max_num':
      case 'log_max_num': {
        const n = this.count(e);
        if (n !== undefined) o.logMaxFiles = n;
        return;
      }
      case 'pidfile':
      case 'pid_file': {
        const s = this.str(e);
        if (s !== undefined) o.pidFile = s;
        return;
      }
      case 'lame_duck_duration':
      case 'lame_duck_grace_period': {
        const r = parseLameDuckKey(key, e.value);
        if ('error' in r) return this.error(e, r.error);
        if (key === 'lame_duck_duration') o.lameDuckDurationMs = r.ms;
        else o.lameDuckGracePeriodMs = r.ms;
        return;
      }
      case 'ports_file_dir': {
        const s = this.str(e);
        if (s !== undefined) o.portsFileDir = s;
        return;
      }
      case 'max_payload': {
        const n = this.count(e, MAX_INT32);
        if (n === undefined) return;
        if (n === 0) return; // 0 means "default", as in nats-server
        o.maxPayloadBytes = n;
        this.maxPayloadLocation = this.loc(e);
        return;
      }
      case 'max_control_line': {
        const n = this.count(e, MAX_INT32);
        if (n) o.maxControlLineBytes = n;
        return;
      }
      case 'max_pending': {
        const n = this.count(e);
        if (n) o.maxPendingBytes = n;
        return;
      }
      case 'max_subscriptions':
      case 'max_subs': {
        const n = this.count(e, MAX_INT32);
        if (n !== undefined) o.maxSubscriptions = n;
        return;
      }
      case 'tls':
        return this.applyTls(e);
      case 'max_connections':
      case 'max_conn': {
        const n = this.count(e);
        if (n) o.maxConnections = n;
        return;
      }
      case 'ping_interval': {
        const ms = this.durationMs(e);
        if (ms) o.pingIntervalMs = ms;
        return;
      }
      case 'write_deadline': {
        const ms = this.durationMs(e);
        if (ms) o.writeDeadlineMs = ms;
        return;
      }
      case 'ping_max': {
        const n = this.count(e);
        if (n) o.pingMax = n;
        return;
      }
      case 'store_dir':
      case 'storedir':
        return this.applyStoreDir(e);
      case 'jetstream':
        return this.applyJetStream(e);
      case 'authorization':
        return this.applyAuthorization(e);
      case 'accounts':
        return this.applyAccounts(e);
      case 'mappings':
      case 'maps': {
        const m = this.parseMappings(e);
        if (m !== undefined) o.mappings = m;
        return;
      }
      case 'no_auth_user': {
        const s = this.str(e);
        if (s !== undefined) o.noAuthUser = s;
        return;
      }
      case 'system_account':
      case 'system': {
        if (this.kindOf(e) !== 'string') return this.error(e, 'system account name must be a string');
        o.systemAccount = e.value as string;
        return;
      }
      case 'no_system_account':
      case 'no_system':
      case 'no_sys_acc': {
        const b = this.bool(e);
        if (b !== undefined) o.noSystemAccount = b;
        return;
      }
      case 'operator':
      case 'operators':
      case 'root':
      case 'roots':
      case 'root_operator':
      case 'root_operators':
        return this.applyOperatorKey(e, (op) => {
          const r = parseOperators(e.value, o.configFile);
          if ('value' in r) op.operatorJwts.push(...r.value);
          return r;
        });
      case 'trusted':
      case 'trusted_keys':
        return this.applyOperatorKey(e, (op) => {
          const r = parseTrustedKeys(e.value);
          if ('value' in r) op.trustedKeys.push(...r.value);
          return r;
        });
      case 'resolver':
      case 'account_resolver':
      case 'accounts_resolver':
        return this.applyOperatorKey(e, (op) => {
          const r = parseResolver(e.value);
          if ('value' in r) op.resolver = r.value;
          return r;
        });
      case 'resolver_preload':
        return this.applyOperatorKey(e, (op) => {
          const r = parsePreload(e.value);
          if ('value' in r) Object.assign(op.preload, r.value);
          return r;
        });
      case 'cluster':
        return this.applyCluster(e);
      case 'websocket':
      case 'ws':
        return this.applyWebsocket(e);
      case 'leafnodes':
      case 'leaf':
        return this.applyLeafnodes(e);
    }
    if (this.unhandled(e, 'top') && !o.ignoredBlocks.includes(key)) o.ignoredBlocks.push(key);
  }

  private debug = false;
  private trace = false;

  /** operator-keys.ts parses; the operator options are made on the first of these keys */
  private applyOperatorKey(e: Located, apply: (op: OperatorOptions) => Parsed<unknown>): void {
    const op = (this.options.operator ??= { operatorJwts: [], trustedKeys: [], preload: {} });
    const r = apply(op);
    if ('error' in r) this.error(e, r.error);
  }

  private applyStoreDir(e: Located): void {
    const s = this.str(e);
    if (s === undefined) return;
    if (this.storeDirLocation !== undefined) {
      return this.error(e, `Duplicate 'store_dir' configuration (also set at ${this.storeDirLocation})`);
    }
    this.storeDirLocation = this.loc(e);
    this.options.jetstream.storeDir = s;
  }

  private applyJetStream(e: Located): void {
    const js = this.options.jetstream;
    const kind = this.kindOf(e);
    if (kind === 'bool') {
      js.enabled = e.value as boolean;
      return;
    }
    if (kind === 'string') {
      const s = (e.value as string).toLowerCase();
      if (s === 'enabled' || s === 'enable') js.enabled = true;
      else if (s === 'disabled' || s === 'disable') js.enabled = false;
      else this.error(e, `Expected 'enabled' or 'disabled' for string value, got '${e.value as string}'`);
      return;
    }
    if (kind !== 'map') return this.typeError(e, 'a block, a boolean or enabled/disabled');
    const m = e.value as Record<string, unknown>;
    let enable = true;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'store':
        case 'store_dir':
        case 'storedir':
          this.applyStoreDir(item);
          break;
        case 'max_memory_store':
        case 'max_mem_store':
        case 'max_mem': {
          const n = this.storageSize(item);
          if (n !== undefined) js.maxMemoryStoreBytes = n;
          break;
        }
        case 'max_file_store':
        case 'max_file': {
          const n = this.storageSize(item);
          if (n !== undefined) js.maxFileStoreBytes = n;
          break;
        }
        case 'domain': {
          const s = this.str(item);
          if (s !== undefined) js.domain = s;
          break;
        }
        case 'unique_tag': {
          const s = this.str(item);
          if (s !== undefined && s.trim() !== '') js.uniqueTag = s.trim().toLowerCase();
          break;
        }
        case 'sync_interval': {
          // "always" (our default) or a duration, as nats-server 2.10 spells it.
          if (this.kindOf(item) === 'string' && String(item.value).toLowerCase() === 'always') {
            delete js.syncIntervalMs;
            break;
          }
          const ms = this.durationMs(item);
          if (ms !== undefined) js.syncIntervalMs = ms;
          break;
        }
        case 'enable':
        case 'enabled': {
          const b = this.bool(item);
          if (b !== undefined) enable = b;
          break;
        }
        default:
          this.unhandled(item, 'jetstream');
      }
    }
    js.enabled = enable;
  }

  /** JetStream limits: an integer (size suffixes already applied by the parser) or "<n>K|M|G|T" (binary). */
  private storageSize(e: Located): number | undefined {
    if (this.kindOf(e) === 'integer') return this.int(e);
    if (typeof e.value !== 'string') return void this.typeError(e, 'a size');
    if (e.value === '') return 0;
    const m = /^(-?\d+)([KMGT])$/.exec(e.value);
    if (!m) return void this.error(e, `${e.name}: sizes defined as strings must be a number ending in K, M, G or T (got "${e.value}")`);
    const shift = { K: 10, M: 20, G: 30, T: 40 }[m[2] as 'K' | 'M' | 'G' | 'T'];
    return Number(m[1]) * 2 ** shift;
  }

  private applyAuthorization(e: Located): void {
    const m = this.map(e);
    if (!m) return;
    const auth: AuthorizationOptions = {};
    let users: UserEntry[] | undefined;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'user':
        case 'username': {
          const s = this.str(item);
          if (s !== undefined) auth.user = s;
          break;
        }
        case 'pass':
        case 'password': {
          const s = this.str(item);
          if (s !== undefined) auth.password = s;
          break;
        }
        case 'token': {
          const s = this.str(item);
          if (s !== undefined) auth.token = s;
          break;
        }
        case 'timeout': {
          const sec = this.authTimeoutSec(item);
          if (sec !== undefined) auth.timeoutSec = sec;
          break;
        }
        case 'users':
          users = this.parseUsers(item);
          break;
        case 'default_permission':
        case 'default_permissions':
        case 'permissions': {
          const p = this.parsePermissions(item);
          if (p !== undefined) auth.defaultPermissions = p;
          break;
        }
        case 'auth_callout':
        case 'callout': {
          const r = parseAuthCallout(item.value);
          if ('error' in r) this.error(item, r.error);
          else {
            auth.callout = r.value;
            this.calloutEntry = item;
          }
          break;
        }
        default:
          this.unknown(item);
      }
    }
    if ((auth.user !== undefined || auth.password !== undefined) && auth.token !== undefined) {
      return this.error(e, 'Cannot have a user/pass and token');
    }
    if (users !== undefined) {
      if (auth.user !== undefined) return this.error(e, 'Can not have a single user/pass and a users array');
      if (auth.token !== undefined) return this.error(e, 'Can not have a token and a users array');
      auth.users = users;
    }
    auth.timeoutSec ??= 2;
    this.options.authorization = auth;
  }

  private parseUsers(e: Located): UserEntry[] | undefined {
    if (!Array.isArray(e.value)) return void this.typeError(e, 'an array of { user, password } blocks');
    const users: UserEntry[] = [];
    const seen = new Set<string>();
    e.value.forEach((_, index) => {
      const ue = this.entry(e.value as unknown[], index);
      ue.name = `users[${index}]`;
      const um = this.map(ue);
      if (!um) return;
      let user: string | undefined;
      let password: string | undefined;
      let nkey: string | undefined;
      let permissions: Permissions | undefined;
      const errorsBefore = this.errors.length;
      for (const k of Object.keys(um)) {
        const item = this.entry(um, k);
        switch (k.toLowerCase()) {
          case 'user':
          case 'username':
            user = this.str(item);
            break;
          case 'pass':
          case 'password':
            password = this.str(item) ?? '';
            break;
          case 'nkey':
            nkey = this.str(item);
            break;
          case 'permission':
          case 'permissions':
          case 'authorization':
            permissions = this.parsePermissions(item);
            break;
          default:
            this.unhandled(item, 'users');
        }
      }
      if (this.errors.length > errorsBefore) return; // the entry's own error says enough
      if (nkey !== undefined) {
        if (!isValidPublicUserKey(nkey)) return this.error(ue, 'Not a valid public nkey for a user');
        if (user !== undefined || password !== undefined) return this.error(ue, 'Nkey users do not take usernames or passwords');
        if (seen.has(nkey) || this.userNames.has(nkey)) return this.error(ue, `Duplicate nkey "${nkey}" detected`);
        seen.add(nkey);
        const entry: UserEntry = { user: nkey, password: '', nkey };
        if (permissions !== undefined) entry.permissions = permissions;
        users.push(entry);
        return;
      }
      if (user === undefined) return this.error(ue, 'User entry requires a user');
      if (seen.has(user) || this.userNames.has(user)) return this.error(ue, `Duplicate user "${user}" detected`);
      seen.add(user);
      const entry: UserEntry = { user, password: password ?? '' };
      if (permissions !== undefined) entry.permissions = permissions;
      users.push(entry);
    });
    for (const u of users) this.userNames.add(u.user);
    return users;
  }

  /** Users and nkeys seen so far, in authorization {} and every account: each is unique across them. */
  private readonly userNames = new Set<string>();
  /** where `accounts` was written, for the checks made once the whole file is read */
  private accountsEntry: Located | undefined;

  /** `accounts { NAME: { users, exports, imports, default_permissions } }`, or a list of account names. */
  private applyAccounts(e: Located): void {
    this.accountsEntry = e;
    const accounts: AccountOptions[] = [];
    const errorsBefore = this.errors.length;
    if (Array.isArray(e.value)) {
      const seen = new Set<string>();
      e.value.forEach((_, index) => {
        const item = this.entry(e.value as unknown[], index);
        const name = this.str(item);
        if (name === undefined) return;
        if (name === GLOBAL_ACCOUNT) return this.error(item, `"${name}" is a Reserved Account`);
        if (seen.has(name)) return this.error(item, `Duplicate Account Entry: ${name}`);
        seen.add(name);
        accounts.push({ name, users: [], exports: [], imports: [] });
      });
    } else {
      const m = this.map(e);
      if (!m) return;
      for (const name of Object.keys(m)) {
        const ae = this.entry(m, name);
        if (ae.pos?.usedAsVariable) continue;
        if (this.kindOf(ae) !== 'map') {
          this.error(ae, 'Expected map entries for accounts');
          continue;
        }
        if (name === GLOBAL_ACCOUNT) {
          this.error(ae, `"${name}" is a Reserved Account`);
          continue;
        }
        const acc = this.parseAccount(name, ae.value as Record<string, unknown>);
        // An account with JetStream keeps its streams in a directory named after it.
        const dirProblem = acc.jetstream !== undefined ? storeDirNameProblem(name) : undefined;
        if (dirProblem !== undefined) this.error(ae, dirProblem);
        accounts.push(acc);
      }
    }
    if (this.errors.length > errorsBefore) return;
    // Imports are checked against exports once every account is known (nats-server reports them at the block).
    for (const problem of accountLinkProblems(accounts)) this.error(e, problem);
    this.options.accounts = accounts;
  }

  private parseAccount(name: string, m: Record<string, unknown>): AccountOptions {
    const acc: AccountOptions = { name, users: [], exports: [], imports: [] };
    let defaults: Permissions | undefined;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'users':
          acc.users = this.parseUsers(item) ?? [];
          break;
        case 'nkey':
          // nats-server: `Not a valid public nkey for an account: %q` (for a value of any type)
          if (typeof item.value !== 'string' || !isValidPublicAccountKey(item.value)) {
            this.error(item, `Not a valid public nkey for an account: ${goQuoted(item.value)}`);
          } else acc.nkey = item.value;
          break;
        case 'exports':
          acc.exports = this.parseExports(item);
          break;
        case 'imports':
          acc.imports = this.parseImports(item);
          break;
        case 'default_permissions':
          defaults = this.parsePermissions(item);
          break;
        case 'jetstream': {
          const js = this.parseAccountJetStream(item);
          if (js !== null) acc.jetstream = js;
          break;
        }
        case 'mappings':
        case 'maps': {
          const mappings = this.parseMappings(item);
          if (mappings !== undefined) acc.mappings = mappings;
          break;
        }
        case 'limits': {
          const limits = this.parseAccountLimits(item);
          if (limits !== undefined) acc.limits = limits;
          break;
        }
        default:
          this.unhandled(item, 'account');
      }
    }
    if (defaults !== undefined) for (const u of acc.users) u.permissions ??= defaults;
    return acc;
  }

  /** An account's `limits {}` as nats-server's parseAccountLimits (integers; -1 or absent: no limit). */
  private parseAccountLimits(e: Located): AccountLimitOptions | undefined {
    if (this.kindOf(e) !== 'map') return void this.error(e, `Expected account limits to be a map/struct, got ${JSON.stringify(e.value)}`);
    const limits: AccountLimitOptions = { maxConnections: -1, maxSubscriptions: -1, maxPayloadBytes: -1, maxLeafnodes: -1 };
    const m = e.value as Record<string, unknown>;
    for (const k of Object.keys(m)) {
      const f = this.entry(m, k);
      const n = this.int(f);
      if (n === undefined) continue;
      switch (k.toLowerCase()) {
        case 'max_connections':
        case 'max_conn':
          limits.maxConnections = n;
          break;
        case 'max_subscriptions':
        case 'max_subs':
          limits.maxSubscriptions = n;
          break;
        case 'max_payload':
        case 'max_pay':
          limits.maxPayloadBytes = n;
          break;
        case 'max_leafnodes':
        case 'max_leafs':
          limits.maxLeafnodes = n;
          break;
        default:
          this.error(f, `Unknown field "${k}" parsing account limits`);
      }
    }
    return limits;
  }

  /**
   * `mappings {}` as nats-server's parseAccountMappings: `src: dest`, `src: {destination, weight}` or a list of
   * those; each mapping is checked here (subject-mappings.ts), so a bad one stops the server at start.
   */
  private parseMappings(e: Located): MappingOptions[] | undefined {
    if (this.kindOf(e) !== 'map') return void this.error(e, 'Expected a map of subject mappings');
    const m = e.value as Record<string, unknown>;
    const out: MappingOptions[] = [];
    for (const source of Object.keys(m)) {
      const item = this.entry(m, source);
      const kind = this.kindOf(item);
      let destinations: MappingDestinationOptions[] | undefined;
      if (kind === 'string') destinations = [{ subject: item.value as string, weightPct: 100 }];
      else if (kind === 'map') destinations = this.mapDestinations([item]);
      else if (kind === 'array') destinations = this.mapDestinations((item.value as unknown[]).map((_, i) => this.entry(item.value as object, i)));
      else {
        this.error(item, `Unknown type ${kind} for mapping destination`);
        continue;
      }
      if (destinations === undefined) continue;
      const mapping = { source, destinations };
      const problem = mappingProblem(mapping);
      if (problem !== null) {
        this.error(item, `Error adding mapping for "${source}" : ${problem}`);
        continue;
      }
      out.push(mapping);
    }
    return out;
  }

  private mapDestinations(items: Located[]): MappingDestinationOptions[] | undefined {
    const out: MappingDestinationOptions[] = [];
    for (const d of items) {
      if (this.kindOf(d) !== 'map') return void this.error(d, 'Expected an entry for the mapping destination');
      const dm = d.value as Record<string, unknown>;
      let subject: string | undefined;
      let weightPct: number | undefined;
      for (const k of Object.keys(dm)) {
        const f = this.entry(dm, k);
        switch (k.toLowerCase()) {
          case 'dest':
          case 'destination':
            subject = this.str(f);
            break;
          case 'weight': {
            const raw = typeof f.value === 'string' ? f.value.replace(/%$/, '') : f.value;
            const w = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
            if (typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > 100) return void this.error(f, `Invalid weight ${JSON.stringify(f.value)} for mapping destination`);
            weightPct = w;
            break;
          }
          case 'cluster':
            return void this.error(f, "cluster-scoped mapping destinations ('cluster') are not supported by flotilla yet, so the server refuses to start");
          default:
            return void this.error(f, `Unknown field "${k}" for mapping destination`);
        }
      }
      if (subject === undefined) return void this.error(d, 'Missing destination for mapping destination');
      if (weightPct === undefined) return void this.error(d, `Missing weight for mapping destination "${subject}"`);
      out.push({ subject, weightPct });
    }
    return out;
  }

  /**
   * An account's `jetstream` as nats-server's parseJetStreamForAccount: true / "enabled" (no limits), false /
   * "disabled" (null: none), or a block of limits; sizes are integers (the parser applies K/M/G suffixes).
   */
  private parseAccountJetStream(e: Located): AccountJetStreamOptions | null {
    const limits: AccountJetStreamOptions = {
      maxMemoryBytes: -1,
      maxStoreBytes: -1,
      maxStreams: -1,
      maxConsumers: -1,
      maxAckPending: -1,
      memoryMaxStreamBytes: -1,
      storeMaxStreamBytes: -1,
      maxBytesRequired: false,
    };
    const kind = this.kindOf(e);
    if (kind === 'bool') return e.value === true ? limits : null;
    if (kind === 'string') {
      const s = String(e.value).toLowerCase();
      if (s === 'enabled' || s === 'enable') return limits;
      if (s === 'disabled' || s === 'disable') return null;
      this.error(e, `Expected 'enabled' or 'disabled' for string value, got '${String(e.value)}'`);
      return null;
    }
    if (kind !== 'map') {
      this.error(e, `Expected map, bool or string to define JetStream, got ${KIND_NAMES[kind]}`);
      return null;
    }
    const m = e.value as Record<string, unknown>;
    const size = (item: Located): number | undefined => {
      if (this.kindOf(item) === 'integer' && typeof item.value === 'number') return item.value;
      return void this.error(item, `Expected a parseable size for "${item.name}", got ${String(item.value)}`);
    };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      let n: number | undefined;
      switch (k.toLowerCase()) {
        case 'max_memory':
        case 'max_mem':
        case 'mem':
        case 'memory':
          if ((n = size(item)) !== undefined) limits.maxMemoryBytes = n;
          break;
        case 'max_store':
        case 'max_file':
        case 'max_disk':
        case 'store':
        case 'disk':
          if ((n = size(item)) !== undefined) limits.maxStoreBytes = n;
          break;
        case 'max_streams':
        case 'streams':
          if ((n = size(item)) !== undefined) limits.maxStreams = n;
          break;
        case 'max_consumers':
        case 'consumers':
          if ((n = size(item)) !== undefined) limits.maxConsumers = n;
          break;
        case 'max_bytes_required':
        case 'max_stream_bytes':
        case 'max_bytes':
          if (typeof item.value === 'boolean') limits.maxBytesRequired = item.value;
          else this.error(item, `Expected a parseable bool for "${item.name}", got ${String(item.value)}`);
          break;
        case 'mem_max_stream_bytes':
        case 'memory_max_stream_bytes':
          if ((n = size(item)) !== undefined) limits.memoryMaxStreamBytes = n;
          break;
        case 'disk_max_stream_bytes':
        case 'store_max_stream_bytes':
          if ((n = size(item)) !== undefined) limits.storeMaxStreamBytes = n;
          break;
        case 'max_ack_pending':
          if ((n = size(item)) !== undefined) limits.maxAckPending = n;
          break;
        case 'cluster_traffic':
          // Which account carries the account's Raft traffic ($NRG.>): Flotilla's Raft traffic runs over the
          // nodes' gRPC links, in no account, so either value gives the same behaviour; only the value is checked.
          if (item.value !== 'system' && item.value !== 'owner' && item.value !== '') {
            this.error(item, `Expected 'system' or 'owner' string value for "${item.name}", got ${String(item.value)}`);
          }
          break;
        default:
          this.unknown(item);
      }
    }
    return limits;
  }

  /** `exports: [ { stream: "a.>", accounts: [B] }, { service: "q", response_type: singleton } ]` */
  private parseExports(e: Located): AccountExport[] {
    if (!Array.isArray(e.value)) {
      this.error(e, `Exports should be an array, got ${KIND_NAMES[this.kindOf(e)]}`);
      return [];
    }
    const out: AccountExport[] = [];
    e.value.forEach((_, index) => {
      const xe = this.entry(e.value as unknown[], index);
      xe.name = `exports[${index}]`;
      if (this.kindOf(xe) !== 'map') return this.error(xe, 'Export Items should be a map with type entry');
      const m = xe.value as Record<string, unknown>;
      let kind: AccountExport['kind'] | undefined;
      let subject: string | undefined;
      let accounts: string[] | undefined;
      let responseType: ServiceResponseType | undefined;
      let thresholdMs: number | undefined;
      let responseItem: Located | undefined;
      let tokenPosition: number | undefined;
      for (const k of Object.keys(m)) {
        const item = this.entry(m, k);
        switch (k.toLowerCase()) {
          case 'stream':
          case 'service': {
            const which = k.toLowerCase() as AccountExport['kind'];
            if (kind !== undefined) {
              this.error(item, `Detected ${which} "${String(item.value)}" but already saw a ${kind}`);
              break;
            }
            kind = which;
            subject = this.str(item);
            break;
          }
          case 'accounts':
            accounts = this.nameList(item);
            break;
          case 'response':
          case 'response_type': {
            responseItem = item;
            const s = this.str(item);
            if (s === undefined) break;
            const rt = ({ single: 'singleton', singleton: 'singleton', stream: 'stream', chunk: 'chunked', chunked: 'chunked' } as const)[
              s.toLowerCase() as 'single'
            ];
            if (rt === undefined) this.error(item, `Unknown response type: "${s}"`);
            else responseType = rt;
            break;
          }
          case 'threshold':
          case 'response_threshold':
          case 'response_max_time':
          case 'response_time': {
            responseItem = item;
            if (typeof item.value !== 'string') {
              this.error(item, 'Expected response threshold to be a parseable time duration');
              break;
            }
            const ms = parseGoDurationMs(item.value);
            if (ms === undefined) this.error(item, `Expected response threshold to be a parseable time duration, got "${item.value}"`);
            else thresholdMs = ms;
            break;
          }
          case 'account_token_position':
            tokenPosition = this.count(item);
            break;
          default:
            this.unhandled(item, 'exports');
        }
      }
      if (kind === undefined || subject === undefined) return;
      if (kind === 'stream' && responseItem !== undefined) return this.error(responseItem, 'Detected response directive on non-service');
      const exp: AccountExport = { kind, subject };
      if (accounts !== undefined) exp.accounts = accounts;
      if (tokenPosition !== undefined && tokenPosition > 0) exp.accountTokenPosition = tokenPosition;
      if (kind === 'service') {
        exp.responseType = responseType ?? 'singleton';
        if (thresholdMs !== undefined) exp.responseThresholdMs = thresholdMs;
      }
      out.push(exp);
    });
    return out;
  }

  /** `imports: [ { stream: { account: A, subject: "a.>" }, prefix: "p" }, { service: {...}, to: "q" } ]` */
  private parseImports(e: Located): AccountImport[] {
    if (!Array.isArray(e.value)) {
      this.error(e, `Imports should be an array, got ${KIND_NAMES[this.kindOf(e)]}`);
      return [];
    }
    const out: AccountImport[] = [];
    const services = new Set<string>();
    e.value.forEach((_, index) => {
      const ie = this.entry(e.value as unknown[], index);
      ie.name = `imports[${index}]`;
      if (this.kindOf(ie) !== 'map') return this.error(ie, 'Import Items should be a map with type entry');
      const m = ie.value as Record<string, unknown>;
      let imp: AccountImport | undefined;
      let prefix: string | undefined;
      let to: string | undefined;
      for (const k of Object.keys(m)) {
        const item = this.entry(m, k);
        switch (k.toLowerCase()) {
          case 'stream':
          case 'service': {
            const which = k.toLowerCase() as AccountImport['kind'];
            if (imp !== undefined) {
              this.error(item, `Detected ${which} but already saw a ${imp.kind}`);
              break;
            }
            const source = this.importSource(item, which);
            if (source !== undefined) imp = { kind: which, ...source };
            break;
          }
          case 'prefix':
            prefix = this.str(item);
            break;
          case 'to':
            to = this.str(item);
            break;
          default:
            this.unhandled(item, 'imports');
        }
      }
      if (imp === undefined) return;
      if (imp.kind === 'stream' && prefix !== undefined && to !== undefined) {
        return this.error(ie, "Stream import can not have a 'prefix' and a 'to' property");
      }
      if (prefix !== undefined && imp.kind === 'stream') imp.prefix = prefix.endsWith('.') ? prefix : `${prefix}.`;
      if (to !== undefined) imp.to = to;
      if (imp.kind === 'service') {
        const local = `${imp.account} ${imp.to ?? imp.subject}`;
        if (services.has(local)) {
          return this.error(ie, `Duplicate service import subject "${imp.to ?? imp.subject}", previously used in import for account "${imp.account}"`);
        }
        services.add(local);
      }
      out.push(imp);
    });
    return out;
  }

  /** `{ account: A, subject: "s" }` inside an import */
  private importSource(e: Located, kind: AccountImport['kind']): { account: string; subject: string } | undefined {
    if (this.kindOf(e) !== 'map') return void this.error(e, `${kind === 'stream' ? 'Stream' : 'Service'} entry should be an account map`);
    const m = e.value as Record<string, unknown>;
    let account: string | undefined;
    let subject: string | undefined;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'account':
          account = this.str(item);
          break;
        case 'subject':
          subject = this.str(item);
          break;
        default:
          this.unknown(item);
      }
    }
    if (account === undefined || account === '' || subject === undefined || subject === '') {
      return void this.error(e, 'Expect an account name and a subject');
    }
    return { account, subject };
  }

  private nameList(e: Located): string[] | undefined {
    if (!Array.isArray(e.value)) return void this.typeError(e, 'an array of account names');
    const out: string[] = [];
    e.value.forEach((_, index) => {
      const s = this.str(this.entry(e.value as unknown[], index));
      if (s !== undefined) out.push(s);
    });
    return out;
  }

  private calloutEntry: Located | undefined;

  /** nats-server's post-processing: every auth_callout allowed account is a configured account. */
  private checkCalloutAllowedAccounts(): void {
    const e = this.calloutEntry;
    const allowed = this.options.authorization?.callout?.allowedAccounts;
    if (e === undefined || allowed === undefined) return;
    const names = new Set((this.options.accounts ?? []).map((a) => a.name));
    for (const name of allowed) {
      if (!names.has(name)) this.error(e, `auth_callout allowed account "${name}" not found in configured accounts`);
    }
  }

  /** nats-server: accounts with users cannot sit next to a single authorization user or token. */
  private checkAccountsAgainstAuthorization(): void {
    const e = this.accountsEntry;
    const auth = this.options.authorization;
    if (e === undefined || auth === undefined) return;
    if (!(this.options.accounts ?? []).some((a) => a.users.length > 0)) return;
    if (auth.user !== undefined) this.error(e, 'Can not have a single user/pass and accounts');
    else if (auth.token !== undefined) this.error(e, 'Can not have a token and accounts');
  }

  /** `permissions { publish, subscribe, allow_responses }` as nats-server's parseUserPermissions reads it. */
  private parsePermissions(e: Located): Permissions | undefined {
    const m = this.map(e);
    if (!m) return undefined;
    const p: Permissions = {};
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'pub':
        case 'publish':
        case 'import': {
          const sp = this.parseSubjectPermission(item, false);
          if (sp !== undefined) p.publish = sp;
          break;
        }
        case 'sub':
        case 'subscribe':
        case 'export': {
          const sp = this.parseSubjectPermission(item, true);
          if (sp !== undefined) p.subscribe = sp;
          break;
        }
        case 'allow_responses':
        case 'allow_response': {
          const rp = this.parseResponsePermission(item);
          if (rp !== undefined) p.allowResponses = rp;
          break;
        }
        default:
          this.unknown(item);
      }
    }
    // With allow_responses and no publish allow list, publishing is limited to responses (nats-server).
    if (p.allowResponses !== undefined) {
      p.publish ??= {};
      p.publish.allow ??= [];
    }
    return p;
  }

  /** A subject, an array of subjects (both mean allow), or `{ allow, deny }`. */
  private parseSubjectPermission(e: Located, queuesAllowed: boolean): SubjectPermission | undefined {
    const kind = this.kindOf(e);
    if (kind === 'string' || kind === 'array') {
      const allow = this.subjectList(e, queuesAllowed);
      return allow === undefined ? undefined : { allow };
    }
    const m = this.map(e);
    if (!m) return undefined;
    const sp: SubjectPermission = {};
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'allow': {
          const l = this.subjectList(item, queuesAllowed);
          if (l !== undefined) sp.allow = l;
          break;
        }
        case 'deny': {
          const l = this.subjectList(item, queuesAllowed);
          if (l !== undefined) sp.deny = l;
          break;
        }
        default:
          this.error(item, `Unknown field "${item.name}" parsing subject permissions`);
      }
    }
    return sp;
  }

  private subjectList(e: Located, queuesAllowed: boolean): string[] | undefined {
    const items: Located[] = [];
    if (typeof e.value === 'string') items.push(e);
    else if (Array.isArray(e.value)) {
      e.value.forEach((_, index) => {
        const item = this.entry(e.value as unknown[], index);
        item.name = `${e.name}[${index}]`;
        items.push(item);
      });
    } else return void this.typeError(e, 'a subject or an array of subjects');
    const out: string[] = [];
    for (const item of items) {
      const s = this.str(item);
      if (s === undefined) continue;
      // "subject queue" names a queue group (subscribe permissions only)
      const parts = s.split(' ');
      const valid = isValidSubject(parts[0]!) && (parts.length === 1 || (queuesAllowed && parts.length === 2 && parts[1] !== ''));
      if (!valid) this.error(item, `subject "${s}" is not a valid subject`);
      else out.push(s);
    }
    return out;
  }

  /** `true` (one response within 2 minutes), `false`, or `{ max, expires }`. */
  private parseResponsePermission(e: Located): ResponsePermission | undefined {
    if (this.kindOf(e) === 'bool') return e.value === true ? { ...DEFAULT_RESPONSE_PERMISSION } : undefined;
    const m = this.map(e);
    if (!m) return undefined;
    const rp: ResponsePermission = { ...DEFAULT_RESPONSE_PERMISSION };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'max':
        case 'max_msgs':
        case 'max_messages':
        case 'max_responses': {
          const n = this.count(item);
          if (n !== undefined) rp.maxMsgs = n;
          break;
        }
        case 'expires':
        case 'expiration':
        case 'ttl': {
          const ms = this.durationMs(item);
          if (ms !== undefined) rp.expiresMs = ms;
          break;
        }
        default:
          this.error(item, `Unknown field "${item.name}" parsing allow responses`);
      }
    }
    return rp;
  }

  /** `tls { cert_file, key_file, ca_file, verify, verify_and_map, timeout }` for client connections. */
  private applyTls(e: Located): void {
    const tls = this.parseTls(e, 'tls');
    if (tls !== undefined) this.options.tls = tls;
  }

  /** A client-side `tls {}` block (the top-level one, or the websocket block's). */
  private parseTls(e: Located, scope: 'tls' | 'websocket tls'): TlsOptions | undefined {
    const m = this.map(e);
    if (!m) return undefined;
    let certFile: string | undefined;
    let keyFile: string | undefined;
    const tls: Omit<TlsOptions, 'certFile' | 'keyFile'> = { verify: false, verifyAndMap: false, timeoutMs: DEFAULT_TLS_TIMEOUT_MS };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'cert_file':
          certFile = this.str(item);
          break;
        case 'key_file':
          keyFile = this.str(item);
          break;
        case 'ca_file': {
          const s = this.str(item);
          if (s !== undefined) tls.caFile = s;
          break;
        }
        case 'verify': {
          const b = this.bool(item);
          if (b !== undefined) tls.verify = b;
          break;
        }
        case 'verify_and_map': {
          const b = this.bool(item);
          if (b !== undefined) {
            tls.verifyAndMap = b;
            if (b) tls.verify = true;
          }
          break;
        }
        case 'timeout': {
          const kind = this.kindOf(item);
          if (kind === 'string') {
            const ms = this.durationMs(item);
            if (ms !== undefined) tls.timeoutMs = ms;
          } else if (kind !== 'integer' && kind !== 'float') this.typeError(item, 'a number of seconds');
          else if ((item.value as number) < 0) this.error(item, 'timeout: can not be negative');
          else tls.timeoutMs = Math.round((item.value as number) * 1000);
          break;
        }
        default:
          this.unhandled(item, scope);
      }
    }
    if (certFile === undefined) return void this.error(e, "missing 'cert_file' in TLS configuration");
    if (keyFile === undefined) return void this.error(e, "missing 'key_file' in TLS configuration");
    return { certFile, keyFile, ...tls };
  }

  /** A listener block's `listen` / `port` / `host` (`net`), as nats-server reads them in websocket and leafnodes. */
  private listenerKey(key: 'listen' | 'port' | 'host' | 'net' | string, item: Located, into: { host: string; port: number }): void {
    if (key === 'listen') {
      const hp = this.listen(item);
      if (!hp) return;
      if (hp.host !== undefined) into.host = hp.host;
      into.port = hp.port;
    } else if (key === 'port') {
      const p = this.port(item);
      if (p !== undefined) into.port = p;
    } else {
      const v = this.str(item);
      if (v !== undefined) into.host = v;
    }
  }

  /** `websocket {}` (nats-server's parseWebsocket); cross-key checks are in websocket/websocket-options-check.ts. */
  private applyWebsocket(e: Located): void {
    const m = this.map(e);
    if (!m) return;
    const ws: WebsocketOptions = { host: '', port: 0, noTls: false, sameOrigin: false, allowedOrigins: [], compression: false, handshakeTimeoutMs: 0 };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'listen':
        case 'port':
        case 'host':
        case 'net':
          this.listenerKey(k.toLowerCase(), item, ws);
          break;
        case 'advertise': {
          const v = this.str(item);
          if (v !== undefined) ws.advertise = v;
          break;
        }
        case 'no_tls': {
          const b = this.bool(item);
          if (b !== undefined) ws.noTls = b;
          break;
        }
        case 'tls': {
          const tls = this.parseTls(item, 'websocket tls');
          if (tls !== undefined) ws.tls = tls;
          break;
        }
        case 'same_origin': {
          const b = this.bool(item);
          if (b !== undefined) ws.sameOrigin = b;
          break;
        }
        case 'allowed_origins':
        case 'allowed_origin':
        case 'allow_origins':
        case 'allow_origin':
        case 'origins':
        case 'origin': {
          const values = this.kindOf(item) === 'array' ? (item.value as unknown[]).map((_, i) => this.entry(item.value as object, i)) : [item];
          ws.allowedOrigins = values.map((v) => this.str(v)).filter((v): v is string => v !== undefined);
          break;
        }
        case 'handshake_timeout': {
          const ms = this.durationMs(item);
          if (ms !== undefined) ws.handshakeTimeoutMs = ms;
          break;
        }
        case 'compress':
        case 'compression': {
          const b = this.bool(item);
          if (b !== undefined) ws.compression = b;
          break;
        }
        case 'authorization':
        case 'authentication': {
          const auth = this.clusterAuthorization(item);
          if (auth === undefined) break;
          ws.authorization = {
            ...(auth.user !== undefined ? { user: auth.user } : {}),
            ...(auth.password !== undefined ? { password: auth.password } : {}),
            ...(auth.token !== undefined ? { token: auth.token } : {}),
            ...(auth.timeoutMs !== undefined ? { timeoutSec: auth.timeoutMs / 1000 } : {}),
          };
          break;
        }
        case 'no_auth_user': {
          const v = this.str(item);
          if (v !== undefined) ws.noAuthUser = v;
          break;
        }
        case 'user_cookie':
        case 'pass_cookie':
        case 'token_cookie':
        case 'jwt_cookie': {
          const v = this.str(item);
          const key = k.toLowerCase();
          const field = key === 'user_cookie' ? 'userCookie' : key === 'pass_cookie' ? 'passCookie' : key === 'jwt_cookie' ? 'jwtCookie' : 'tokenCookie';
          if (v !== undefined) ws[field] = v;
          break;
        }
        case 'ping_interval': {
          const ms = this.durationMs(item);
          if (ms) ws.pingIntervalMs = ms;
          break;
        }
        case 'headers': {
          const hm = this.map(item);
          if (!hm) break;
          const headers: Record<string, string> = {};
          for (const hk of Object.keys(hm)) {
            const v = this.str(this.entry(hm, hk));
            if (v !== undefined) headers[hk] = v;
          }
          ws.headers = headers;
          break;
        }
        default:
          this.unhandled(item, 'websocket');
      }
    }
    // nats-server's baseline: a listener without a host binds every interface
    if (ws.port !== 0 && ws.host === '') ws.host = '0.0.0.0';
    this.options.websocket = ws;
  }

  /** `leafnodes {}` (nats-server's parseLeafNodes, the keys Flotilla serves). */
  private applyLeafnodes(e: Located): void {
    const m = this.map(e);
    if (!m) return;
    const leaf: LeafNodeOptions = { host: '', port: 0, users: [], remotes: [], reconnectMs: 1000 };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'listen':
        case 'port':
        case 'host':
        case 'net':
          this.listenerKey(k.toLowerCase(), item, leaf);
          break;
        case 'reconnect':
        case 'reconnect_delay':
        case 'reconnect_interval': {
          const kind = this.kindOf(item);
          if (kind === 'string') {
            const ms = this.durationMs(item);
            if (ms !== undefined) leaf.reconnectMs = ms;
          } else if (kind === 'integer' || kind === 'float') leaf.reconnectMs = Math.max(0, Math.round((item.value as number) * 1000));
          break;
        }
        case 'authorization':
        case 'authentication':
          this.leafAuthorization(item, leaf);
          break;
        case 'remotes': {
          if (this.kindOf(item) !== 'array') {
            this.error(item, 'leafnodes remotes must be an array');
            break;
          }
          const arr = item.value as unknown[];
          for (let i = 0; i < arr.length; i++) {
            const r = this.leafRemote(this.entry(arr, i));
            if (r !== undefined) leaf.remotes.push(r);
          }
          break;
        }
        default:
          this.unhandled(item, 'leafnodes');
      }
    }
    if (leaf.port !== 0 && leaf.host === '') leaf.host = '0.0.0.0';
    this.options.leafnodes = leaf;
  }

  /** An `authorization { timeout }`: seconds (a number), or a duration string as newer nats-server versions take. */
  private authTimeoutSec(item: Located): number | undefined {
    const kind = this.kindOf(item);
    if (kind === 'string') {
      const ms = parseGoDurationMs(item.value as string);
      if (ms === undefined || ms < 0) return void this.error(item, `timeout: invalid duration "${item.value as string}"`);
      return ms / 1000;
    }
    if (kind !== 'integer' && kind !== 'float') return void this.typeError(item, 'a number of seconds');
    if ((item.value as number) < 0) return void this.error(item, 'timeout: can not be negative');
    return item.value as number;
  }

  /** `user`/`username`, `password`/`pass`, `account` of a leafnodes credential; false for any other key. */
  private leafCredentialKey(key: string, item: Located, into: { user?: string; password?: string; account?: string }): boolean {
    switch (key) {
      case 'user':
      case 'username':
        into.user = this.str(item);
        return true;
      case 'password':
      case 'pass':
        into.password = this.str(item);
        return true;
      case 'account':
        into.account = this.str(item);
        return true;
      default:
        return false;
    }
  }

  private leafAuthorization(e: Located, leaf: LeafNodeOptions): void {
    const m = this.map(e);
    if (!m) return;
    const single: { user?: string; password?: string; account?: string } = {};
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      const key = k.toLowerCase();
      if (this.leafCredentialKey(key, item, single)) continue;
      switch (key) {
        case 'timeout': {
          const sec = this.authTimeoutSec(item);
          if (sec !== undefined) leaf.authTimeoutMs = Math.round(sec * 1000);
          break;
        }
        case 'users': {
          if (this.kindOf(item) !== 'array') {
            this.error(item, 'leafnodes authorization users must be an array');
            break;
          }
          const arr = item.value as unknown[];
          for (let i = 0; i < arr.length; i++) {
            const um = this.map(this.entry(arr, i));
            if (!um) continue;
            const u: { user?: string; password?: string; account?: string } = {};
            for (const uk of Object.keys(um)) {
              const ui = this.entry(um, uk);
              if (!this.leafCredentialKey(uk.toLowerCase(), ui, u)) this.unknown(ui);
            }
            if (u.user !== undefined) leaf.users.push({ user: u.user, password: u.password ?? '', ...(u.account !== undefined ? { account: u.account } : {}) });
          }
          break;
        }
        default:
          this.unknown(item);
      }
    }
    if (single.account !== undefined) leaf.authAccount = single.account;
    if (single.user !== undefined) leaf.users.push({ user: single.user, password: single.password ?? '', ...(leaf.authAccount !== undefined ? { account: leaf.authAccount } : {}) });
  }

  private leafRemote(e: Located): LeafRemoteOptions | undefined {
    const m = this.map(e);
    if (!m) return undefined;
    const remote: LeafRemoteOptions = { urls: [] };
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'url':
        case 'urls': {
          const values = this.kindOf(item) === 'array' ? (item.value as unknown[]).map((_, i) => this.entry(item.value as object, i)) : [item];
          for (const v of values) {
            const s = this.str(v);
            if (s === undefined) continue;
            try {
              new URL(s.includes('://') ? s : `nats-leaf://${s}`);
              remote.urls.push(s.includes('://') ? s : `nats-leaf://${s}`);
            } catch {
              this.error(v, `error parsing remote leafnode url "${s}"`);
            }
          }
          break;
        }
        case 'account':
        case 'local': {
          const v = this.str(item);
          if (v !== undefined) remote.account = v;
          break;
        }
        default:
          this.unhandled(item, 'leafnodes remote');
      }
    }
    return remote;
  }

  private applyCluster(e: Located): void {
    const m = this.map(e);
    if (!m) return;
    const cluster = this.options.cluster ?? { routes: [] };
    let host: string | undefined;
    let port: number | undefined;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'name': {
          const s = this.str(item);
          if (s === undefined) break;
          if (/\s/.test(s)) this.error(item, 'cluster name can not contain spaces');
          else cluster.name = s;
          break;
        }
        case 'listen': {
          const hp = this.listen(item);
          if (!hp) break;
          if (hp.host !== undefined) host = hp.host;
          port = hp.port;
          break;
        }
        case 'port': {
          const p = this.port(item);
          if (p !== undefined) port = p;
          break;
        }
        case 'host':
        case 'net': {
          const s = this.str(item);
          if (s !== undefined) host = s;
          break;
        }
        case 'routes':
          cluster.routes = this.parseRoutes(item, cluster);
          break;
        case 'advertise':
        case 'cluster_advertise': {
          const s = this.str(item);
          if (s !== undefined && s !== '') cluster.advertise = s;
          break;
        }
        case 'no_advertise': {
          const b = this.bool(item);
          if (b !== undefined) cluster.noAdvertise = b;
          break;
        }
        case 'authorization': {
          const auth = this.clusterAuthorization(item);
          if (auth !== undefined) cluster.authorization = auth;
          break;
        }
        case 'tls': {
          const tls = this.clusterTls(item);
          if (tls !== undefined) cluster.tls = tls;
          break;
        }
        default:
          this.unhandled(item, 'cluster');
      }
    }
    // Without a port there is no cluster listener (nats-server: cluster port 0 = none).
    if (port !== undefined && port !== 0) {
      const listen: HostPort = { host: host === undefined || host === '' ? '0.0.0.0' : host, port };
      cluster.listen = listen;
    }
    this.options.cluster = cluster;
  }

  /** nats-server's route auth block: user + password, or token; timeout bounds an inbound route's authentication. */
  private clusterAuthorization(e: Located): ClusterAuthorization | undefined {
    const m = this.map(e);
    if (!m) return undefined;
    const auth: ClusterAuthorization = {};
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'user':
        case 'username': {
          const v = this.str(item);
          if (v !== undefined) auth.user = v;
          break;
        }
        case 'password':
        case 'pass': {
          const v = this.str(item);
          if (v !== undefined) auth.password = v;
          break;
        }
        case 'token': {
          const v = this.str(item);
          if (v !== undefined) auth.token = v;
          break;
        }
        case 'timeout': {
          // Seconds, or a duration string, as nats-server's parseAuthorization takes it.
          const kind = this.kindOf(item);
          if (kind === 'string') {
            const ms = this.durationMs(item);
            if (ms !== undefined) auth.timeoutMs = ms;
          } else if (kind === 'integer' || kind === 'float') auth.timeoutMs = Math.max(0, Math.round((item.value as number) * 1000));
          else this.typeError(item, 'a number of seconds');
          break;
        }
        default:
          this.unknown(item);
      }
    }
    if (auth.token !== undefined && auth.user !== undefined) return void this.error(e, 'cluster authorization: can not have a token and a user');
    return auth;
  }

  /** nats-server's cluster tls block; verify is always on for routes (as nats-server forces it). */
  private clusterTls(e: Located): ClusterTlsOptions | undefined {
    const m = this.map(e);
    if (!m) return undefined;
    let certFile: string | undefined;
    let keyFile: string | undefined;
    let caFile: string | undefined;
    let timeoutMs = DEFAULT_TLS_TIMEOUT_MS;
    for (const k of Object.keys(m)) {
      const item = this.entry(m, k);
      switch (k.toLowerCase()) {
        case 'cert_file':
          certFile = this.str(item);
          break;
        case 'key_file':
          keyFile = this.str(item);
          break;
        case 'ca_file':
          caFile = this.str(item);
          break;
        case 'verify':
          this.bool(item);
          break;
        case 'timeout': {
          const kind = this.kindOf(item);
          if (kind === 'string') timeoutMs = this.durationMs(item) ?? timeoutMs;
          else if (kind === 'integer' || kind === 'float') timeoutMs = Math.max(0, Math.round((item.value as number) * 1000));
          else this.typeError(item, 'a number of seconds');
          break;
        }
        default:
          this.unhandled(item, 'cluster tls');
      }
    }
    if (certFile === undefined) return void this.error(e, "missing 'cert_file' in cluster TLS configuration");
    if (keyFile === undefined) return void this.error(e, "missing 'key_file' in cluster TLS configuration");
    if (caFile === undefined) return void this.error(e, "missing 'ca_file' in cluster TLS configuration (peers are verified against it)");
    return { certFile, keyFile, caFile, timeoutMs };
  }

  private parseRoutes(e: Located, cluster?: ClusterOptions): string[] {
    if (!Array.isArray(e.value)) {
      this.typeError(e, 'an array of route URLs');
      return [];
    }
    const routes: string[] = [];
    e.value.forEach((_, index) => {
      const item = this.entry(e.value as unknown[], index);
      item.name = `routes[${index}]`;
      const s = this.str(item);
      if (s === undefined) return;
      const r = normaliseRouteUrl(s);
      if ('error' in r) return this.error(item, r.error);
      routes.push(r.route);
      const creds = urlCredentials(s);
      if (creds !== undefined && cluster !== undefined) (cluster.routeCredentials ??= {})[r.route] = creds;
    });
    return routes;
  }
}
