// The services nats-server's system account exports and imports into every other account
// (registerSystemImports): a client of any account may ask for its own account's connections
// (`$SYS.REQ.SERVER.PING.CONNZ`, `$SYS.REQ.ACCOUNT.PING.CONNZ`), its statistics
// (`$SYS.REQ.ACCOUNT.PING.STATZ`) and who it is (`$SYS.REQ.USER.INFO`), and nothing else of `$SYS`.
import type { Account } from '../accounts/account.js';
import type { FlotillaServer } from '../server.js';
import { accountDirect, accountPing, serverPing, USER_INFO, userDirect } from './subjects.js';

export type ImportedEndpoint = 'CONNZ' | 'STATZ' | 'USER.INFO';

export interface SystemImport {
  /** what the account's clients request */
  local: string;
  /** the system account's subject it stands for, for `account` */
  remote: (account: string) => string;
  endpoint: ImportedEndpoint;
  /** the requester's identity travels with the request (nats-server's share) */
  share: boolean;
}

export const SYSTEM_IMPORTS: readonly SystemImport[] = [
  { local: accountPing('CONNZ'), remote: (a) => accountDirect(a, 'CONNZ'), endpoint: 'CONNZ', share: false },
  { local: serverPing('CONNZ'), remote: (a) => accountDirect(a, 'CONNZ'), endpoint: 'CONNZ', share: false },
  { local: accountPing('STATZ'), remote: (a) => accountDirect(a, 'STATZ'), endpoint: 'STATZ', share: false },
  { local: USER_INFO, remote: userDirect, endpoint: 'USER.INFO', share: true },
];

/** The system account imports only its own user info service. */
export const SELF_IMPORTS: readonly SystemImport[] = SYSTEM_IMPORTS.filter((i) => i.endpoint === 'USER.INFO');

export function importsFor(server: FlotillaServer, account: Account): readonly SystemImport[] {
  const system = server.accounts.system;
  if (system === null) return [];
  return account === system ? SELF_IMPORTS : SYSTEM_IMPORTS;
}

/** The imports as AccountInfo lists them (nats-server 2.14: `subject` is the exporter's, `to` the local one). */
export function systemImportsOf(server: FlotillaServer, account: Account): Array<Record<string, unknown>> {
  const system = server.accounts.system;
  if (system === null) return [];
  return importsFor(server, account).map((i) => ({
    subject: i.remote(account.name),
    account: system.name,
    to: i.local,
    local_subject: i.local,
    type: 'service',
    invalid: false,
    share: i.share,
    tracking: false,
  }));
}

/** The system account's exports, as AccountInfo lists them. */
export function systemExports(): Array<Record<string, unknown>> {
  return [
    { subject: accountDirect('*', 'CONNZ'), type: 'service', response_type: 'Stream' },
    { subject: accountDirect('*', 'STATZ'), type: 'service', response_type: 'Stream' },
    { subject: userDirect('*'), type: 'service', response_type: 'Singleton' },
  ];
}
