// The one table of nats-server config keys Flotilla recognises but does not implement, per block. A key
// whose absence would weaken authentication, authorisation, encryption, a limit or durability is refused
// (the server does not start, `-t` fails): a config that asks for it must not run open. A key whose
// absence only changes something cosmetic, or leaves the server stricter (a listener not opened, a
// relaxation not applied), is accepted with a warning.

/** The block a key sits in; names appear in messages ("'cipher' in jetstream"). */
export type ConfScope = 'top' | 'jetstream' | 'tls' | 'websocket' | 'websocket tls' | 'cluster' | 'cluster tls' | 'users' | 'account' | 'exports' | 'imports' | 'leafnodes' | 'leafnodes remote';

export type UnimplementedKey =
  /** refuse to start; `why` completes "ignoring it would …" */
  | { effect: 'refuse'; why: string }
  | { effect: 'warn' };

const WARN: UnimplementedKey = { effect: 'warn' };
const refuse = (why: string): UnimplementedKey => ({ effect: 'refuse', why });

const NO_TLS_TUNING = refuse('let TLS negotiate what the config excludes');
const NO_PINNING = refuse('accept certificates the config does not pin');

export const UNIMPLEMENTED_KEYS: Readonly<Record<ConfScope, Readonly<Record<string, UnimplementedKey>>>> = {
  top: {
    // listeners not served yet: nothing is opened, so nothing is exposed
    gateway: WARN,
    mqtt: WARN,
    logtime: WARN,
    disable_sublist_cache: WARN,
    no_sublist_cache: WARN,
    https: WARN,
    https_port: WARN,
    http_base_path: WARN,
    syslog: WARN,
    remote_syslog: WARN,
    prof_port: WARN,
    max_traced_msg_len: WARN,
    // with tls {} Flotilla already refuses plain clients: ignoring the relaxation is stricter
    allow_non_tls: WARN,
    no_header_support: WARN,
    connect_error_reports: WARN,
    reconnect_error_reports: WARN,
    default_js_domain: WARN,

    resolver_tls: refuse('fetch account JWTs without the TLS settings it gives'),
    resolver_pinned_accounts: refuse('let accounts outside the pinned list connect'),
    max_sub_tokens: refuse('lift the limit on subject tokens per subscription'),
    max_subscription_tokens: refuse('lift the limit on subject tokens per subscription'),
    ocsp: refuse('keep serving with a certificate OCSP reports revoked'),
  },
  jetstream: {
    extension_hint: WARN,
    max_outstanding_catchup: WARN,
    key: refuse('write stream data unencrypted'),
    ek: refuse('write stream data unencrypted'),
    encryption_key: refuse('write stream data unencrypted'),
    prev_encryption_key: refuse('write stream data unencrypted'),
    cipher: refuse('write stream data unencrypted'),
    limits: refuse('lift the JetStream limits it sets'),
  },
  tls: {
    // client-side TLS knob: ignoring it verifies more, not less
    insecure: WARN,
    cert_store: WARN,
    cert_match: WARN,
    cert_match_by: WARN,
    handshake_first: WARN,
    cipher_suites: NO_TLS_TUNING,
    curve_preferences: NO_TLS_TUNING,
    pinned_certs: NO_PINNING,
    verify_cert_and_check_known_urls: refuse('accept client certificates whose names are not checked'),
  },
  leafnodes: {
    tls: refuse('accept leafs without the TLS the config asks for'),
    advertise: WARN,
    no_advertise: WARN,
    min_version: refuse('accept leafs older than the configured minimum'),
    compression: WARN,
    isolate_leafnode_interest: WARN,
    write_deadline: WARN,
  },
  'leafnodes remote': {
    credentials: refuse('attach without the credentials the config names (credentials files are not implemented for remotes)'),
    nkey: refuse('attach without the nkey the config names'),
    tls: refuse('attach without the TLS the config asks for'),
    deny_imports: refuse('let in messages the config denies'),
    deny_exports: refuse('send out messages the config denies'),
    hub: WARN,
    compression: WARN,
    ws_compression: WARN,
    ws_no_masking: WARN,
    first_info_timeout: WARN,
    local_isolation: WARN,
    request_isolation: WARN,
    disabled: WARN,
  },
  websocket: {},
  'websocket tls': {
    insecure: WARN,
    cert_store: WARN,
    cert_match: WARN,
    cert_match_by: WARN,
    handshake_first: WARN,
    cipher_suites: NO_TLS_TUNING,
    curve_preferences: NO_TLS_TUNING,
    pinned_certs: NO_PINNING,
    verify_cert_and_check_known_urls: refuse('accept client certificates whose names are not checked'),
  },
  cluster: {
    connect_retries: WARN,
    permissions: refuse('forward subjects across routes that the route permissions forbid'),
  },
  'cluster tls': {
    insecure: WARN, // routes are always verified against ca_file
    cipher_suites: NO_TLS_TUNING,
    curve_preferences: NO_TLS_TUNING,
    pinned_certs: NO_PINNING,
    verify_and_map: refuse('admit routes without mapping their certificate to a route user'),
    verify_cert_and_check_known_urls: refuse('accept route certificates whose names are not checked'),
  },
  users: {
    allowed_connection_types: refuse('let the user connect over connection types the config forbids'),
    connection_types: refuse('let the user connect over connection types the config forbids'),
    clients: refuse('let the user connect over connection types the config forbids'),
    proxy_required: refuse('let the user connect without the trusted proxy the config requires'),
  },
  // inside one account of `accounts {}`
  account: {
    msg_trace: WARN,
    trace_dest: WARN,
  },
  exports: {
    latency: WARN,
    allow_trace: WARN,
  },
  imports: {
    share: WARN,
    allow_trace: WARN,
  },
};

/** The entry for `key` (any case) in `scope`, or undefined when Flotilla implements it or does not know it. */
export function unimplementedKey(scope: ConfScope, key: string): UnimplementedKey | undefined {
  const table = UNIMPLEMENTED_KEYS[scope];
  const k = key.toLowerCase();
  return Object.hasOwn(table, k) ? table[k] : undefined;
}
