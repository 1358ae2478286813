// Which account is the system account (nats-server's configureAccounts / SetDefaultSystemAccount): the one
// `system_account` names, else an account called `$SYS` when configured, else a `$SYS` of its own; none with
// `no_system_account` and no name given.
import type { ServerOptions } from './options.js';
import { DEFAULT_SYSTEM_ACCOUNT } from '../system-account/subjects.js';

export function systemAccountName(o: ServerOptions): string | null {
  if (o.systemAccount !== undefined) return o.systemAccount;
  return o.noSystemAccount === true ? null : DEFAULT_SYSTEM_ACCOUNT;
}

/**
 * nats-server refuses to start when `system_account` names no configured account, and when the system
 * account has JetStream while the server runs it.
 */
export function systemAccountProblem(o: ServerOptions): string | undefined {
  const system = systemAccountName(o);
  if (o.jetstream.enabled && (o.accounts ?? []).some((a) => a.name === system && a.jetstream !== undefined)) {
    return 'Not allowed to enable JetStream on the system account';
  }
  const name = o.systemAccount;
  if (name === undefined || name === DEFAULT_SYSTEM_ACCOUNT) return undefined;
  if ((o.accounts ?? []).some((a) => a.name === name)) return undefined;
  return 'error resolving system account: account missing';
}
