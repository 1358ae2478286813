// /raftz and `$SYS.REQ.SERVER.<id|PING>.RAFTZ`: nats-server's RaftzStatus, account -> group -> RaftzGroup, for
// the Raft groups this node is a member of, filtered by account (default: the system account, where nats-server
// keeps its meta group) and optionally one group. Filled from each group's RaftGroupStatus; what that status does
// not carry (leader_since, voted_for, pterm/pindex, the WAL's state) is left out rather than made up. Flotilla's
// Raft traffic runs on the cluster's gRPC links in no account, so system_account is false, traffic_account "".
import type { FlotillaServer } from './server.js';
import type { GroupStatus } from './cluster-view.js';
import { GLOBAL_ACCOUNT_NAME } from './accounts/account.js';
import { clusterViewsOf, jetStreamsByAccount } from './monitored-jetstreams.js';
import { goDurationString } from './go-duration-string.js';

export interface RaftzOptions {
  account?: string;
  group?: string;
}

/** nats-server's /raftz refusals (404 with this text). */
export class RaftzNotFound extends Error {
  readonly code = 'RAFTZ_NOT_FOUND';
}

/** One Raft group of this node and the account nats-server would file it under. */
interface MemberGroup {
  account: string;
  status: GroupStatus;
}

function memberGroups(server: FlotillaServer): MemberGroup[] {
  const metaAccount = server.accounts.system?.name ?? GLOBAL_ACCOUNT_NAME;
  const out: MemberGroup[] = [];
  for (const view of clusterViewsOf(jetStreamsByAccount(server))) {
    out.push({ account: metaAccount, status: view.metaStatus() });
    for (const r of view.replicas()) out.push({ account: r.assignment.account ?? GLOBAL_ACCOUNT_NAME, status: r.status() });
  }
  return out;
}

/** Raftz over NATS: `{}` when nothing matches (or no Raft group runs here). */
export function raftz(server: FlotillaServer, o: RaftzOptions): Record<string, Record<string, unknown>> | null {
  const account = o.account || server.accounts.system?.name;
  if (account === undefined) return null;
  const out: Record<string, Record<string, unknown>> = {};
  for (const g of memberGroups(server)) {
    if (g.account !== account || (o.group && g.status.group !== o.group)) continue;
    (out[g.account] ??= {})[g.status.group] = raftzGroup(g.status, server.cluster?.node.raftNodeId ?? 0);
  }
  return out;
}

/** /raftz: 404 "No Raft nodes registered" on a node without any (nats-server's raftNodes == nil). */
export function raftzHttp(server: FlotillaServer, params: URLSearchParams): Record<string, unknown> {
  if (memberGroups(server).length === 0) throw new RaftzNotFound('No Raft nodes registered');
  const acc = params.get('acc');
  const group = params.get('group');
  const answer = raftz(server, { ...(acc ? { account: acc } : {}), ...(group ? { group } : {}) });
  if (answer === null) throw new RaftzNotFound('No Raft nodes returned, check supplied filters');
  return answer;
}

function raftzGroup(s: GroupStatus, selfId: number): Record<string, unknown> {
  const size = 1 + s.replicas.length;
  const peers: Record<string, unknown> = {};
  for (const r of s.replicas) {
    peers[String(r.raftNodeId)] = {
      name: r.name,
      known: true,
      // how long since this node last heard from it (nats-server's time.Since(p.ts)), offline peers included
      ...(r.activeAgoMs >= 0 ? { last_seen: goDurationString(r.activeAgoMs) } : {}),
    };
  }
  return {
    id: String(selfId),
    state: s.role.toUpperCase(),
    size,
    quorum_needed: Math.floor(size / 2) + 1,
    committed: s.commit,
    applied: s.applied,
    ...(s.leader !== 0 ? { leader: String(s.leader) } : {}),
    ever_had_leader: s.leader !== 0 || s.leaderChanges > 0,
    term: s.term,
    system_account: false,
    traffic_account: '',
    ipq_proposal_len: 0,
    ipq_entry_len: 0,
    ipq_resp_len: 0,
    ipq_apply_len: 0,
    peers,
  };
}
