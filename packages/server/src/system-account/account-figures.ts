// What nats-server reports about one account: its connections on this server, its traffic (AccountStat)
// and its Sublist's figures (SublistStats). Shared by the system requests and the monitoring endpoints.
import type { Account } from '../accounts/account.js';
import type { ClientConnection } from '../client-connection.js';
import type { MessageRouter } from '../message-router.js';
import type { FlotillaServer } from '../server.js';

/** The client connections of `accountName` (before CONNECT a connection is in the global account). */
export function connectionsOf(server: FlotillaServer, accountName: string): ClientConnection[] {
  const out: ClientConnection[] = [];
  for (const c of server.clients.values()) if (c.account === accountName) out.push(c);
  return out;
}

/**
 * Whether `accountName` has JetStream here: with JetStream accounts, each has its own; otherwise the global
 * account has the server's, when enabled.
 */
export function jetStreamEnabledFor(server: FlotillaServer, accountName: string): boolean {
  if (server.accountJetStreams !== null) return server.accountJetStreams.of(accountName) !== undefined;
  return server.jetstream !== null && accountName === server.accounts.global.name;
}

const msgBytes = (msgs: number, bytes: number): { msgs: number; bytes: number } => ({ msgs, bytes });

/**
 * nats-server's AccountStat. Traffic is the account's subject space: messages published in it (received)
 * and deliveries out of it (sent); gateways, routes and leaf nodes carry none of it on one node.
 */
export function accountStat(server: FlotillaServer, account: Account): Record<string, unknown> {
  const conns = connectionsOf(server, account.name).length;
  const st = account.router.stats;
  const none = msgBytes(0, 0);
  return {
    acc: account.name,
    name: account.name,
    conns,
    leafnodes: 0,
    total_conns: conns,
    num_subscriptions: account.router.sublist.count,
    sent: { ...msgBytes(st.outMsgs, st.outBytes), gateways: none, routes: none, leafs: none },
    received: { ...msgBytes(st.inMsgs, st.inBytes), gateways: none, routes: none, leafs: none },
    slow_consumers: 0,
  };
}

/**
 * nats-server's SublistStats over `routers`. Flotilla's Sublist does not count matches or cache hits:
 * each publish is one match (the router's inMsgs), and the hit rate and fan-out are not measured (0).
 */
export function sublistStats(routers: readonly MessageRouter[]): Record<string, unknown> {
  let subs = 0;
  let cache = 0;
  let inserts = 0;
  let removes = 0;
  let matches = 0;
  for (const r of routers) {
    subs += r.sublist.count;
    cache += r.sublist.cacheSize;
    inserts += r.inserts;
    removes += r.removes;
    matches += r.stats.inMsgs;
  }
  return {
    num_subscriptions: subs,
    num_cache: cache,
    num_inserts: inserts,
    num_removes: removes,
    num_matches: matches,
    cache_hit_rate: 0,
    max_fanout: 0,
    avg_fanout: 0,
  };
}
