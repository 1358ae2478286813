// A NATS JWT (nats-io/jwt v2): base64url header `{"typ":"JWT","alg":"ed25519-nkey"}`, base64url claims, and
// the Ed25519 signature of "header.claims" by the nkey in `iss`. Verification uses @nats-io/nkeys (the key
// encoding with its CRC is theirs); the claim shapes here are only the fields the server acts on.
import nkeys from '@nats-io/nkeys';

export type JwtErrorCode = 'malformed' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'wrong_type' | 'bad_issuer';

export class JwtError extends Error {
  constructor(
    readonly code: JwtErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface JwtClaims<T> {
  jti?: string;
  iat?: number;
  iss: string;
  sub: string;
  aud?: string;
  name?: string;
  /** seconds since the epoch; absent or 0: never */
  exp?: number;
  nbf?: number;
  nats: T & { type?: string; version?: number; issuer_account?: string };
}

export interface Permission {
  allow?: string[] | null;
  deny?: string[] | null;
}
export interface JwtPermissions {
  pub?: Permission;
  sub?: Permission;
  resp?: { max?: number; ttl?: number } | null;
}

export interface UserClaims extends JwtPermissions {
  src?: string[] | null;
  times?: Array<{ start?: string; end?: string }> | null;
  times_location?: string;
  locale?: string;
  subs?: number;
  data?: number;
  payload?: number;
  bearer_token?: boolean;
  allowed_connection_types?: string[] | null;
  issuer_account?: string;
}

export interface SigningKeyScope {
  kind: 'user_scope';
  key: string;
  role?: string;
  template?: UserClaims;
}

export interface JwtExport {
  name?: string;
  subject: string;
  type: 'stream' | 'service';
  token_req?: boolean;
  revocations?: Record<string, number>;
  response_type?: 'Singleton' | 'Stream' | 'Chunked';
  response_threshold?: number;
}
export interface JwtImport {
  name?: string;
  subject: string;
  account: string;
  token?: string;
  to?: string;
  local_subject?: string;
  type: 'stream' | 'service';
}

export interface AccountClaims {
  imports?: JwtImport[] | null;
  exports?: JwtExport[] | null;
  limits?: {
    subs?: number;
    data?: number;
    payload?: number;
    imports?: number;
    exports?: number;
    wildcards?: boolean;
    conn?: number;
    leaf?: number;
    disallow_bearer?: boolean;
    mem_storage?: number;
    disk_storage?: number;
    streams?: number;
    consumer?: number;
    max_ack_pending?: number;
    mem_max_stream_bytes?: number;
    disk_max_stream_bytes?: number;
    max_bytes_required?: boolean;
    tiered_limits?: Record<string, Record<string, number | boolean>>;
  };
  signing_keys?: Array<string | SigningKeyScope> | null;
  revocations?: Record<string, number> | null;
  default_permissions?: JwtPermissions;
  mappings?: Record<string, Array<{ subject: string; weight?: number; cluster?: string }>> | null;
  disallow_bearer?: boolean;
  /** auth callout for this account's users (nats-server 2.10's ExternalAuthorization) */
  authorization?: { auth_users?: string[] | null; allowed_accounts?: string[] | null; xkey?: string };
}

export interface OperatorClaims {
  signing_keys?: string[] | null;
  system_account?: string;
  account_server_url?: string;
}

function b64json(part: string): unknown {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(part)) throw new JwtError('malformed', 'invalid base64 in JWT');
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
}

/** The claims of `token`, signature checked; `nowSec` for the validity window. Throws JwtError. */
export function verifyJwt<T>(token: string, type: 'operator' | 'account' | 'user' | 'activation' | 'authorization_response' | 'generic', nowSec = Date.now() / 1000): JwtClaims<T> {
  const parts = token.trim().split('.');
  if (parts.length !== 3) throw new JwtError('malformed', 'expected 3 chunks');
  let header: { typ?: string; alg?: string };
  let claims: JwtClaims<T>;
  try {
    header = b64json(parts[0]!) as typeof header;
    claims = b64json(parts[1]!) as JwtClaims<T>;
  } catch (err) {
    if (err instanceof JwtError) throw err;
    throw new JwtError('malformed', 'invalid JSON in JWT');
  }
  if (header === null || typeof header !== 'object' || (header.typ ?? '').toUpperCase() !== 'JWT' || (header.alg !== 'ed25519-nkey' && header.alg !== 'ed25519')) {
    throw new JwtError('malformed', 'not a NATS JWT');
  }
  if (claims === null || typeof claims !== 'object' || typeof claims.iss !== 'string' || typeof claims.sub !== 'string' || claims.nats === null || typeof claims.nats !== 'object') {
    throw new JwtError('malformed', 'JWT claims lack iss, sub or nats');
  }
  let ok = false;
  try {
    ok = nkeys.fromPublic(claims.iss).verify(Buffer.from(`${parts[0]}.${parts[1]}`), Buffer.from(parts[2]!, 'base64url'));
  } catch {
    ok = false;
  }
  if (!ok) throw new JwtError('bad_signature', 'JWT signature does not verify');
  const kind = claims.nats.type ?? '';
  // a generic JWT (a delete request) may carry any type, as nats-server's DecodeGeneric takes it
  if (type !== 'generic' && kind !== type) throw new JwtError('wrong_type', `expected a ${type} JWT, got ${kind || 'none'}`);
  if (claims.exp !== undefined && claims.exp > 0 && claims.exp < nowSec) throw new JwtError('expired', 'JWT expired');
  if (claims.nbf !== undefined && claims.nbf > 0 && claims.nbf > nowSec) throw new JwtError('not_yet_valid', 'JWT not yet valid');
  return claims;
}

/** The claims without checking anything (for the subject of a JWT the caller then verifies). */
export function peekJwt<T>(token: string): JwtClaims<T> | null {
  const parts = token.trim().split('.');
  if (parts.length !== 3) return null;
  try {
    return b64json(parts[1]!) as JwtClaims<T>;
  } catch {
    return null;
  }
}

export function prefixOf(key: string): string {
  return key.charAt(0);
}

/** A NATS JWT of `claims` signed by `signer` (a seed-holding nkeys KeyPair): the server's auth callout request. */
export function signJwt(claims: object, signer: { sign(data: Uint8Array): Uint8Array }): string {
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' })).toString('base64url');
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = Buffer.from(signer.sign(Buffer.from(`${header}.${body}`))).toString('base64url');
  return `${header}.${body}.${sig}`;
}
