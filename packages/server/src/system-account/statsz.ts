// nats-server's ServerStatsMsg: `{"server": {...}, "statsz": {...}}`, the answer to `$SYS.REQ.SERVER.PING`
// (what `nats server ls` asks) and `.PING.STATSZ`, and the heartbeat on `$SYS.SERVER.<id>.STATSZ`.
import { cpus } from 'node:os';
import type { ClusterNode } from '@flotilla/cluster';
import type { FlotillaServer } from '../server.js';
import { jetStreamSection } from '../varz.js';

export function serverStats(server: FlotillaServer, cpuPercent: number): Record<string, unknown> {
  const totals = server.accounts.totals();
  const activeAccounts = new Set<string>();
  for (const c of server.clients.values()) activeAccounts.add(c.account);
  const sent = { msgs: totals.outMsgs, bytes: totals.outBytes };
  const received = { msgs: totals.inMsgs, bytes: totals.inBytes };
  const js = jetStreamSection(server);
  return {
    start: new Date(server.startMs).toISOString(),
    mem: process.memoryUsage.rss(),
    cores: cpus().length,
    cpu: cpuPercent,
    connections: server.clients.size,
    total_connections: server.totalConnections,
    active_accounts: activeAccounts.size,
    subscriptions: server.accounts.subscriptionCount(),
    sent,
    sent_to_clients: sent,
    received,
    received_from_clients: received,
    slow_consumers: server.slowConsumers,
    // this server and every peer it is linked to
    active_servers: 1 + (server.cluster?.node.peers().length ?? 0),
    ...(server.cluster !== null ? routesOf(server.cluster.node) : {}),
    ...(server.jetstream !== null ? { jetstream: statszJetStream(js) } : {}),
  };
}

/**
 * nats-server's RouteStat per linked peer (omitted with none). A link carries frames (messages, interest, Raft),
 * so sent/received count frames; `rid` is the peer's Raft node id, stable while it runs; a gRPC stream's write
 * buffer is not visible here, so `pending` is 0.
 */
function routesOf(node: ClusterNode): { routes?: unknown[] } {
  const traffic = new Map(node.peerTraffic().map((t) => [t.serverName, t]));
  const routes = node.peers().map((p) => {
    const t = traffic.get(p.serverName);
    return {
      rid: p.raftNodeId,
      name: p.serverName,
      sent: { msgs: t?.framesSent ?? 0, bytes: t?.bytesSent ?? 0 },
      received: { msgs: t?.framesReceived ?? 0, bytes: t?.bytesReceived ?? 0 },
      pending: 0,
    };
  });
  return routes.length > 0 ? { routes } : {};
}

/** STATSZ's jetstream section: /varz's without the store directory, plus the (empty) server limits. */
function statszJetStream(js: Record<string, unknown>): Record<string, unknown> {
  const config = { ...(js['config'] as Record<string, unknown>) };
  delete config['store_dir'];
  return { ...js, config, limits: {} };
}
