// /jsz as nats-server serves it (cluster-semantics §8): totals, `meta_cluster` when clustered, and with
// accounts/streams/consumers/config the per-account stream and consumer details: one detail per
// JetStream-enabled account (`$G` alone without accounts), `acc` picks one.
import { streamState, type JetStreamService } from '@flotilla/jetstream';
import { damageTotals } from '@flotilla/store';
import type { FlotillaServer } from './server.js';
import { clusterViewOf, type ClusterView } from './cluster-view.js';
import { isTrue } from './healthz.js';
import { metaClusterJson } from './meta-cluster-json.js';
import { clusterViewsOf, jetStreamRuns, jetStreamsByAccount, type AccountJetStream } from './monitored-jetstreams.js';

/** nats-server's default page of /jsz account details. */
const JSZ_DEFAULT_LIMIT = 1024;

export type JszAnswer = { httpStatus: 200; body: Record<string, unknown> } | { httpStatus: 400; text: string };

interface Totals {
  memory: number;
  storage: number;
  streams: number;
  consumers: number;
  messages: number;
  bytes: number;
}

export function jsz(server: FlotillaServer, params: URLSearchParams): JszAnswer {
  const js = server.jetstream;
  const view = clusterViewOf(js);
  if (isTrue(params.get('leader-only')) && view !== null && view.metaLeaderName() !== server.serverName) {
    return { httpStatus: 400, text: 'filtered response: not leader' };
  }
  const now = new Date().toISOString();
  if (!jetStreamRuns(server)) {
    return { httpStatus: 200, body: { server_id: server.serverId, now, disabled: true, config: {}, memory: 0, storage: 0, reserved_memory: 0, reserved_storage: 0, accounts: 0, ha_assets: 0, api: { total: 0, errors: 0 } } };
  }
  const all = jetStreamsByAccount(server);
  const totals = totalsOf(all);
  const stats = jetStreamStatsJson(all, totals);
  const body: Record<string, unknown> = {
    server_id: server.serverId,
    now,
    config: jetStreamConfigJson(server),
    ...stats,
    streams: totals.streams,
    consumers: totals.consumers,
    messages: totals.messages,
    bytes: totals.bytes,
  };
  if (view !== null) body['meta_cluster'] = metaClusterJson(view, server.serverName);
  // Flotilla's own: damaged runs found in stream store files since start (records lost unless repaired).
  body['store_damage'] = damageTotals();
  const withConfig = isTrue(params.get('config'));
  const withConsumers = isTrue(params.get('consumers'));
  const withStreams = withConsumers || isTrue(params.get('streams'));
  const acc = params.get('acc');
  const withAccounts = withStreams || isTrue(params.get('accounts')) || acc !== null;
  if (withAccounts) {
    const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
    const limit = Math.max(1, Number(params.get('limit') ?? JSZ_DEFAULT_LIMIT) || JSZ_DEFAULT_LIMIT);
    const accounts = acc === null ? all.slice(offset, offset + limit) : all.filter((a) => a.account === acc);
    // No JetStream account: no list, as nats-server; an `acc` without JetStream (or unknown) gets an empty one.
    if (accounts.length > 0 || acc !== null) {
      // With accounts in a cluster each account has its own meta group (Flotilla's own field; nats-server has one).
      const perAccountMeta = server.accountJetStreams !== null;
      body['account_details'] = accounts.map((a) => ({
        name: a.account,
        id: a.account,
        ...accountStatsJson(a.js),
        ...(perAccountMeta && clusterViewOf(a.js) !== null ? { meta_cluster: metaClusterJson(clusterViewOf(a.js)!, server.serverName) } : {}),
        ...(withStreams ? { stream_detail: streamDetails(a.js, clusterViewOf(a.js), withConsumers, withConfig) } : {}),
      }));
    }
  }
  // 2.14's count of JetStream-enabled accounts, whatever the page shows.
  body['total'] = all.length;
  return { httpStatus: 200, body };
}

