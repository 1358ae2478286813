// `authorization { auth_callout { issuer, auth_users, account, xkey, allowed_accounts } }` (nats-server's
// parseAuthCallout): who signs the callout service's answers, which users bypass it (the service's own),
// the account it runs in, and the curve key to encrypt requests to.
import { isValidPublicKey } from '../security/nkey-signature.js';
import type { Parsed } from './operator-keys.js';

export interface AuthCalloutOptions {
  /** public account key whose private key signs the user JWTs the service returns */
  issuer: string;
  authUsers: string[];
  /** where the service connects and the requests are published; absent: the global account */
  account?: string;
  /** the service's public curve key: requests are sealed to it */
  xkey?: string;
  allowedAccounts?: string[];
}


function strings(v: unknown): string[] | undefined {
  const list = Array.isArray(v) ? v : [v];
  return list.every((s) => typeof s === 'string') ? (list as string[]) : undefined;
}

export function parseAuthCallout(value: unknown): Parsed<AuthCalloutOptions> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: `Expected authorization callout to be a map/struct, got ${JSON.stringify(value)}` };
  let issuer = '';
  let authUsers: string[] = [];
  const out: Partial<AuthCalloutOptions> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    switch (k.toLowerCase()) {
      case 'issuer':
        if (typeof v !== 'string' || !isValidPublicKey(v, 'A')) return { error: `Expected callout user to be a valid public account nkey, got ${JSON.stringify(v)}` };
        issuer = v;
        break;
      case 'account':
      case 'acc':
        if (typeof v !== 'string') return { error: 'auth_callout account must be a string' };
        out.account = v;
        break;
      case 'auth_users':
      case 'users': {
        const list = strings(v);
        if (list === undefined || !Array.isArray(v)) return { error: 'Expected auth_users field to be an array' };
        authUsers = list;
        break;
      }
      case 'xkey':
      case 'key':
        if (typeof v !== 'string' || !isValidPublicKey(v, 'X')) return { error: `Expected callout xkey to be a valid public xkey, got ${JSON.stringify(v)}` };
        out.xkey = v;
        break;
      case 'allowed_accounts': {
        const list = strings(v);
        if (list === undefined || !Array.isArray(v)) return { error: 'Expected allowed accounts field to be an array' };
        out.allowedAccounts = list;
        break;
      }
      default:
        return { error: `Unknown field "${k}" parsing authorization callout` };
    }
  }
  if (issuer === '') return { error: 'Authorization callouts require an issuer to be specified' };
  if (authUsers.length === 0) return { error: 'Authorization callouts require authorized users to be specified' };
  return { value: { ...out, issuer, authUsers } };
}
