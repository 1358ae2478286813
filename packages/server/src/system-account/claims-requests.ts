// Operator mode's claim requests on the system account (nats-server's DirAccResolver.Start and
// accountClaimUpdate): `$SYS.REQ.ACCOUNT.<id>.CLAIMS.UPDATE` and the older `$SYS.ACCOUNT.<id>.CLAIMS.UPDATE`
// (what `nsc push` sends) with either resolver; with the full resolver also `$SYS.REQ.CLAIMS.UPDATE`,
// `$SYS.REQ.ACCOUNT.<id>.CLAIMS.LOOKUP`, `$SYS.REQ.CLAIMS.LIST` and `$SYS.REQ.CLAIMS.DELETE`. Every node
// subscribes across the cluster, so one push reaches and updates all of them (each answers).
import type { FlotillaServer } from '../server.js';
import type { OperatorAuth } from '../operator/operator-auth.js';
import { DirResolver } from '../operator/account-resolver.js';
import { deleteAccounts, updateAccountClaims, type ClaimsOutcome } from '../operator/account-claims-update.js';
import { JwtError, verifyJwt } from '../operator/nats-jwt.js';
import { isValidPublicAccountKey } from '../security/nkey-signature.js';
import type { InternalClient, SystemRequest } from './internal-client.js';
import type { ServerInfoStamp } from './server-info.js';

const HTTP_OK = 200;
const PACK_SUBJECT = '$SYS.REQ.CLAIMS.PACK';
const HTTP_SERVER_ERROR = 500;

/** Serves the claim requests; returns what stops the full resolver's periodic sync. */
export function serveClaimRequests(server: FlotillaServer, auth: OperatorAuth, sys: InternalClient, stamp: ServerInfoStamp, running: () => boolean): () => void {
  const reply = (r: SystemRequest, body: string | Buffer): void => {
    if (r.reply !== null && running()) {
      if (typeof body === 'string') sys.publish(r.reply, body);
      else sys.publishMessage(r.reply, null, body);
    }
  };
  const answer = (r: SystemRequest, o: ClaimsOutcome): void => {
    if (!o.ok) server.log.error(`${o.message} - ${o.account} - ${o.error}`);
    else server.log.debug(`${o.message} - ${o.account}`);
    const body = o.ok
      ? { server: stamp.next(), data: { account: o.account, code: HTTP_OK, message: o.message } }
      : { server: stamp.next(), error: { account: o.account, code: HTTP_SERVER_ERROR, description: `${o.message} - ${o.error}` } };
    reply(r, JSON.stringify(body));
  };
  const perAccount = (r: SystemRequest, at: number): void => {
    const key = r.subject.split('.')[at]!;
    answer(r, updateAccountClaims(server, auth, r.body.toString('utf8').trim(), key));
  };
  sys.subscribe('$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE', (r) => perAccount(r, 3));
  sys.subscribe('$SYS.ACCOUNT.*.CLAIMS.UPDATE', (r) => perAccount(r, 2));
  if (!(auth.resolver instanceof DirResolver)) return () => {};
  const store = auth.resolver;
  sys.subscribe('$SYS.REQ.CLAIMS.UPDATE', (r) => answer(r, updateAccountClaims(server, auth, r.body.toString('utf8').trim())));
  sys.subscribe('$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP', (r) => {
    const key = r.subject.split('.')[3]!;
    // an empty answer tells the asker this node has no JWT for it
    reply(r, Buffer.from(auth.resolver.get(key) ?? ''));
  });
  sys.subscribe('$SYS.REQ.CLAIMS.LIST', (r) => reply(r, JSON.stringify({ server: stamp.next(), data: auth.resolver.list() })));
  sys.subscribe('$SYS.REQ.CLAIMS.DELETE', (r) => {
    const fail = (by: string, error: string): void => answer(r, { ok: false, account: '', message: `delete accounts request by ${by} failed`, error });
    let keys: string[];
    let by = '';
    try {
      const g = verifyJwt<{ accounts?: unknown }>(r.body.toString('utf8').trim(), 'generic');
      by = g.sub;
      if (!auth.resolver.allowDelete) return fail(by, 'delete must be enabled in server config');
      if (g.sub !== g.iss) return fail(by, 'not self signed');
      if (!auth.trust.trusts(g.iss)) return fail(by, 'not trusted');
      const list = g.nats.accounts;
      if (!Array.isArray(list) || list.some((k) => typeof k !== 'string' || !isValidPublicAccountKey(k))) return fail(by, 'malformed request');
      keys = list as string[];
      if (keys.includes(server.accounts.system?.name ?? '')) return fail(by, 'not allowed to delete system account');
    } catch (err) {
      if (!(err instanceof JwtError)) throw err;
      return fail(by, err.message);
    }
    const { deleted, errors } = deleteAccounts(server, auth, keys);
    if (errors.length === 0) answer(r, { ok: true, account: '', message: `deleted ${deleted} accounts` });
    else answer(r, { ok: false, account: '', message: `deleted ${deleted} accounts, failed for ${errors.length}`, error: errors.join('\n') });
  });
  return syncStores(server, auth, store, sys, running);
}

/**
 * nats-server's pack sync between full resolvers: every `interval` a node sends the hash of its store to
 * `$SYS.REQ.CLAIMS.PACK`; one responder (queue group) whose store differs answers with one "key|jwt" message
 * per account and an empty one at the end, and the asker keeps each JWT newer than its own. A node that was
 * down while accounts were pushed catches up within an interval.
 */
function syncStores(server: FlotillaServer, auth: OperatorAuth, store: DirResolver, sys: InternalClient, running: () => boolean): () => void {
  sys.subscribe(
    PACK_SUBJECT,
    (r) => {
      if (r.reply === null || !running()) return;
      if (!r.body.equals(store.hash())) for (const key of store.list()) sys.publishMessage(r.reply, null, Buffer.from(`${key}|${store.get(key)!}`));
      sys.publishMessage(r.reply, null, Buffer.alloc(0));
    },
    'cluster',
    'responder',
  );
  const inbox = `$SYS._INBOX.${server.serverId}.pack`;
  sys.subscribe(inbox, (r) => {
    const text = r.body.toString('utf8');
    const bar = text.indexOf('|');
    if (bar <= 0) return;
    const key = text.slice(0, bar);
    const jwt = text.slice(bar + 1).trim();
    if (store.get(key) === jwt) return;
    const outcome = updateAccountClaims(server, auth, jwt, key);
    if (outcome.ok) server.log.info(`DirResolver - merged account ${key} from a peer`);
  });
  const timer = setInterval(() => {
    if (running()) sys.router.publish(PACK_SUBJECT, inbox, -1, store.hash(), 0, false);
  }, store.syncIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
