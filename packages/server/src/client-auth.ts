// Checks CONNECT credentials against `authorization { user/password | token | users [] }`.
import { timingSafeEqual } from 'node:crypto';
import type { AuthorizationOptions } from './config/options.js';

export interface ConnectCredentials {
  user?: unknown;
  pass?: unknown;
  auth_token?: unknown;
}

export class ClientAuth {
  private readonly users = new Map<string, string>();
  private readonly token: string | undefined;
  readonly required: boolean;
  readonly timeoutMs: number;

  constructor(options: AuthorizationOptions | undefined) {
    if (options?.user !== undefined) this.users.set(options.user, options.password ?? '');
    for (const u of options?.users ?? []) this.users.set(u.user, u.password);
    this.token = options?.token;
    this.required = this.users.size > 0 || this.token !== undefined;
    this.timeoutMs = Math.round((options?.timeoutSec ?? 2) * 1000);
  }

  /** Returns the authenticated user name ('' for token or no auth), or null when refused. */
  check(creds: ConnectCredentials): string | null {
    if (!this.required) return '';
    if (this.token !== undefined && typeof creds.auth_token === 'string' && sameText(creds.auth_token, this.token)) {
      return '';
    }
    if (typeof creds.user === 'string') {
      const expected = this.users.get(creds.user);
      if (expected !== undefined && typeof creds.pass === 'string' && sameText(creds.pass, expected)) {
        return creds.user;
      }
    }
    return null;
  }
}

function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
