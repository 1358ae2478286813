// /accountz and /accstatz as nats-server serves them (and `$SYS.REQ.SERVER.PING.ACCOUNTZ`,
// `$SYS.REQ.ACCOUNT.<acc>.INFO` / `.STATZ`): the accounts of this server, one account's details, and each
// account's connection and traffic figures.
import type { FlotillaServer } from './server.js';
import { accountInfo } from './system-account/account-info.js';
import { accountStat, connectionsOf } from './system-account/account-figures.js';

/** An account that is not there (400 over HTTP, 500 over NATS, as nats-server). */
export class AccountNotFoundError extends Error {
  readonly code = 'ACCOUNT_NOT_FOUND';
}

export function accountz(server: FlotillaServer, accountName: string | undefined): Record<string, unknown> {
  const system = server.accounts.system;
  const head = { server_id: server.serverId, now: new Date().toISOString(), ...(system !== null ? { system_account: system.name } : {}) };
  if (!accountName) return { ...head, accounts: [...server.accounts.all()].map((a) => a.name).sort() };
  return { ...head, account_detail: accountDetail(server, accountName) };
}

export function accountDetail(server: FlotillaServer, accountName: string): Record<string, unknown> {
  const account = server.accounts.find(accountName);
  if (account === undefined) throw new AccountNotFoundError(`Account ${accountName} does not exist`);
  return accountInfo(server, account);
}

/**
 * nats-server's AccountStatz: the named accounts (all when none are named) that have connections here,
 * or every one of them with `includeUnused`.
 */
export function accountStatz(server: FlotillaServer, names: readonly string[], includeUnused: boolean): Record<string, unknown> {
  const accounts = names.length === 0 ? [...server.accounts.all()] : names.flatMap((n) => server.accounts.find(n) ?? []);
  const stats = accounts.filter((a) => includeUnused || connectionsOf(server, a.name).length > 0).map((a) => accountStat(server, a));
  return { server_id: server.serverId, now: new Date().toISOString(), account_statz: stats };
}
