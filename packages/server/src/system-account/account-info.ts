// nats-server's AccountInfo (`$SYS.REQ.ACCOUNT.<acc>.INFO`, `/accountz?acc=`): the account's connections,
// subscriptions, exports and imports (the system account's own imports into every account included).
import type { Account } from '../accounts/account.js';
import type { AccountOptions } from '../config/options.js';
import type { FlotillaServer } from '../server.js';
import { connectionsOf, jetStreamEnabledFor, sublistStats } from './account-figures.js';
import { systemImportsOf, systemExports } from './system-imports.js';

/** jwt.ResponseType names, as nats-server's AccountInfo writes them. */
const RESPONSE_TYPE = { singleton: 'Singleton', stream: 'Stream', chunked: 'Chunked' } as const;

export function accountInfo(server: FlotillaServer, account: Account): Record<string, unknown> {
  const configured: AccountOptions | undefined = server.options.accounts?.find((a) => a.name === account.name);
  const isSystem = server.accounts.system === account;
  const exports: Array<Record<string, unknown>> = (configured?.exports ?? []).map((e) => ({
    subject: e.subject,
    type: e.kind,
    ...(e.kind === 'service' ? { response_type: RESPONSE_TYPE[e.responseType ?? 'singleton'] } : {}),
    ...(e.accounts !== undefined && e.accounts.length > 0 ? { approved_accounts: e.accounts } : {}),
  }));
  if (isSystem) exports.push(...systemExports());
  const imports: Array<Record<string, unknown>> = (configured?.imports ?? []).map((i) => {
    if (i.kind === 'stream') {
      const local = i.prefix !== undefined ? i.prefix + i.subject : (i.to ?? i.subject);
      return { subject: i.subject, account: i.account, local_subject: local, type: 'stream', invalid: false, share: false, tracking: false };
    }
    const local = i.to ?? i.subject;
    return { subject: i.subject, account: i.account, to: local, local_subject: local, type: 'service', invalid: false, share: false, tracking: false };
  });
  imports.push(...systemImportsOf(server, account));
  return {
    account_name: account.name,
    update_time: new Date(server.startMs).toISOString(),
    ...(isSystem ? { is_system: true } : {}),
    expired: false,
    complete: true,
    jetstream_enabled: jetStreamEnabledFor(server, account.name),
    leafnode_connections: 0,
    client_connections: connectionsOf(server, account.name).length,
    subscriptions: account.router.sublist.count,
    ...(exports.length > 0 ? { exports } : {}),
    ...(imports.length > 0 ? { imports } : {}),
    name_tag: account.name,
    sublist_stats: sublistStats([account.router]),
  };
}
