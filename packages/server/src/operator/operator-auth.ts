// Operator mode's client authentication: CONNECT carries a user JWT and the signature of the INFO nonce by
// the user's key (a `.creds` file gives both). The user is valid when its account's key or one of the
// account's signing keys issued it, neither JWT has expired, the account has not revoked it, and the
// connection meets the user's limits (source CIDRs, times of day, connection types). A scoped signing key
// replaces the user's permissions with its template. nats-server's processClientOrLeafAuthentication.
import { BlockList, isIPv6 } from 'node:net';
import type { OperatorOptions, Permissions, SubjectPermission } from '../config/options.js';
import { UserPermissions } from '../security/user-permissions.js';
import { verifiesNonce } from '../security/nkey-signature.js';
import { accountIssuers, isRevoked } from './account-from-claims.js';
import { resolverOf, type AccountResolver } from './account-resolver.js';
import { OperatorTrust } from './operator-trust.js';
import { JwtError, verifyJwt, type AccountClaims, type JwtClaims, type JwtPermissions, type Permission, type SigningKeyScope, type UserClaims } from './nats-jwt.js';

/** What a verified user JWT grants; `expiresAtMs` is when the connection must end (the user's or its account's exp). */
export interface OperatorUser {
  user: string;
  account: string;
  permissions: UserPermissions | null;
  expiresAtMs: number | null;
  /** the account's exp comes first: nats-server's 'Account Authentication Expired' rather than the user's */
  accountExpiresFirst: boolean;
  /** the user's (or its scope's) subs and payload limits; -1 none, a missing one 0 (nats-server's applyAccountLimits) */
  maxSubscriptions: number;
  maxPayloadBytes: number;
}

export type ConnectionKind = 'STANDARD' | 'WEBSOCKET' | 'LEAFNODE' | 'MQTT';

export class OperatorAuth {
  readonly trust: OperatorTrust;
  readonly resolver: AccountResolver;
  /** verified claims of every account the resolver holds */
  readonly accounts = new Map<string, JwtClaims<AccountClaims>>();

  constructor(op: OperatorOptions, warn: (msg: string) => void = () => {}) {
    this.trust = OperatorTrust.of(op);
    this.resolver = resolverOf(op);
    for (const key of this.resolver.list()) {
      try {
        this.accounts.set(key, this.trust.verifyAccount(this.resolver.get(key)!, key));
      } catch (err) {
        warn(`account ${key} not loaded: ${(err as Error).message}`);
      }
    }
  }

  /**
   * The user CONNECT proves, or null when it is refused. `nonce`: the one this server sent in
   * INFO; `ip`: the client's address.
   */
  authenticate(creds: { jwt?: unknown; sig?: unknown }, nonce: string | null, ip: string, kind: ConnectionKind, nowMs = Date.now()): OperatorUser | null {
    if (typeof creds.jwt !== 'string' || creds.jwt === '') return null;
    let user: JwtClaims<UserClaims>;
    try {
      user = verifyJwt<UserClaims>(creds.jwt, 'user', nowMs / 1000);
    } catch (err) {
      if (err instanceof JwtError) return null;
      throw err;
    }
    const accountKey = user.nats.issuer_account || user.iss;
    const account = this.accounts.get(accountKey);
    if (account === undefined) return null;
    if (account.exp !== undefined && account.exp > 0 && account.exp * 1000 < nowMs) return null;
    if (!accountIssuers(account).has(user.iss)) return null;
    if (user.nats.issuer_account !== undefined && user.nats.issuer_account !== '' && user.iss === accountKey) return null;
    if (isRevoked(account.nats.revocations, user.sub, user.iat ?? 0)) return null;
    const claims = effectiveClaims(user, account);
    if (claims.bearer_token === true) {
      if (account.nats.disallow_bearer === true || account.nats.limits?.disallow_bearer === true) return null;
    } else if (nonce === null || typeof creds.sig !== 'string' || !verifiesNonce(user.sub, nonce, creds.sig)) return null;
    if (!claimsAdmit(claims, ip, kind, nowMs)) return null;
    const userExpMs = typeof user.exp === 'number' && user.exp > 0 ? user.exp * 1000 : Infinity;
    const accountExpMs = typeof account.exp === 'number' && account.exp > 0 ? account.exp * 1000 : Infinity;
    const expiresAtMs = Math.min(userExpMs, accountExpMs);
    const permissions = permissionsOf(claims) ?? permissionsOf(account.nats.default_permissions ?? {});
    return {
      user: user.sub,
      account: accountKey,
      permissions: permissions === null ? null : new UserPermissions(permissions),
      expiresAtMs: Number.isFinite(expiresAtMs) ? expiresAtMs : null,
      accountExpiresFirst: accountExpMs < userExpMs,
      maxSubscriptions: typeof claims.subs === 'number' ? claims.subs : 0,
      maxPayloadBytes: typeof claims.payload === 'number' ? claims.payload : 0,
    };
  }
}

/** The user's claims, or its scoped signing key's template filled in for it. */
export function effectiveClaims(user: JwtClaims<UserClaims>, account: JwtClaims<AccountClaims>): UserClaims {
  const scope = (account.nats.signing_keys ?? []).find((k): k is SigningKeyScope => typeof k !== 'string' && k.key === user.iss);
  return scope !== undefined ? expandTemplate(scope.template ?? {}, user, account) : user.nats;
}

/** The user claims' src CIDRs, connection types and times of day admit this connection now. */
export function claimsAdmit(claims: UserClaims, ip: string, kind: ConnectionKind, nowMs: number): boolean {
  return sourceAllowed(claims.src, ip) && connectionTypeAllowed(claims.allowed_connection_types, kind) && withinTimes(claims.times, claims.times_location, nowMs);
}