/** The usage figures /jsz and /varz's jetstream.stats share: summed over every JetStream account. */
export function jetStreamStatsJson(all: readonly AccountJetStream[], totals: Totals = totalsOf(all)): Record<string, unknown> {
  const api = { total: 0, errors: 0 };
  const reserved = { memory: 0, storage: 0 };
  for (const { js } of all) {
    const a = js.apiStats();
    api.total += a.total;
    api.errors += a.errors;
    // nats-server's server-wide reservations: the max_bytes of the streams (0 when clustered, as before).
    const r = js.reservedBytes();
    reserved.memory += r.memory;
    reserved.storage += r.storage;
  }
  return {
    memory: totals.memory,
    storage: totals.storage,
    reserved_memory: reserved.memory,
    reserved_storage: reserved.storage,
    accounts: all.length,
    ha_assets: haAssetsOf(clusterViewsOf(all)),
    api,
  };
}

/**
 * One account's detail figures as nats-server's accountDetail fills them: its usage (on every node in a
 * cluster with accounts) and API counts, its
 * account limits as reserved_* (nats-server writes an unlimited -1 as uint64, 2^64-1; Flotilla writes 0),
 * accounts and ha_assets 0.
 */
function accountStatsJson(js: JetStreamService): Record<string, unknown> {
  // In a cluster with accounts, the account's bytes on every node (nats-server's storageTotals); else this node's.
  const t = js.usageOnEveryNode() ?? totalsOf([{ account: '', js }]);
  const limits = js.accountLimits.limits;
  const api = js.apiStats();
  return {
    memory: t.memory,
    storage: t.storage,
    reserved_memory: Math.max(0, limits.max_memory),
    reserved_storage: Math.max(0, limits.max_storage),
    accounts: 0,
    ha_assets: 0,
    api: { total: api.total, errors: api.errors },
  };
}

export function jetStreamConfigJson(server: FlotillaServer): Record<string, unknown> {
  const o = server.options.jetstream;
  const limits = server.jetStreamLimits;
  return {
    max_memory: limits?.memoryBytes ?? o.maxMemoryStoreBytes,
    max_storage: limits?.fileBytes ?? o.maxFileStoreBytes,
    store_dir: o.storeDir,
    ...(o.domain ? { domain: o.domain } : {}),
  };
}

/** Raft groups this node is in: the meta group and its stream groups (of every account). */
export function haAssetsOf(views: readonly ClusterView[]): number {
  if (views.length === 0) return 0;
  let replicas = 0;
  for (const v of views) replicas += v.replicas().length;
  return 1 + replicas;
}

export function totalsOf(all: readonly AccountJetStream[]): Totals {
  const t: Totals = { memory: 0, storage: 0, streams: 0, consumers: 0, messages: 0, bytes: 0 };
  for (const { js } of all) {
    for (const s of js.streams()) {
      const st = s.store.state();
      t.streams++;
      t.consumers += js.consumers.consumersOf(s.name).length;
      t.messages += st.messages;
      t.bytes += st.bytes;
      if (s.config.storage === 'memory') t.memory += st.bytes;
      else t.storage += st.bytes;
    }
  }
  return t;
}

function streamDetails(js: JetStreamService, view: ClusterView | null, withConsumers: boolean, withConfig: boolean): object[] {
  const clusterOf = new Map<string, object>();
  for (const r of view?.replicas() ?? []) clusterOf.set(r.name, r.clusterInfo());
  const streams = [...js.streams()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return streams.map((s) => {
    // Running consumers on the leader; the replicated ones on a follower (as nats-server's followers list them).
    const infos = withConsumers || view !== null ? js.consumers.consumerInfos(s.name) : null;
    const consumerCount = Math.max(js.consumers.consumersOf(s.name).length, infos?.length ?? 0);
    const cluster = clusterOf.get(s.name);
    return {
      name: s.name,
      created: s.created,
      ...(cluster !== undefined ? { cluster } : {}),
      ...(withConfig ? { config: s.config } : {}),
      state: streamState(s, { consumerCount }),
      ...(withConsumers
        ? {
            consumer_detail: infos!.map((info) => {
              const out = { ...info };
              if (!withConfig) delete out['config'];
              return out;
            }),
          }
        : {}),
    };
  });
}
