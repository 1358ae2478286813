// Checks CONNECT credentials against `authorization { user/password | token | users [] }` (plain or bcrypt
// passwords and tokens), or, with `tls { verify_and_map }`, maps the client certificate to a user. A user's
// permissions are compiled once here and shared by its connections.
import { timingSafeEqual } from 'node:crypto';
import type { AuthorizationOptions, TlsOptions } from './config/options.js';
import { BcryptVerifier, isBcryptHash } from './security/bcrypt-verifier.js';
import { UserPermissions } from './security/user-permissions.js';

export interface ConnectCredentials {
  user?: unknown;
  pass?: unknown;
  auth_token?: unknown;
}

/** Who a connection authenticated as: '' for token or no auth; permissions null when unrestricted. */
export interface AuthResult {
  user: string;
  permissions: UserPermissions | null;
}

interface UserRecord {
  password: string;
  permissions: UserPermissions | null;
}

const NO_AUTH: AuthResult = { user: '', permissions: null };

export class ClientAuth {
  private readonly users = new Map<string, UserRecord>();
  private readonly token: string | undefined;
  private readonly bcrypt = new BcryptVerifier();
  readonly required: boolean;
  readonly timeoutMs: number;
  /** tls verify_and_map: the certificate names the user, no password is asked */
  readonly mapsCertificates: boolean;

  constructor(options: AuthorizationOptions | undefined, tls?: TlsOptions) {
    if (options?.user !== undefined) this.users.set(options.user, { password: options.password ?? '', permissions: null });
    const defaults = options?.defaultPermissions;
    for (const u of options?.users ?? []) {
      const p = u.permissions ?? defaults;
      this.users.set(u.user, { password: u.password, permissions: p === undefined ? null : new UserPermissions(p) });
    }
    this.token = options?.token;
    this.mapsCertificates = tls?.verifyAndMap === true && this.users.size > 0;
    this.required = this.users.size > 0 || this.token !== undefined;
    this.timeoutMs = Math.round((options?.timeoutSec ?? 2) * 1000);
    const secrets = [...[...this.users.values()].map((u) => u.password), this.token ?? ''];
    if (secrets.some(isBcryptHash)) this.bcrypt.warm();
  }

  /**
   * The authenticated identity, or null when refused. A promise only when a bcrypt hash must be checked
   * (off the event loop); everything else answers synchronously. `source` (the client's address) keeps a
   * flood of bcrypt checks from one address from starving the others.
   */
  check(creds: ConnectCredentials, certIdentities: readonly string[] | null = null, source = ''): AuthResult | null | Promise<AuthResult | null> {
    if (!this.required) return NO_AUTH;
    if (this.mapsCertificates) return this.mapCertificate(certIdentities);
    if (this.token !== undefined && typeof creds.auth_token === 'string') {
      return this.outcome(this.secretMatches(creds.auth_token, this.token, source), NO_AUTH);
    }
    if (typeof creds.user === 'string' && typeof creds.pass === 'string') {
      const record = this.users.get(creds.user);
      if (record === undefined) return null;
      const result: AuthResult = { user: creds.user, permissions: record.permissions };
      return this.outcome(this.secretMatches(creds.pass, record.password, source), result);
    }
    return null;
  }

  /** Stops the bcrypt worker. */
  close(): Promise<void> {
    return this.bcrypt.close();
  }

  private mapCertificate(identities: readonly string[] | null): AuthResult | null {
    for (const name of identities ?? []) {
      const record = this.users.get(name);
      if (record !== undefined) return { user: name, permissions: record.permissions };
    }
    return null;
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

function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
