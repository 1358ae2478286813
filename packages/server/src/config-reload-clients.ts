// The connected clients after a reload replaced the users (nats-server's reloadAuthorization): a client
// whose user is gone or now in another account is closed (it reconnects and authenticates afresh); one
// whose credentials the new config refuses gets -ERR 'Authorization Violation'; the others keep their
// connection with the new permissions, and lose the subscriptions those no longer allow.
import type { Logger } from 'pino';
import { ERR_AUTH_VIOLATION } from '@flotilla/protocol';
import type { ClientAuth } from './client-auth.js';
import type { ClientConnection } from './client-connection.js';

export interface ReauthorizeCounts {
  kept: number;
  closedMoved: number;
  closedUnauthorized: number;
  subscriptionsRemoved: number;
}

export async function reauthorizeClients(
  clients: Iterable<ClientConnection>,
  auth: ClientAuth,
  before: ClientAuth,
  globalAccount: string,
  log: Logger,
): Promise<ReauthorizeCounts> {
  const counts: ReauthorizeCounts = { kept: 0, closedMoved: 0, closedUnauthorized: 0, subscriptionsRemoved: 0 };
  // A snapshot: connections made from here on already meet the new auth.
  const checks = [...clients].filter((c) => c.connected && !c.closed).map(async (conn) => {
    if (conn.user !== '') {
      const identity = auth.accountOfUser(conn.user);
      if (identity === undefined || (identity.account ?? globalAccount) !== conn.account) {
        counts.closedMoved++;
        return conn.close('Client Closed');
      }
    }
    // no_auth_user and certificate-mapped clients are looked up again; a changed secret is checked again
    const unchanged = conn.certIdentities === null && !isNoAuthUser(conn) ? auth.unchangedIdentity(conn.user, before) : undefined;
    const result = unchanged ?? (await auth.check(conn.connectCredentials ?? {}, conn.certIdentities, conn.remoteIp, conn.nonce));
    if (conn.closed) return;
    if (result === null) {
      counts.closedUnauthorized++;
      log.info({ cid: conn.cid, user: conn.user }, 'authorization violation after config reload');
      return conn.fail(ERR_AUTH_VIOLATION, 'Authentication Failure');
    }
    if ((result.account ?? globalAccount) !== conn.account) {
      counts.closedMoved++;
      return conn.close('Client Closed');
    }
    for (const sub of conn.reloadPermissions(result.permissions)) {
      counts.subscriptionsRemoved++;
      log.info({ cid: conn.cid, user: conn.user, subject: sub.subject, queue: sub.queue, sid: sub.sid }, `Removed sub "${sub.subject}" (sid "${sub.sid}") - not authorized`);
    }
    counts.kept++;
  });
  await Promise.all(checks);
  return counts;
}

/** A client that gave no credentials (it is the no_auth_user, if it is anyone). */
function isNoAuthUser(conn: ClientConnection): boolean {
  const c = conn.connectCredentials ?? {};
  return [c.user, c.pass, c.auth_token, c.nkey].every((v) => v === undefined || v === '');
}
