// The resolved configuration of one Flotilla process: defaults, then the config file, then flags.
// Every consumer in the server reads this shape; parsing lives in conf-parser.ts (files) and cli.ts (flags).
import type { MappingOptions } from '../accounts/subject-mappings.js';
import type { AuthCalloutOptions } from './auth-callout-keys.js';
import type { LeafNodeOptions } from '../leafnode/leafnode-options.js';

/** One direction of a user's permissions: subjects (wildcards allowed; "subj queue" for queue groups). */
export interface SubjectPermission {
  allow?: string[];
  deny?: string[];
}

/** `allow_responses`: may publish to reply subjects of messages received, `maxMsgs` times within `expiresMs`. */
export interface ResponsePermission {
  maxMsgs: number; // 0 = unlimited
  expiresMs: number; // 0 = never
}

export interface Permissions {
  publish?: SubjectPermission;
  subscribe?: SubjectPermission;
  allowResponses?: ResponsePermission;
}

export interface UserEntry {
  /** the user name; for an nkey user, its public key (as nats-server names nkey users) */
  user: string;
  /** plain text or a bcrypt hash ($2a$/$2b$/$2x$/$2y$); '' for users authenticated by certificate or nkey */
  password: string;
  /** set for an nkey user (`{ nkey: U... }`): it signs the INFO nonce instead of giving a password */
  nkey?: string;
  permissions?: Permissions;
}

/** `response_type` of a service export: how many responses a request may get back across accounts. */
export type ServiceResponseType = 'singleton' | 'stream' | 'chunked';

/** One entry of an account's `exports`; `accounts` absent = public. */
export interface AccountExport {
  kind: 'stream' | 'service';
  subject: string;
  accounts?: string[];
  /**
   * 1-based: the subject's token at this position (a `*` in the export) must be the importing account's name;
   * then only that grants the import (nats-server's account_token_position)
   */
  accountTokenPosition?: number;
  /** services only (default singleton) */
  responseType?: ServiceResponseType;
  /** services only: how long a response may come back (nats-server's default 2 minutes) */
  responseThresholdMs?: number;
}

/** One entry of an account's `imports`: `subject` is in `account`; `to` / `prefix` name it here. */
export interface AccountImport {
  kind: 'stream' | 'service';
  account: string;
  subject: string;
  /** stream: the subject messages get here; service: the subject this account's clients request on */
  to?: string;
  /** streams only: literal prefix put in front of the subject */
  prefix?: string;
}

/** An account's `jetstream: enabled` or `{ max_mem, max_file, ... }` (nats-server's JetStreamAccountLimits); -1 = no limit. */
export interface AccountJetStreamLimitOptions {
  maxMemoryBytes: number;
  maxStoreBytes: number;
  maxStreams: number;
  maxConsumers: number;
  maxAckPending: number;
  memoryMaxStreamBytes: number;
  storeMaxStreamBytes: number;
  maxBytesRequired: boolean;
}

export interface AccountJetStreamOptions extends AccountJetStreamLimitOptions {
  /**
   * An account JWT's tiered_limits by tier name (`R1`, `R3`…): a stream is limited by its replica count's
   * tier and the fields above are unused (nats-server keeps either the default limits or the tiers).
   */
  tiers?: Record<string, AccountJetStreamLimitOptions>;
}

/** `accounts { NAME: { users, exports, imports, default_permissions, jetstream } }` */
export interface AccountOptions {
  name: string;
  /**
   * the account's own public nkey (`nkey: "A..."`): nats-server 2.14 checks it and keeps it on the account
   * (Account.Nkey) without using it further: names, imports and events stay by account name.
   */
  nkey?: string;
  users: UserEntry[];
  exports: AccountExport[];
  imports: AccountImport[];
  /** absent: the account has no JetStream (its `$JS.API` answers 10039 when the server has JetStream) */
  jetstream?: AccountJetStreamOptions;
  /** subject mappings applied to its clients' publishes (`mappings {}` in the account) */
  mappings?: MappingOptions[];
  /** `limits {}` of the account (nats-server's parseAccountLimits); absent: none */
  limits?: AccountLimitOptions;
}

