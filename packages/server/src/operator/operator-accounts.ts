// At load: operator mode's accounts become `options.accounts` (name = account key), so the server builds
// them, their JetStreams and their imports exactly as config-mode accounts. The system account is
// `system_account` or the operator's; it exists even without a JWT of its own.
import type { ServerOptions } from '../config/options.js';
import { accountOptionsOf } from './account-from-claims.js';
import { OperatorAuth } from './operator-auth.js';

/** A message when the operator config is unusable; otherwise fills `o.accounts` and `o.systemAccount`. */
export function applyOperatorMode(o: ServerOptions, warnings: string[]): string | undefined {
  const op = o.operator;
  if (op === undefined) return undefined;
  if (op.operatorJwts.length === 0 && op.trustedKeys.length === 0) return 'resolver and resolver_preload require an operator (or trusted keys)';
  if (o.accounts !== undefined && o.accounts.length > 0) return 'operator mode does not allow accounts {} in the config';
  if (o.authorization !== undefined) return 'operator mode does not allow an authorization block (users come from JWTs)';
  if (op.resolver === undefined) return 'operator mode requires a resolver (MEMORY or { type: full })';
  let auth: OperatorAuth;
  try {
    auth = new OperatorAuth(op, (m) => warnings.push(m));
  } catch (err) {
    return `error parsing operator JWT: ${(err as Error).message}`;
  }
  const accounts = accountOptionsOf(auth.accounts, (m) => warnings.push(m));
  const system = o.systemAccount ?? auth.trust.systemAccount;
  if (system !== undefined) {
    o.systemAccount = system;
    const sys = accounts.find((a) => a.name === system);
    if (sys === undefined) accounts.push({ name: system, nkey: system, users: [], exports: [], imports: [] });
    else delete sys.jetstream;
  }
  o.accounts = accounts;
  return undefined;
}
