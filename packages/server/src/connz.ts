// /connz as nats-server 2.14 serves it (monitor.go Connz): open connections, recently closed ones
// (state=closed) or both (state=all), sorted (`sort`, nats-server's options and errors), paged; `acc` keeps
// one account's connections, `user` one user's, `cid` one connection; `auth` adds each connection's account
// (outside the global one); `subs=1` lists subscription subjects, `subs=detail` their details.
import type { ClientConnection } from './client-connection.js';
import type { ClosedConnectionRecord, FlotillaServer } from './server.js';
import { formatUptime } from './uptime-format.js';
import { goDurationString } from './go-duration-string.js';
import { GLOBAL_ACCOUNT_NAME } from './accounts/account.js';

const CONNZ_DEFAULT_LIMIT = 1024;

/** A /connz request nats-server refuses (HTTP 400 with this text). */
export class ConnzError extends Error {}

const SORT_OPTIONS = ['cid', 'start', 'subs', 'pending', 'msgs_to', 'msgs_from', 'bytes_to', 'bytes_from', 'last', 'idle', 'uptime', 'stop', 'reason', 'rtt'] as const;
type SortOption = (typeof SORT_OPTIONS)[number];

/** One row before it is written: what the sorts compare, open or closed alike. */
interface Row {
  cid: number;
  startMs: number;
  stopMs: number | null;
  lastActivityMs: number;
  reason: string;
  subs: number;
  pending: number;
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
  rttMs: number;
  json: (nowMs: number) => Record<string, unknown>;
}

function intParam(params: URLSearchParams, name: string): number {
  const text = params.get(name);
  if (text === null || text === '') return 0;
  if (!/^[+-]?\d+$/.test(text)) throw new ConnzError(`Error decoding int for '${name}': strconv.Atoi: parsing "${text}": invalid syntax`);
  return Number(text);
}

function boolParam(params: URLSearchParams, name: string): boolean {
  const text = params.get(name);
  if (text === null || text === '') return false;
  // Go's strconv.ParseBool, as nats-server's decodeBool.
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new ConnzError(`Error decoding boolean for '${name}': strconv.ParseBool: parsing "${text}": invalid syntax`);
}

export function connz(s: FlotillaServer, params: URLSearchParams): Record<string, unknown> {
  const sortText = params.get('sort') ?? '';
  const withAuth = boolParam(params, 'auth');
  const subsText = params.get('subs') ?? '';
  const subsDetail = subsText.toLowerCase() === 'detail';
  const withSubs = !subsDetail && boolParam(params, 'subs');
  let offset = intParam(params, 'offset');
  let limit = intParam(params, 'limit');
  const cidText = params.get('cid') ?? '';
  if (cidText !== '' && !/^\d+$/.test(cidText)) {
    throw new ConnzError(`Error decoding uint64 for 'cid': strconv.ParseUint: parsing "${cidText}": invalid syntax`);
  }
  const cid = cidText === '' ? 0 : Number(cidText);
  const stateText = (params.get('state') ?? '').toLowerCase();
  let state: 'open' | 'closed' | 'all';
  if (stateText === '' || stateText === 'open') state = 'open';
  else if (stateText === 'closed') state = 'closed';
  else if (stateText === 'any' || stateText === 'all') state = 'all';
  else throw new ConnzError(`Error decoding state for ${params.get('state')}`);
  const sort: SortOption = sortText === '' ? 'cid' : (sortText as SortOption);
  if (!SORT_OPTIONS.includes(sort)) throw new ConnzError(`invalid sorting option: ${sortText}`);
  if (sort === 'stop' && state !== 'closed') throw new ConnzError('sort by stop only valid on closed connections');
  if (sort === 'reason' && state !== 'closed') throw new ConnzError('sort by reason only valid on closed connections');
  if (offset < 0) offset = 0;
  if (limit <= 0) limit = CONNZ_DEFAULT_LIMIT;
  if (cid > 0) limit = 1;
  const acc = params.get('acc') || null;
  const user = params.get('user') || null;
  const now = Date.now();

  const rows: Row[] = [];
  if (state !== 'closed') {
    for (const c of s.clients.values()) {
      if ((acc === null || c.account === acc) && (user === null || c.user === user) && (cid === 0 || c.cid === cid)) {
        rows.push(openRow(c, withSubs, subsDetail, withAuth));
      }
    }
  }
  if (state !== 'open') {
    for (const c of s.closedClients) {
      if ((acc === null || c.account === acc) && (user === null || c.user === user) && (cid === 0 || c.cid === cid)) rows.push(closedRow(c, withAuth));
    }
  }
  sortRows(rows, sort, now);
  const page = rows.slice(offset, offset + limit).map((r) => r.json(now));
  return {
    server_id: s.serverId,
    now: new Date(now).toISOString(),
    num_connections: page.length,
    total: rows.length,
    offset,
    limit,
    connections: page,
  };
}

