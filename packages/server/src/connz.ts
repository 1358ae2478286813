// /connz as nats-server serves it: open connections (or recently closed ones with state=closed), paged;
// `acc` keeps one account's connections, `user` one user's, `cid` one connection, and `auth` adds each
// connection's account (outside the global one).
import type { ClientConnection } from './client-connection.js';
import type { FlotillaServer } from './server.js';
import { formatUptime } from './uptime-format.js';
import { GLOBAL_ACCOUNT_NAME } from './accounts/account.js';

const CONNZ_DEFAULT_LIMIT = 1024;

export function connz(s: FlotillaServer, params: URLSearchParams): Record<string, unknown> {
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const limit = Math.max(1, Number(params.get('limit') ?? CONNZ_DEFAULT_LIMIT) || CONNZ_DEFAULT_LIMIT);
  const withSubs = params.get('subs') === '1' || params.get('subs') === 'true' || params.get('subs') === 'detail';
  const withAuth = params.get('auth') === '1' || params.get('auth') === 'true';
  const acc = params.get('acc') || null;
  const user = params.get('user') || null;
  const cid = Number(params.get('cid') ?? 0) || 0;
  const now = Date.now();
  if (params.get('state') === 'closed') {
    const kept = s.closedClients.filter((c) => (acc === null || c.account === acc) && (user === null || c.user === user) && (cid === 0 || c.cid === cid));
    const closed = kept.slice(offset, offset + limit).map((c) => ({
      cid: c.cid,
      kind: 'Client',
      type: c.type,
      ip: c.ip.replace(/^::ffff:/, ''),
      port: c.port,
      start: new Date(c.startMs).toISOString(),
      stop: new Date(c.stopMs).toISOString(),
      reason: c.reason,
      name: c.name || undefined,
      in_msgs: c.inMsgs,
      out_msgs: c.outMsgs,
      in_bytes: c.inBytes,
      out_bytes: c.outBytes,
      ...(withAuth && c.user ? { authorized_user: c.user } : {}),
      ...(withAuth && c.account !== GLOBAL_ACCOUNT_NAME ? { account: c.account } : {}),
    }));
    return { server_id: s.serverId, now: new Date(now).toISOString(), num_connections: closed.length, total: kept.length, offset, limit, connections: closed };
  }
  const all = [...s.clients.values()]
    .filter((c) => (acc === null || c.account === acc) && (user === null || c.user === user) && (cid === 0 || c.cid === cid))
    .sort((a, b) => a.cid - b.cid);
  const page = all.slice(offset, offset + limit).map((c) => connInfo(c, now, withSubs, withAuth));
  return {
    server_id: s.serverId,
    now: new Date(now).toISOString(),
    num_connections: page.length,
    total: all.length,
    offset,
    limit,
    connections: page,
  };
}

function connInfo(c: ClientConnection, nowMs: number, withSubs: boolean, withAuth: boolean): Record<string, unknown> {
  const info: Record<string, unknown> = {
    cid: c.cid,
    kind: 'Client',
    type: c.type,
    ip: c.remoteIp.replace(/^::ffff:/, ''),
    port: c.remotePort,
    start: new Date(c.startMs).toISOString(),
    last_activity: new Date(c.lastActivityMs).toISOString(),
    uptime: formatUptime(nowMs - c.startMs),
    idle: formatUptime(nowMs - c.lastActivityMs),
    pending_bytes: c.pendingBytes,
    in_msgs: c.inMsgs,
    out_msgs: c.outMsgs,
    in_bytes: c.inBytes,
    out_bytes: c.outBytes,
    subscriptions: c.subs.size,
    name: c.name || undefined,
    lang: c.lang || undefined,
    version: c.version || undefined,
    authorized_user: c.user || undefined,
    account: withAuth && c.account !== GLOBAL_ACCOUNT_NAME ? c.account : undefined,
  };
  if (withSubs) info['subscriptions_list'] = [...c.subs.values()].map((sub) => sub.subject);
  return info;
}
