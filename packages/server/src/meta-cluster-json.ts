// The meta group as /jsz `meta_cluster` and /varz `jetstream.meta` show it (cluster-semantics §4):
// {name, leader?, peer, replicas?[], cluster_size}; replicas are the other voters, leader omitted when none.
import { createHash } from 'node:crypto';
import { msToNs } from '@flotilla/store';
import type { ClusterView } from './cluster-view.js';

/** nats-server's 8-character peer id: sha256 of the server name, base64 (URL alphabet). */
export function peerIdOf(serverName: string): string {
  return createHash('sha256').update(serverName).digest('base64url').slice(0, 8);
}

export function metaClusterJson(view: ClusterView, selfName: string): Record<string, unknown> {
  const status = view.metaStatus();
  const leader = view.metaLeaderName();
  const replicas = status.replicas
    .filter((r) => r.name !== selfName)
    .map((r) => ({
      name: r.name,
      current: r.current,
      ...(r.offline ? { offline: true } : {}),
      active: Math.round(msToNs(r.activeAgoMs)),
      ...(r.lag > 0 ? { lag: r.lag } : {}),
      peer: peerIdOf(r.name),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    name: view.clusterName,
    ...(leader !== '' ? { leader } : {}),
    peer: peerIdOf(selfName),
    ...(replicas.length > 0 ? { replicas } : {}),
    cluster_size: view.clusterSize(),
  };
}
