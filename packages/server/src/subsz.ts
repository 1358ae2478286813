// /subsz as nats-server serves it (and `$SYS.REQ.SERVER.PING.SUBSZ`, `$SYS.REQ.ACCOUNT.<acc>.SUBSZ`): the
// Sublist figures of every account (or the one asked for) and, with `subs`, each subscription, paged and
// optionally only those a message on the literal `test` subject would reach.
import { isValidLiteralSubject, subjectMatchesFilter } from '@flotilla/protocol';
import type { FlotillaServer } from './server.js';
import { sublistStats } from './system-account/account-figures.js';

/** nats-server's DefaultSubListSize. */
const SUBSZ_DEFAULT_LIMIT = 1024;

export interface SubszOptions {
  offset?: number;
  limit?: number;
  subscriptions?: boolean;
  account?: string;
  test?: string;
}

/** A /subsz request nats-server refuses (400 over HTTP). */
export class SubszError extends Error {
  readonly code = 'SUBSZ_BAD_REQUEST';
}

export function subsz(server: FlotillaServer, o: SubszOptions): Record<string, unknown> {
  const offset = Math.max(0, Math.trunc(o.offset ?? 0) || 0);
  const limit = (o.limit ?? 0) > 0 ? Math.trunc(o.limit!) : SUBSZ_DEFAULT_LIMIT;
  if (o.test !== undefined && o.test !== '' && !isValidLiteralSubject(o.test)) {
    throw new SubszError(`invalid test subject, must be valid publish subject: ${o.test}`);
  }
  const accounts = [...server.accounts.all()].filter((a) => !o.account || a.name === o.account);
  const body: Record<string, unknown> = {
    server_id: server.serverId,
    now: new Date().toISOString(),
    ...sublistStats(accounts.map((a) => a.router)),
    total: 0,
    offset,
    limit,
  };
  if (o.subscriptions === true) {
    const details: Array<Record<string, unknown>> = [];
    for (const a of accounts) {
      for (const sub of a.router.sublist.all()) {
        if (o.test && !subjectMatchesFilter(o.test, sub.subject)) continue;
        details.push({
          account: a.name,
          account_tag: a.name,
          subject: sub.subject,
          ...(sub.queue !== null ? { qgroup: sub.queue } : {}),
          sid: sub.sid,
          msgs: sub.delivered,
          ...(sub.maxMsgs > 0 ? { max: sub.maxMsgs } : {}),
          cid: sub.owner.cid,
        });
      }
    }
    body['total'] = details.length;
    const page = details.slice(offset, offset + limit);
    if (page.length > 0) body['subscriptions_list'] = page;
  }
  return body;
}

/** /subsz's query: `subs`, `offset`, `limit`, `acc`, `test`. */
export function subszOptionsOf(params: URLSearchParams): SubszOptions {
  const subs = params.get('subs');
  return {
    subscriptions: subs === '1' || subs === 'true',
    offset: Number(params.get('offset') ?? 0) || 0,
    limit: Number(params.get('limit') ?? 0) || 0,
    ...(params.get('acc') ? { account: params.get('acc')! } : {}),
    ...(params.get('test') ? { test: params.get('test')! } : {}),
  };
}