function subjectPermission(p: Permission | undefined): SubjectPermission | undefined {
  if (p === undefined) return undefined;
  const out: SubjectPermission = {};
  if (p.allow !== undefined && p.allow !== null && p.allow.length > 0) out.allow = [...p.allow];
  if (p.deny !== undefined && p.deny !== null && p.deny.length > 0) out.deny = [...p.deny];
  return out.allow === undefined && out.deny === undefined ? undefined : out;
}

/** The claims' permissions in config form, or null when they set none. */
export function permissionsOf(p: JwtPermissions): Permissions | null {
  const out: Permissions = {};
  const pub = subjectPermission(p.pub);
  const sub = subjectPermission(p.sub);
  if (pub !== undefined) out.publish = pub;
  if (sub !== undefined) out.subscribe = sub;
  if (p.resp !== undefined && p.resp !== null) {
    // JWT resp: max messages (-1 or 0: any), ttl in nanoseconds
    out.allowResponses = { maxMsgs: Math.max(0, p.resp.max ?? 1), expiresMs: Math.max(0, Math.round((p.resp.ttl ?? 0) / 1_000_000)) };
    // allow_responses lets the user publish replies even under a pub allow list
    out.publish ??= {};
  }
  return out.publish === undefined && out.subscribe === undefined && out.allowResponses === undefined ? null : out;
}

const TEMPLATE = /\{\{\s*([a-z-]+)\(\s*([^)]*?)\s*\)\s*\}\}/g;

/** A scoped signing key's template with {{name()}}, {{subject()}}, {{account-name()}}, {{account-subject()}}, {{tag(x)}}, {{account-tag(x)}} filled in. */
function expandTemplate(template: UserClaims, user: JwtClaims<UserClaims>, account: JwtClaims<AccountClaims>): UserClaims {
  const userTags = ((user.nats as { tags?: string[] }).tags ?? []).map((t) => t.toLowerCase());
  const accountTags = ((account.nats as { tags?: string[] }).tags ?? []).map((t) => t.toLowerCase());
  const tagValue = (tags: string[], name: string): string | undefined => tags.find((t) => t.startsWith(`${name.toLowerCase()}:`))?.slice(name.length + 1);
  const fill = (s: string): string | null => {
    let failed = false;
    const out = s.replace(TEMPLATE, (_all, fn: string, arg: string) => {
      const a = arg.replace(/^["']|["']$/g, '');
      let v: string | undefined;
      if (fn === 'name') v = user.name;
      else if (fn === 'subject') v = user.sub;
      else if (fn === 'account-name') v = account.name;
      else if (fn === 'account-subject') v = account.sub;
      else if (fn === 'tag') v = tagValue(userTags, a);
      else if (fn === 'account-tag') v = tagValue(accountTags, a);
      if (v === undefined || v === '') failed = true;
      return v ?? '';
    });
    return failed ? null : out;
  };
  const list = (l: string[] | null | undefined): string[] | undefined => l?.map(fill).filter((s): s is string => s !== null);
  const perm = (p: Permission | undefined): Permission | undefined => {
    if (p === undefined) return undefined;
    const out: Permission = {};
    const allow = list(p.allow);
    const deny = list(p.deny);
    if (allow !== undefined) out.allow = allow;
    if (deny !== undefined) out.deny = deny;
    return out;
  };
  const out: UserClaims = { ...template };
  const pub = perm(template.pub);
  const sub = perm(template.sub);
  if (pub !== undefined) out.pub = pub;
  if (sub !== undefined) out.sub = sub;
  return out;
}

function sourceAllowed(src: string[] | null | undefined, ip: string): boolean {
  const cidrs = (src ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (cidrs.length === 0) return true;
  const list = new BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    const type = isIPv6(addr!) ? 'ipv6' : 'ipv4';
    try {
      if (bits === undefined) list.addAddress(addr!, type);
      else list.addSubnet(addr!, Number(bits), type);
    } catch {
      // an unparsable entry grants nothing
    }
  }
  const plain = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return list.check(plain, isIPv6(plain) ? 'ipv6' : 'ipv4');
}

function connectionTypeAllowed(types: string[] | null | undefined, kind: ConnectionKind): boolean {
  if (types === undefined || types === null || types.length === 0) return true;
  return types.some((t) => t.toUpperCase() === kind);
}

/** Seconds into the day of `nowMs` in the IANA zone `location` (the server's local time when absent). */
function secondsOfDay(nowMs: number, location: string | undefined): number {
  const d = new Date(nowMs);
  if (location === undefined || location === '') return d.getHours() * 3600 + d.getMinutes() * 60 + d.getSeconds();
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: location, hour12: false, hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(d);
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0) % 24;
  return get('hour') * 3600 + Number(parts.find((p) => p.type === 'minute')?.value ?? 0) * 60 + Number(parts.find((p) => p.type === 'second')?.value ?? 0);
}

function parseClock(s: string | undefined): number | null {
  const m = /^(\d{1,2}):(\d{2}):(\d{2})$/.exec(s ?? '');
  return m === null ? null : Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}

function withinTimes(times: UserClaims['times'], location: string | undefined, nowMs: number): boolean {
  if (times === undefined || times === null || times.length === 0) return true;
  let now: number;
  try {
    now = secondsOfDay(nowMs, location);
  } catch {
    return false;
  }
  return times.some((t) => {
    const start = parseClock(t.start);
    const end = parseClock(t.end);
    if (start === null || end === null) return false;
    return start <= end ? now >= start && now <= end : now >= start || now <= end;
  });
}