/** nats-server's orders: cid (start), uptime and reason ascending, the others descending. */
function sortRows(rows: Row[], sort: SortOption, nowMs: number): void {
  const key = (r: Row): number | string => {
    switch (sort) {
      case 'cid':
      case 'start':
        return r.cid;
      case 'subs':
        return r.subs;
      case 'pending':
        return r.pending;
      case 'msgs_to':
        return r.outMsgs;
      case 'msgs_from':
        return r.inMsgs;
      case 'bytes_to':
        return r.outBytes;
      case 'bytes_from':
        return r.inBytes;
      case 'last':
        return r.lastActivityMs;
      case 'idle':
        return nowMs - r.lastActivityMs;
      case 'uptime':
        return (r.stopMs ?? nowMs) - r.startMs;
      case 'stop':
        return r.stopMs ?? 0;
      case 'reason':
        return r.reason;
      case 'rtt':
        return r.rttMs;
    }
  };
  const ascending = sort === 'cid' || sort === 'start' || sort === 'uptime' || sort === 'reason';
  rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const c = ka < kb ? -1 : ka > kb ? 1 : a.cid - b.cid;
    return ascending ? c : -c;
  });
}

function openRow(c: ClientConnection, withSubs: boolean, subsDetail: boolean, withAuth: boolean): Row {
  return {
    cid: c.cid,
    startMs: c.startMs,
    stopMs: null,
    lastActivityMs: c.lastActivityMs,
    reason: '',
    subs: c.subs.size,
    pending: c.pendingBytes,
    inMsgs: c.inMsgs,
    outMsgs: c.outMsgs,
    inBytes: c.inBytes,
    outBytes: c.outBytes,
    rttMs: c.rttMs,
    json: (nowMs) => connInfo(c, nowMs, withSubs, subsDetail, withAuth),
  };
}

function closedRow(c: ClosedConnectionRecord, withAuth: boolean): Row {
  return {
    cid: c.cid,
    startMs: c.startMs,
    stopMs: c.stopMs,
    lastActivityMs: c.stopMs,
    reason: c.reason,
    subs: 0,
    pending: 0,
    inMsgs: c.inMsgs,
    outMsgs: c.outMsgs,
    inBytes: c.inBytes,
    outBytes: c.outBytes,
    rttMs: 0,
    json: () => ({
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
    }),
  };
}

function connInfo(c: ClientConnection, nowMs: number, withSubs: boolean, subsDetail: boolean, withAuth: boolean): Record<string, unknown> {
  const info: Record<string, unknown> = {
    cid: c.cid,
    kind: 'Client',
    type: c.type,
    ip: c.remoteIp.replace(/^::ffff:/, ''),
    port: c.remotePort,
    start: new Date(c.startMs).toISOString(),
    last_activity: new Date(c.lastActivityMs).toISOString(),
    rtt: c.rttMs > 0 ? goDurationString(c.rttMs) : undefined,
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
  if (withSubs && c.subs.size > 0) info['subscriptions_list'] = [...c.subs.values()].map((sub) => sub.subject);
  if (subsDetail && c.subs.size > 0) {
    // nats-server's newClientSubDetail: no account; `max` only when the subscription has an auto-unsubscribe limit.
    info['subscriptions_list_detail'] = [...c.subs.values()].map((sub) => ({
      subject: sub.subject,
      ...(sub.queue !== null ? { qgroup: sub.queue } : {}),
      sid: sub.sid,
      msgs: sub.delivered,
      ...(sub.maxMsgs > 0 ? { max: sub.maxMsgs } : {}),
      cid: c.cid,
    }));
  }
  return info;
}
