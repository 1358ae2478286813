// The operators this server trusts (`operator` in the config): an account JWT is valid when an operator
// or one of its signing keys issued it. nats-server's validateTrustedOperators and the account checks of
// its AccountResolver.
import type { OperatorOptions } from '../config/options.js';
import { JwtError, verifyJwt, type AccountClaims, type JwtClaims, type OperatorClaims } from './nats-jwt.js';

export class OperatorTrust {
  /** operator identity keys and their signing keys */
  private readonly trusted = new Set<string>();
  /** the system account the (first) operator names, if any */
  readonly systemAccount: string | undefined;

  constructor(jwts: readonly string[], trustedKeys: readonly string[] = []) {
    let system: string | undefined;
    for (const k of trustedKeys) this.trusted.add(k);
    for (const token of jwts) {
      const claims = verifyJwt<OperatorClaims>(token, 'operator');
      if (claims.iss !== claims.sub) throw new JwtError('bad_issuer', 'operator JWT must be self-signed');
      this.trusted.add(claims.sub);
      for (const k of claims.nats.signing_keys ?? []) if (typeof k === 'string') this.trusted.add(k);
      system ??= claims.nats.system_account || undefined;
    }
    this.systemAccount = system;
  }

  static of(op: OperatorOptions): OperatorTrust {
    return new OperatorTrust(op.operatorJwts, op.trustedKeys);
  }

  /** An operator's key or one of its signing keys. */
  trusts(key: string): boolean {
    return this.trusted.has(key);
  }

  /** The claims of an account JWT an operator issued; `expected`: the account key it must be for. Throws JwtError. */
  verifyAccount(token: string, expected?: string, nowSec?: number): JwtClaims<AccountClaims> {
    const claims = verifyJwt<AccountClaims>(token, 'account', nowSec);
    if (!this.trusted.has(claims.iss)) throw new JwtError('bad_issuer', 'account JWT not issued by a trusted operator');
    if (expected !== undefined && claims.sub !== expected) throw new JwtError('bad_issuer', `account JWT is for ${claims.sub}, not ${expected}`);
    return claims;
  }
}
