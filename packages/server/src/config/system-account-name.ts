// Which account is the system account (nats-server's configureAccounts / SetDefaultSystemAccount): the one
// `system_account` names, else an account called `$SYS` when configured, else a `$SYS` of its own; none with
// `no_system_account` and no name given.
import type { ServerOptions } from './options.js';
import { DEFAULT_SYSTEM_ACCOUNT } from '../system-account/subjects.js';

export function systemAccountName(o: ServerOptions): string | null {
  if (o.systemAccount !== undefined) return o.systemAccount;
  return o.noSystemAccount === true ? null : DEFAULT_SYSTEM_ACCOUNT;
}

/** nats-server refuses to start when `system_account` names no configured account. */
export function systemAccountProblem(o: ServerOptions): string | undefined {
  const name = o.systemAccount;
  if (name === undefined || name === DEFAULT_SYSTEM_ACCOUNT) return undefined;
  if ((o.accounts ?? []).some((a) => a.name === name)) return undefined;
  return 'error resolving system account: account missing';
}
