// The StreamInfo `cluster` block (reference cluster-semantics §4) and RaftGroupStatus of one stream group.
import { createHash } from 'node:crypto';
import type { NodeId } from '@flotilla/raft';
import { msToNs } from '@flotilla/store';
import type { ClusterPeer, GroupRole, RaftGroupStatus } from './cluster-contracts.js';
import type { PeerInfoJson } from '../advisories/jetstream-events.js';

/** `active` of a member never heard from: reported as this long ago rather than infinity. */
const MAX_ACTIVE_MS = 24 * 3600 * 1000;
const HASH_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** nats-server's 8-character peer id: sha256 of the server name, each byte mod 62 as a digit. */
export function peerIdOf(serverName: string): string {
  const b = createHash('sha256').update(serverName).digest();
  let out = '';
  for (let i = 0; i < 8; i++) out += HASH_DIGITS[b[i]! % 62];
  return out;
}

export interface ReplicaClusterBlock {
  name: string;
  /** The group's Raft group id (nats-server 2.10). */
  raft_group: string;
  leader?: string;
  /** When the leader began serving (2.11+: the leader's own view only, as nats-server's raft LeaderSince). */
  leader_since?: string;
  replicas?: Array<{ name: string; current: boolean; offline?: true; active: number; lag?: number; peer: string }>;
}

/** Builds the block from a status: the leader is omitted from `replicas`; leaderless lists every member. */
export function clusterBlockOf(
  clusterName: string,
  selfId: NodeId,
  status: RaftGroupStatus,
  names: Map<NodeId, ClusterPeer>,
  leaderSinceMs?: number,
): ReplicaClusterBlock {
  const block: ReplicaClusterBlock = { name: clusterName, raft_group: status.group };
  const leader = status.leader !== 0 ? names.get(status.leader) : undefined;
  if (leader !== undefined) block.leader = leader.name;
  if (leader !== undefined && leaderSinceMs !== undefined && leaderSinceMs > 0) block.leader_since = new Date(leaderSinceMs).toISOString();
  const rows: NonNullable<ReplicaClusterBlock['replicas']> = [];
  const members = status.replicas.map((r) => ({ ...r }));
  if (leader === undefined || status.leader !== selfId) {
    // Not the leader's view: this node is one of the replicas too (current only while it has a leader).
    const self = names.get(selfId);
    if (self !== undefined) {
      members.push({ raftNodeId: selfId, name: self.name, current: leader !== undefined, offline: false, activeAgoMs: 0, lag: 0 });
    }
  }
  for (const r of members) {
    if (r.raftNodeId === status.leader && leader !== undefined) continue;
    rows.push(peerInfoOf(r));
  }
  rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (rows.length > 0) block.replicas = rows;
  return block;
}

export function groupRoleOf(role: string): GroupRole {
  return role === 'leader' ? 'leader' : role === 'follower' ? 'follower' : 'candidate';
}

/**
 * Every member of the group (this node included, current with no lag) as nats-server's `replicas(node)`
 * lists them in leader-elected and quorum-lost advisories.
 */
export function groupPeerInfos(selfId: NodeId, status: RaftGroupStatus, names: Map<NodeId, ClusterPeer>): PeerInfoJson[] {
  const rows: PeerInfoJson[] = [];
  const self = names.get(selfId);
  if (self !== undefined) rows.push({ name: self.name, current: true, active: 0, peer: peerIdOf(self.name) });
  for (const r of status.replicas) rows.push(peerInfoOf(r));
  return rows;
}

/** One member as nats-server's PeerInfo, keys in its order: name, current, offline, active, lag, peer. */
function peerInfoOf(r: RaftGroupStatus['replicas'][number]): PeerInfoJson {
  const row = { name: r.name, current: r.current } as PeerInfoJson;
  if (r.offline) row.offline = true;
  row.active = Math.round(msToNs(Math.min(r.activeAgoMs, MAX_ACTIVE_MS)));
  if (r.lag > 0) row.lag = r.lag;
  row.peer = peerIdOf(r.name);
  return row;
}
