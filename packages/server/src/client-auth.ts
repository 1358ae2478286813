// Checks CONNECT credentials against `authorization { user/password | token | users [] }` and the users of
// `accounts {}` (plain or bcrypt passwords and tokens, nkeys signing the INFO nonce), or, with
// `tls { verify_and_map }`, maps the client certificate to a user; `no_auth_user` stands in for a client
// that gives no credentials. A user's permissions are compiled once here and shared by its connections.
import { timingSafeEqual } from 'node:crypto';
import type { AccountOptions, AuthorizationOptions, TlsOptions, UserEntry } from './config/options.js';
import { BcryptVerifier, isBcryptHash } from './security/bcrypt-verifier.js';
import { verifiesNonce } from './security/nkey-signature.js';
import { UserPermissions } from './security/user-permissions.js';
import type { ConnectionKind, OperatorAuth } from './operator/operator-auth.js';
import type { AuthCallout } from './operator/auth-callout.js';

export interface ConnectCredentials {
  user?: unknown;
  pass?: unknown;
  auth_token?: unknown;
  nkey?: unknown;
  sig?: unknown;
  jwt?: unknown;
}

/**
 * Who a connection authenticated as: '' for token or no auth; permissions null when unrestricted; the
 * account whose subject space it uses (absent: the global account).
 */
export interface AuthResult {
  user: string;
  permissions: UserPermissions | null;
  account?: string;
  /** operator mode: when the user's JWT (or its account's) expires; the connection is closed then */
  expiresAtMs?: number;
  /** the account's JWT is the one that expires then */
  accountExpires?: boolean;
  /** operator mode: the user JWT's own limits (-1: none), applied under the account's */
  userLimits?: { maxSubscriptions: number; maxPayloadBytes: number };
}

interface UserRecord {
  password: string;
  permissions: UserPermissions | null;
  /** undefined: the global account */
  account: string | undefined;
}

const NO_AUTH: AuthResult = { user: '', permissions: null };

function resultOf(user: string, record: UserRecord): AuthResult {
  return record.account === undefined ? { user, permissions: record.permissions } : { user, permissions: record.permissions, account: record.account };
}

/** Accounts and no_auth_user, beside `authorization {}`. */
export interface AccountUsers {
  accounts?: readonly AccountOptions[];
  noAuthUser?: string;
  /** operator mode: users come from JWTs (operator/operator-auth.ts), none from the config */
  operator?: OperatorAuth;
  /** `authorization { auth_callout }`: users other than its auth_users are authorized by the service */
  callout?: AuthCallout;
  /** operator mode: the callout of an account whose JWT asks for one, for a user not among its auth_users */
  accountCallout?: (account: string, user: string) => AuthCallout | undefined;
}

export class ClientAuth {
  private readonly users = new Map<string, UserRecord>();
  /** nkey users by public key */
  private readonly nkeys = new Map<string, UserRecord>();
  private readonly noAuthUser: string | undefined;
  private readonly token: string | undefined;
  private readonly bcrypt = new BcryptVerifier();
  readonly required: boolean;
  readonly timeoutMs: number;
  /** tls verify_and_map: the certificate names the user, no password is asked */
  readonly mapsCertificates: boolean;
  /** nkey users are configured: INFO carries a nonce for them to sign */
  readonly noncesRequired: boolean;
  readonly operator: OperatorAuth | undefined;
  readonly callout: AuthCallout | undefined;
  private readonly accountCallout: AccountUsers['accountCallout'];

