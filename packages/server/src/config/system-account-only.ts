// A config whose only account is the system account (the Helm chart's: `accounts { SYS: { users } }` to give
// the operator's tools a login) leaves everything else to the global account, as nats-server does: clients
// that give no credentials land in $G through a generated no_auth_user (server.go's sysAccOnlyNoAuthUser),
// and JetStream is the global account's own (globalAccountOnly), not JetStream per account.
import { randomBytes } from 'node:crypto';
import type { ServerOptions } from './options.js';
import { DEFAULT_SYSTEM_ACCOUNT } from '../system-account/subjects.js';
import { systemAccountName } from './system-account-name.js';

/** Some configured account is neither the global nor the system account (nats-server's !globalAccountOnly). */
export function accountsBesidesSystem(o: ServerOptions): boolean {
  const system = systemAccountName(o);
  return (o.accounts ?? []).some((a) => a.name !== system);
}

/**
 * nats-server adds the no_auth_user only when the system account is named (system_account, or an account
 * called `$SYS`), it is the one configured account, and neither no_auth_user nor an authorization block is
 * given. Its name is `nats-` and random digits, so it cannot collide with a configured user.
 */
export function addSystemOnlyNoAuthUser(o: ServerOptions): void {
  const accounts = o.accounts ?? [];
  if (accounts.length !== 1 || o.noAuthUser !== undefined || o.authorization !== undefined) return;
  const named = o.systemAccount ?? (accounts[0]!.name === DEFAULT_SYSTEM_ACCOUNT ? DEFAULT_SYSTEM_ACCOUNT : undefined);
  if (named === undefined || accounts[0]!.name !== named) return;
  const digits = [...randomBytes(8)].map((b) => String(b % 10)).join('');
  const user = `nats-${digits}`;
  o.authorization = { users: [{ user, password: digits.slice(1) }] };
  o.noAuthUser = user;
}