/** -1: no limit. Connections count this node's clients; subscriptions and payload apply per connection. */
export interface AccountLimitOptions {
  maxConnections: number;
  maxSubscriptions: number;
  maxPayloadBytes: number;
  /** leaf nodes are not served, so none can exceed it */
  maxLeafnodes: number;
}

export interface AuthorizationOptions {
  user?: string;
  password?: string;
  token?: string;
  users?: UserEntry[];
  /** for users without their own (nats-server's default_permissions) */
  defaultPermissions?: Permissions;
  /** seconds; nats-server's auth_timeout (default 2 when auth is configured) */
  timeoutSec?: number;
  /** `auth_callout {}`: clients other than its auth_users are authorized by an external service */
  callout?: AuthCalloutOptions;
}

export interface JetStreamOptions {
  enabled: boolean;
  storeDir: string;
  maxMemoryStoreBytes: number; // -1 = unlimited
  maxFileStoreBytes: number; // -1 = unlimited
  domain?: string;
  /** `unique_tag`: the tag prefix (say `az:`) no two replicas of one stream may share a value of */
  uniqueTag?: string;
  /**
   * File-store sync: undefined = fsync before every ack (Flotilla's default, unlike nats-server's 2m
   * interval); a number = sync every that many ms (`jetstream { sync_interval: "1s" }`, nats-server 2.10).
   */
  syncIntervalMs?: number;
}

export interface ClusterOptions {
  name?: string;
  /** `cluster_advertise` / `advertise`: host[:port] peers are told to dial */
  advertise?: string;
  /** `no_advertise`: clients' INFO lists no other server's URL (connect_urls) */
  noAdvertise?: boolean;
  /** host:port the cluster listener binds; port -1 means any free port */
  listen?: { host: string; port: number };
  /** peers as normalised host:port strings */
  routes: string[];
  /** nats-server's route auth (`cluster { authorization {} }`, or credentials in the --cluster URL) */
  authorization?: ClusterAuthorization;
  /** credentials carried by route URLs (nats://user:pass@h:p), keyed by the normalised route */
  routeCredentials?: Record<string, ClusterAuthorization>;
  /** mutual TLS between nodes (`cluster { tls {} }`) */
  tls?: ClusterTlsOptions;
}

export interface ClusterAuthorization {
  user?: string;
  password?: string;
  token?: string;
  /** an inbound route must authenticate within this (`authorization { timeout }`; nats-server default 2 s) */
  timeoutMs?: number;
}

export interface ClusterTlsOptions {
  certFile: string;
  keyFile: string;
  caFile: string;
  timeoutMs: number;
}

/** Client TLS (`tls {}` or --tls/--tlscert/--tlskey/--tlsverify/--tlscacert). */
export interface TlsOptions {
  certFile: string;
  keyFile: string;
  caFile?: string;
  /** require and check client certificates */
  verify: boolean;
  /** verify, and authenticate the client as the user its certificate names */
  verifyAndMap: boolean;
  /** handshake must complete within this (nats-server default 2 s) */
  timeoutMs: number;
}

export const DEFAULT_TLS_TIMEOUT_MS = 2000;

/** `websocket {}`: a second client listener speaking the NATS protocol over WebSocket frames. */
export interface WebsocketOptions {
  host: string;
  /** -1: any free port */
  port: number;
  /** host[:port] given to clients instead of the listen address */
  advertise?: string;
  noTls: boolean;
  tls?: TlsOptions;
  sameOrigin: boolean;
  /** absolute http(s) URLs; empty: any origin */
  allowedOrigins: string[];
  /** permessage-deflate, when the client asks for it */
  compression: boolean;
  /** 0: none */
  handshakeTimeoutMs: number;
  /** `authorization { user, password, token, timeout }`: replaces the top-level single user/token for WebSocket clients */
  authorization?: { user?: string; password?: string; token?: string; timeoutSec?: number };
  /** replaces the top-level no_auth_user for WebSocket clients */
  noAuthUser?: string;
  /** cookies whose values stand in for CONNECT's user / pass / auth_token when it gives none */
  userCookie?: string;
  passCookie?: string;
  tokenCookie?: string;
  /** operator mode: the cookie whose value stands in for CONNECT's user JWT (a bearer JWT: no nonce to sign) */
  jwtCookie?: string;
  /** server PINGs to WebSocket clients this often (nats-server 2.11+); absent: the top-level ping_interval */
  pingIntervalMs?: number;
  /** extra headers on the 101 response */
  headers?: Record<string, string>;
}