  constructor(options: AuthorizationOptions | undefined, tls?: TlsOptions, accountUsers: AccountUsers = {}) {
    if (options?.user !== undefined) {
      this.users.set(options.user, { password: options.password ?? '', permissions: null, account: undefined });
    }
    const defaults = options?.defaultPermissions;
    for (const u of options?.users ?? []) this.addUser(u, u.permissions ?? defaults, undefined);
    // An account's default_permissions were applied to its users when the config was read.
    for (const a of accountUsers.accounts ?? []) for (const u of a.users) this.addUser(u, u.permissions, a.name);
    this.noAuthUser = accountUsers.noAuthUser;
    this.operator = accountUsers.operator;
    this.callout = accountUsers.callout;
    this.accountCallout = accountUsers.accountCallout;
    this.token = options?.token;
    this.mapsCertificates = tls?.verifyAndMap === true && this.users.size > 0;
    this.required = this.users.size > 0 || this.nkeys.size > 0 || this.token !== undefined || this.operator !== undefined || this.callout !== undefined;
    this.noncesRequired = this.nkeys.size > 0 || this.operator !== undefined;
    this.timeoutMs = Math.round((options?.timeoutSec ?? 2) * 1000);
    const secrets = [...[...this.users.values()].map((u) => u.password), this.token ?? ''];
    if (secrets.some(isBcryptHash)) this.bcrypt.warm();
  }

  /**
   * The authenticated identity, or null when refused. A promise only when a bcrypt hash must be checked
   * (off the event loop); everything else answers synchronously. `source` (the client's address) keeps a
   * flood of bcrypt checks from one address from starving the others.
   */
  check(
    creds: ConnectCredentials,
    certIdentities: readonly string[] | null = null,
    source = '',
    nonce: string | null = null,
    kind: ConnectionKind = 'STANDARD',
    cid = 0,
  ): AuthResult | null | Promise<AuthResult | null> {
    if (!this.required) return NO_AUTH;
    if (this.operator !== undefined) return this.checkJwt(creds, source, nonce, kind, cid);
    if (this.callout !== undefined) return this.checkWithCallout(this.callout, creds, certIdentities, source, nonce, kind, cid);
    return this.checkConfigured(creds, certIdentities, source, nonce);
  }

  /** The service's own users (auth_users) authenticate from the config; every other client is sent to the callout. */
  private async checkWithCallout(
    callout: AuthCallout,
    creds: ConnectCredentials,
    certIdentities: readonly string[] | null,
    source: string,
    nonce: string | null,
    kind: ConnectionKind,
    cid: number,
  ): Promise<AuthResult | null> {
    const local = await this.checkConfigured(creds, certIdentities, source, nonce);
    if (local !== null && callout.bypasses(local.user)) return local;
    return this.viaCallout(callout, creds, source, nonce, kind, cid);
  }

  private async viaCallout(callout: AuthCallout, creds: ConnectCredentials, source: string, nonce: string | null, kind: ConnectionKind, cid: number): Promise<AuthResult | null> {
    const r = await callout.authorize(creds as Record<string, unknown>, { cid, ip: source, nonce, kind });
    if (r === null) return null;
    const result: AuthResult = { user: r.user, permissions: r.permissions };
    if (r.account !== undefined) result.account = r.account;
    if (r.expiresAtMs !== null) result.expiresAtMs = r.expiresAtMs;
    return result;
  }

  private checkConfigured(
    creds: ConnectCredentials,
    certIdentities: readonly string[] | null,
    source: string,
    nonce: string | null,
  ): AuthResult | null | Promise<AuthResult | null> {
    const nkey = nonEmpty(creds.nkey);
    if (this.noAuthUser !== undefined && nkey === undefined && nonEmpty(creds.user) === undefined && nonEmpty(creds.pass) === undefined && nonEmpty(creds.auth_token) === undefined) {
      // nats-server takes the no_auth_user as given: no password, no signature.
      const name = this.noAuthUser;
      const record = this.nkeys.get(name) ?? this.users.get(name);
      if (record !== undefined) return resultOf(name, record);
    }
    if (nkey !== undefined && this.nkeys.size > 0) {
      const record = this.nkeys.get(nkey);
      if (record === undefined || nonce === null || typeof creds.sig !== 'string' || creds.sig === '') return null;
      if (!verifiesNonce(nkey, nonce, creds.sig)) return null;
      return resultOf(nkey, record);
    }
    if (this.mapsCertificates) return this.mapCertificate(certIdentities);
    if (this.token !== undefined && typeof creds.auth_token === 'string') {
      return this.outcome(this.secretMatches(creds.auth_token, this.token, source), NO_AUTH);
    }
    if (typeof creds.user === 'string' && typeof creds.pass === 'string') {
      const record = this.users.get(creds.user);
      if (record === undefined) return null;
      const result = resultOf(creds.user, record);
      return this.outcome(this.secretMatches(creds.pass, record.password, source), result);
    }
    return null;
  }

