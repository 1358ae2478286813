// The monitoring endpoints the system account answers, one table for the server-wide ones
// (`$SYS.REQ.SERVER.PING.<name>`, `$SYS.REQ.SERVER.<id>.<name>`) and one for an account's
// (`$SYS.REQ.ACCOUNT.<acc>.<name>`), each over the same code as its HTTP endpoint.
import { accountDetail, accountStatz, accountz, AccountNotFoundError } from '../accountz.js';
import { connz } from '../connz.js';
import { healthz } from '../healthz.js';
import { jsz } from '../jsz.js';
import { gatewayz, leafz } from '../leafz-gatewayz.js';
import { raftz } from '../raftz.js';
import { inLameDuck } from '../lame-duck.js';
import { routez } from '../peers-view.js';
import type { FlotillaServer } from '../server.js';
import { subsz, SubszError } from '../subsz.js';
import { varz } from '../varz.js';
import type { CpuPercent } from '../cpu-percent.js';
import { connzParams, healthzParams, jszParams, numberOption, stringOption } from './request-params.js';
import { SKIP, SystemRequestError, type Endpoint } from './z-request.js';

/** Runs `f`, turning the endpoints' own refusals into the 500 answer nats-server gives over NATS. */
function refusing<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof AccountNotFoundError || err instanceof SubszError) throw new SystemRequestError(err.message);
    throw err;
  }
}

function subszOf(server: FlotillaServer, o: Record<string, unknown>, account?: string): unknown {
  const offset = numberOption(o['offset']);
  const limit = numberOption(o['limit']);
  const test = stringOption(o['test']);
  const acc = account ?? stringOption(o['account']);
  return refusing(() =>
    subsz(server, {
      subscriptions: account !== undefined || o['subscriptions'] === true,
      ...(offset !== undefined ? { offset } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(test !== undefined ? { test } : {}),
      ...(acc !== undefined ? { account: acc } : {}),
    }),
  );
}

/** Server-wide endpoints answered through zReq (STATSZ and IDZ have shapes of their own). */
export function serverEndpoints(server: FlotillaServer, cpu: CpuPercent): Record<string, Endpoint> {
  return {
    VARZ: () => varz(server, server.httpPort, cpu.sample()),
    CONNZ: (o) => connz(server, connzParams(o)),
    // RoutezOptions {subscriptions, subscriptions_detail}
    ROUTEZ: (o) => routez(server, o['subscriptions_detail'] === true ? 'detail' : o['subscriptions'] === true ? 'list' : 'none'),
    SUBSZ: (o) => subszOf(server, o),
    JSZ: (o) => {
      const answer = jsz(server, jszParams(o));
      // leader_only on a node that is not the meta leader: nats-server's errSkipZreq
      return answer.httpStatus === 200 ? answer.body : SKIP;
    },
    HEALTHZ: (o) => {
      // 2.14's HealthStatus carries the status code it would answer over HTTP
      const answer = healthz(server, healthzParams(o), inLameDuck(server));
      return { ...answer.body, status_code: answer.httpStatus };
    },
    ACCOUNTZ: (o) => refusing(() => accountz(server, stringOption(o['account']))),
    LEAFZ: () => leafz(server),
    GATEWAYZ: () => gatewayz(server),
    RAFTZ: (o) => {
      const account = stringOption(o['account']);
      const group = stringOption(o['group']);
      return raftz(server, { ...(account !== undefined ? { account } : {}), ...(group !== undefined ? { group } : {}) });
    },
  };
}

/** `$SYS.REQ.ACCOUNT.<acc>.<name>` through zReq (CONNS has a shape of its own). */
export function accountEndpoints(server: FlotillaServer): Record<string, (account: string) => Endpoint> {
  return {
    CONNZ: (account) => (o) => connz(server, connzParams({ ...o, acc: account })),
    SUBSZ: (account) => (o) => subszOf(server, o, account),
    INFO: (account) => () => refusing(() => accountDetail(server, account)),
    LEAFZ: () => () => leafz(server),
    JSZ: (account) => (o) => accountJsz(server, account, o),
    STATZ: (account) => (o) => {
      // `$SYS.REQ.ACCOUNT.PING.STATZ` has its own subscription: not an account called PING
      if (account === 'PING') return SKIP;
      return statzOrSkip(server, [account], o['include_unused'] === true);
    },
  };
}

/** AccountStatz, or nothing to say when no account asked for has connections here (nats-server's skip). */
export function statzOrSkip(server: FlotillaServer, names: readonly string[], includeUnused: boolean): unknown {
  const statz = accountStatz(server, names, includeUnused);
  return (statz['account_statz'] as unknown[]).length === 0 && !includeUnused ? SKIP : statz;
}

/**
 * nats-server's JszAccount: one account's JetStream detail, from that account's own JetStream (jsz's `acc`).
 * A server that runs JetStream with no JetStream account (accounts configured, none with `jetstream`) still
 * says which account is not enabled, as nats-server does.
 */
function accountJsz(server: FlotillaServer, account: string, o: Record<string, unknown>): unknown {
  if (!server.options.jetstream.enabled) throw new SystemRequestError('jetstream not enabled');
  if (server.accounts.find(account) === undefined) throw new SystemRequestError(`account "${account}" not found`);
  const answer = jsz(server, jszParams({ ...o, account, accounts: true }));
  const details = answer.httpStatus === 200 ? (answer.body['account_details'] as unknown[] | undefined) : undefined;
  if (details === undefined || details.length === 0) throw new SystemRequestError(`account "${account}" not jetstream enabled`);
  return details[0];
}
