// A new account JWT taking effect on this server without a restart (a claims update from `nsc push`, or a
// delete): the resolver keeps it, the Account gets its new limits, mappings and imports (the same objects
// config reload updates), a new account is created and routed, and each connected user of the account is
// checked again — a revoked one gets -ERR 'User Authentication Revoked', one the account no longer admits
// 'Authorization Violation', both are closed. nats-server's updateAccountWithClaimJWT.
import type { AccountOptions } from '../config/options.js';
import type { FlotillaServer } from '../server.js';
import { SubjectMappings } from '../accounts/subject-mappings.js';
import type { Account } from '../accounts/account.js';
import type { MessageRouter } from '../message-router.js';
import { accountOptionsOf, isRevoked } from './account-from-claims.js';
import type { OperatorAuth } from './operator-auth.js';
import { peekJwt, type AccountClaims } from './nats-jwt.js';

export const ERR_AUTH_REVOKED = 'User Authentication Revoked';

export type ClaimsOutcome = { ok: true; account: string; message: string } | { ok: false; account: string; message: string; error: string };

function failure(account: string, message: string, error: string): ClaimsOutcome {
  return { ok: false, account, message, error };
}

/** Verifies `jwt` (for `expected` when the subject names the account) and applies it. */
export function updateAccountClaims(server: FlotillaServer, auth: OperatorAuth, jwt: string, expected?: string): ClaimsOutcome {
  const subject = peekJwt<AccountClaims>(jwt)?.sub ?? 'n/a';
  let claims: ReturnType<OperatorAuth['trust']['verifyAccount']>;
  try {
    claims = auth.trust.verifyAccount(jwt, expected);
  } catch (err) {
    return failure(expected ?? subject, 'jwt update resulted in error', (err as Error).message);
  }
  const key = claims.sub;
  const known = auth.accounts.get(key);
  if (known !== undefined && (known.iat ?? 0) > (claims.iat ?? 0)) return failure(key, 'jwt update resulted in error', 'jwt is older than the one held');
  if (!auth.resolver.store(key, jwt)) {
    return failure(key, 'jwt update resulted in error', auth.resolver.kind === 'memory' ? 'the MEMORY resolver takes updates of preloaded accounts only' : 'resolver limit reached');
  }
  auth.accounts.set(key, claims);
  applyAccounts(server, auth, key);
  return { ok: true, account: key, message: 'jwt updated' };
}

/** Removes the accounts (full resolver with allow_delete); their clients are closed. */
export function deleteAccounts(server: FlotillaServer, auth: OperatorAuth, keys: readonly string[]): { deleted: number; errors: string[] } {
  const errors: string[] = [];
  let deleted = 0;
  for (const key of keys) {
    if (!auth.resolver.delete(key)) {
      errors.push(`account ${key} not deleted`);
      continue;
    }
    deleted++;
    auth.accounts.delete(key);
    for (const c of [...server.clients.values()]) if (c.account === key) c.fail(ERR_AUTH_REVOKED, 'Credentials Revoked');
    server.accounts.remove(key);
  }
  if (deleted > 0) applyAccounts(server, auth, null);
  return { deleted, errors };
}

/** Every account's options from the claims held, applied; `changed`: the account whose users are checked again. */
function applyAccounts(server: FlotillaServer, auth: OperatorAuth, changed: string | null): void {
  const all = accountOptionsOf(auth.accounts, (m) => server.log.warn(m));
  const system = server.accounts.system?.name;
  if (system !== undefined && !all.some((a) => a.name === system)) all.push({ name: system, nkey: system, users: [], exports: [], imports: [] });
  for (const a of all) {
    if (a.name === system) delete a.jetstream;
    applyOne(server, a, all);
  }
  server.options.accounts = all;
  server.accounts.rewire(all);
  if (changed !== null) recheckUsers(server, auth, changed);
}

function applyOne(server: FlotillaServer, a: AccountOptions, all: readonly AccountOptions[]): void {
  const existing = server.accounts.find(a.name);
  if (existing === undefined) {
    const account = server.accounts.add(a);
    server.cluster?.addAccount(a.name, account.router);
    server.system?.accountAdded(account);
    applyJetStream(server, account, a, all);
    return;
  }
  if (existing.limits !== null && a.limits !== undefined) Object.assign(existing.limits, a.limits);
  existing.router.mappings = a.mappings !== undefined && a.mappings.length > 0 ? new SubjectMappings(a.mappings) : null;
  applyJetStream(server, existing, a, all);
  for (const c of server.clients.values()) if (c.account === a.name) c.reloadLimits();
}

/**
 * The account's JetStream as its claims now say (accounts/account-jetstreams.ts apply): new limits, or
 * started live on this node (every node of a cluster gets the update); without per-account JetStream an
 * added account answers 10039.
 */
function applyJetStream(server: FlotillaServer, account: Account, a: AccountOptions, all: readonly AccountOptions[]): void {
  const jetstreams = server.accountJetStreams;
  if (jetstreams === null) {
    answerJetStreamNotEnabled(server, account.router);
    return;
  }
  void jetstreams
    .apply(account, a, all)
    // monitoring's single-JetStream views follow the first JetStream account
    .then(() => void (server.jetstream = jetstreams.first));
}

/** Routers already answering 10039 (a deleted account's router comes back with its subscriptions). */
const notEnabledServed = new WeakSet<object>();

/** Every request gets an answer: an account added live has no JetStream, so its `$JS.API` answers 10039 (as config reload's new accounts). */
function answerJetStreamNotEnabled(server: FlotillaServer, router: MessageRouter): void {
  if ((server.jetstream === null && server.accountJetStreams === null) || notEnabledServed.has(router)) return;
  notEnabledServed.add(router);
  void Promise.all([import('@flotilla/jetstream'), import('../internal-bus.js')])
    .then(([{ serveJetStreamNotEnabled }, { InternalBus }]) => serveJetStreamNotEnabled(new InternalBus(router, server.cluster !== null), server.options.jetstream.domain || undefined))
    .catch((err: unknown) => server.log.error({ err: (err as Error).message }, 'could not serve JetStream answers for a new account'));
}

function recheckUsers(server: FlotillaServer, auth: OperatorAuth, key: string): void {
  const claims = auth.accounts.get(key);
  for (const c of [...server.clients.values()]) {
    if (c.account !== key || !c.connected) continue;
    const creds = c.connectCredentials ?? {};
    const user = typeof creds.jwt === 'string' ? peekJwt(creds.jwt) : null;
    if (user !== null && claims !== undefined && isRevoked(claims.nats.revocations, user.sub, user.iat ?? 0)) {
      server.log.info({ cid: c.cid, user: user.sub, account: key }, 'user revoked');
      c.fail(ERR_AUTH_REVOKED, 'Credentials Revoked');
      continue;
    }
    const again = auth.authenticate(creds, c.nonce, c.remoteIp, c.type === 'websocket' ? 'WEBSOCKET' : 'STANDARD');
    if (again === null || again.account !== key) {
      c.fail('Authorization Violation', 'Authentication Failure');
      continue;
    }
    c.reloadPermissions(again.permissions);
  }
}