  /**
   * Whether `name` (a user name or an nkey) is a user here, and its account (undefined: the global one) —
   * a config reload closes connections whose user is gone or moved (nats-server's clientHasMovedToDifferentAccount).
   */
  accountOfUser(name: string): { account: string | undefined } | undefined {
    const record = this.nkeys.get(name) ?? this.users.get(name);
    return record === undefined ? undefined : { account: record.account };
  }

  /**
   * After a reload: `user`'s identity here when its secret (password or hash, token, nkey) is the one `before`
   * had — the connection proved it then, so it is not checked again (a bcrypt check per client would take
   * seconds with many clients). Undefined when the secret changed: check the credentials again.
   */
  unchangedIdentity(user: string, before: ClientAuth): AuthResult | undefined {
    if (user === '') return this.token === before.token && this.required === before.required ? NO_AUTH : undefined;
    const nkey = this.nkeys.get(user);
    if (nkey !== undefined) return before.nkeys.has(user) ? resultOf(user, nkey) : undefined;
    const record = this.users.get(user);
    const old = before.users.get(user);
    return record !== undefined && old !== undefined && record.password === old.password ? resultOf(user, record) : undefined;
  }

  private checkJwt(creds: ConnectCredentials, source: string, nonce: string | null, kind: ConnectionKind, cid: number): AuthResult | null | Promise<AuthResult | null> {
    const u = this.operator!.authenticate(creds, nonce, source, kind);
    if (u === null) return null;
    const callout = this.accountCallout?.(u.account, u.user);
    if (callout !== undefined) return this.viaCallout(callout, creds, source, nonce, kind, cid);
    const result: AuthResult = { user: u.user, permissions: u.permissions, account: u.account, userLimits: { maxSubscriptions: u.maxSubscriptions, maxPayloadBytes: u.maxPayloadBytes } };
    if (u.expiresAtMs !== null) result.expiresAtMs = u.expiresAtMs;
    if (u.accountExpiresFirst) result.accountExpires = true;
    return result;
  }

  /** The JWT and callout authorities, for a ClientAuth built beside this one (WebSocket's, a reload's): they never get lost. */
  delegates(): Pick<AccountUsers, 'operator' | 'callout' | 'accountCallout'> {
    return {
      ...(this.operator !== undefined ? { operator: this.operator } : {}),
      ...(this.callout !== undefined ? { callout: this.callout } : {}),
      ...(this.accountCallout !== undefined ? { accountCallout: this.accountCallout } : {}),
    };
  }

  /** Stops the bcrypt worker. */
  close(): Promise<void> {
    return this.bcrypt.close();
  }

  private mapCertificate(identities: readonly string[] | null): AuthResult | null {
    for (const name of identities ?? []) {
      const record = this.users.get(name);
      if (record !== undefined) return resultOf(name, record);
    }
    return null;
  }

  private addUser(u: UserEntry, permissions: UserEntry['permissions'], account: string | undefined): void {
    const record: UserRecord = { password: u.password, permissions: permissions === undefined ? null : new UserPermissions(permissions), account };
    if (u.nkey !== undefined) this.nkeys.set(u.nkey, record);
    else this.users.set(u.user, record);
  }

  private secretMatches(given: string, expected: string, source: string): boolean | Promise<boolean> {
    if (!isBcryptHash(expected)) return sameText(given, expected);
    // The connection's auth timer started before its CONNECT, so this deadline is never early.
    const deadlineMs = this.timeoutMs > 0 ? Date.now() + this.timeoutMs : Number.POSITIVE_INFINITY;
    return this.bcrypt.verify(given, expected, { source, deadlineMs });
  }

  private outcome(matched: boolean | Promise<boolean>, result: AuthResult): AuthResult | null | Promise<AuthResult | null> {
    if (typeof matched === 'boolean') return matched ? result : null;
    return matched.then((ok) => (ok ? result : null));
  }
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
