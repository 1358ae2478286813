// /routez: the routing layer's route list, each route with its link health, plus `peers`: every node this
// one has ever linked to (down ones included) with link traffic and, when JetStream is clustered, how the
// meta group sees it (current, lag, offline).
import { msToNs } from '@flotilla/store';
import type { FlotillaServer } from './server.js';
import { clusterViewOf } from './cluster-view.js';

/** A linked peer silent for longer than this is reported `stale` (the link's own timeout is 5 s). */
const STALE_AFTER_MS = 3000;

type Health = 'ok' | 'stale' | 'down';

/** nats-server's `subs`: none, a subject list (`subs=1`), or details with each subscription's account (`subs=detail`). */
export type RoutezSubs = 'none' | 'list' | 'detail';

export function routez(server: FlotillaServer, subs: RoutezSubs = 'none'): Record<string, unknown> {
  const cluster = server.cluster;
  if (cluster === null) {
    return { server_id: server.serverId, server_name: server.serverName, now: new Date().toISOString(), num_routes: 0, routes: [], peers: [] };
  }
  const now = Date.now();
  const meta = new Map<string, { current: boolean; offline: boolean; lag: number; activeAgoMs: number }>();
  const view = clusterViewOf(server.jetstream);
  if (view !== null) for (const r of view.metaStatus().replicas) meta.set(r.name, r);
  const peers = cluster.node.peerTraffic().map((t) => {
    const silentMs = t.lastReceivedMs > 0 ? now - t.lastReceivedMs : -1;
    const health: Health = !t.connected ? 'down' : silentMs > STALE_AFTER_MS ? 'stale' : 'ok';
    const m = meta.get(t.serverName);
    return {
      name: t.serverName,
      health,
      connected: t.connected,
      last_received_ms_ago: silentMs,
      reconnects: t.reconnects,
      links_lost: t.linksLost,
      frames_sent: t.framesSent,
      frames_received: t.framesReceived,
      bytes_sent: t.bytesSent,
      bytes_received: t.bytesReceived,
      ...(m !== undefined ? { meta: { current: m.current, offline: m.offline, lag: m.lag, active: Math.round(msToNs(m.activeAgoMs)) } } : {}),
    };
  });
  const healthByName = new Map(peers.map((p) => [p.name, p.health]));
  const base = cluster.routez(subs);
  const routes = (base['routes'] as Array<Record<string, unknown>>).map((r) => ({
    ...r,
    // nats-server's RouteInfo.NumSubs: the interest the route carries from that node, every account together
    subscriptions: r['interest'],
    health: healthByName.get(String(r['remote_name'])) ?? 'ok',
  }));
  return { ...base, now: new Date().toISOString(), routes, peers };
}
