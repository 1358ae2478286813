// `$SYS.REQ.USER.INFO` (nats-server's UserInfo): the requester's user, its account and its permissions as
// configured; nothing else of the account, which it would ask for separately.
import type { ClientConnection } from '../client-connection.js';
import type { Permissions } from '../config/options.js';

function subjectPermission(p: { allow?: string[]; deny?: string[] } | undefined): Record<string, unknown> {
  return { ...(p?.allow !== undefined && p.allow.length > 0 ? { allow: p.allow } : {}), ...(p?.deny !== undefined && p.deny.length > 0 ? { deny: p.deny } : {}) };
}

/** nats-server's public Permissions: both directions always present, `responses` with allow_responses. */
function publicPermissions(p: Permissions): Record<string, unknown> {
  const r = p.allowResponses;
  return {
    publish: subjectPermission(p.publish),
    subscribe: subjectPermission(p.subscribe),
    // ttl is a Go duration: nanoseconds
    ...(r !== undefined ? { responses: { max: r.maxMsgs, ttl: r.expiresMs * 1_000_000 } } : {}),
  };
}

export function userInfo(c: ClientConnection): Record<string, unknown> {
  const perms = c.permissions;
  return {
    user: c.user,
    account: c.account,
    account_name: c.account,
    ...(perms !== null ? { permissions: publicPermissions(perms.source) } : {}),
  };
}