export type LogLevel = 'info' | 'debug' | 'trace';

export interface ServerOptions {
  host: string; // default 0.0.0.0
  port: number; // default 4222; -1 = random free port (0 is also "random")
  serverName?: string;
  /** `client_advertise`: host[:port] given to clients (and peers, for their connect_urls) instead of the listen address */
  clientAdvertise?: string;
  /** `server_tags`: this node's placement tags (lower case), matched by stream `placement.tags` */
  serverTags?: string[];
  httpHost: string; // default 0.0.0.0 (or the http: "host:port" host)
  httpPort: number; // 0 = monitoring disabled unless httpPortRandom; -1 = random
  maxPayloadBytes: number; // default 1048576
  maxControlLineBytes: number; // default 4096
  maxConnections: number; // default 65536
  maxSubscriptions: number; // per connection; 0 = unlimited (default)
  maxPendingBytes: number; // default 64 MiB; per-connection outbound bound (slow consumer)
  pingIntervalMs: number; // default 120000
  pingMax: number; // default 2
  writeDeadlineMs: number; // default 10000
  logLevel: LogLevel;
  logFile?: string;
  /** `logfile_size_limit`: rotate the log file past this size (log-file-sink.ts); absent/0: never */
  logSizeLimitBytes?: number;
  /** `logfile_max_num`: keep this many log files, the live one included; absent/0: all */
  logMaxFiles?: number;
  authorization?: AuthorizationOptions;
  /** accounts other than the global one ($G); their users are not in `authorization.users` */
  accounts?: AccountOptions[];
  /** clients that give no credentials connect as this user (a name or an nkey) */
  noAuthUser?: string;
  /** the global account's subject mappings (top-level `mappings {}`) */
  mappings?: MappingOptions[];
  /** `system_account` / `system`: the account whose users see `$SYS` (default `$SYS`, made when not configured) */
  systemAccount?: string;
  /** `no_system_account`: no system account unless `system_account` names one */
  noSystemAccount?: boolean;
  /** operator (decentralized JWT) mode: `operator`, `resolver`, `resolver_preload` */
  operator?: OperatorOptions;
  tls?: TlsOptions;
  jetstream: JetStreamOptions;
  cluster?: ClusterOptions;
  websocket?: WebsocketOptions;
  /** `leafnodes {}` (packages/server/src/leafnode) */
  leafnodes?: LeafNodeOptions;
  portsFileDir?: string;
  /** `pid_file` / `-P`: written at start (pid-file.ts) */
  pidFile?: string;
  /** `lame_duck_duration` (nats-server default 2m, at least 30 s) and `lame_duck_grace_period` (default 10s) */
  lameDuckDurationMs?: number;
  lameDuckGracePeriodMs?: number;
  /** blocks accepted but not served yet, each warned about once */
  ignoredBlocks: string[];
  /** path of the config file this came from, if any */
  configFile?: string;
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

export function defaultServerOptions(): ServerOptions {
  return {
    host: '0.0.0.0',
    port: 4222,
    httpHost: '0.0.0.0',
    httpPort: 0,
    maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
    maxControlLineBytes: 4096,
    maxConnections: 64 * 1024,
    maxSubscriptions: 0,
    maxPendingBytes: 64 * 1024 * 1024,
    pingIntervalMs: 120_000,
    pingMax: 2,
    writeDeadlineMs: 10_000,
    logLevel: 'info',
    jetstream: { enabled: false, storeDir: '', maxMemoryStoreBytes: -1, maxFileStoreBytes: -1 },
    ignoredBlocks: [],
  };
}

/** `resolver: MEMORY` (accounts only from `resolver_preload`) or `resolver { type: full, dir, ... }` (JWT files on disk). */
export type ResolverOptions =
  | { type: 'memory' }
  | { type: 'full'; dir: string; allowDelete: boolean; intervalMs: number; limit: number };

export interface OperatorOptions {
  /** the operator JWTs, read from their files when given as paths */
  operatorJwts: string[];
  /** `trusted` / `trusted_keys`: operator public keys trusted without their JWTs */
  trustedKeys: string[];
  resolver?: ResolverOptions;
  /** account public key -> account JWT */
  preload: Record<string, string>;
}
