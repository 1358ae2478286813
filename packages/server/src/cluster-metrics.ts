// Cluster series for /metrics: Raft group state (meta and stream groups on this node), replication lag
// per peer, proposal-to-commit and fsync latency histograms, and per-peer link traffic. Group series are
// capped like the stream series (MAX_GROUPS_EXPORTED, meta groups always first), over every JetStream
// account's groups (each series carries its `account`).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { setFsyncObserver } from '@flotilla/store';
import type { FlotillaServer } from './server.js';
import { clusterViewOf, type ClusterView, type GroupStatus } from './cluster-view.js';
import { jetStreamsByAccount, type AccountJetStream } from './monitored-jetstreams.js';
import type { SeriesFamily } from './metrics.js';
import { textFamily, type TextFamily } from './exposition-text.js';

/** At most this many Raft groups get per-group series. */
export const MAX_GROUPS_EXPORTED = 500;

const FSYNC_BUCKETS_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const PROPOSAL_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ROLES = ['leader', 'follower', 'candidate'] as const;

/** Registers the cluster and storage series (stop removes the process-wide hooks). */
export function registerClusterMetrics(registry: Registry, server: FlotillaServer): SeriesFamily {
  const fsync = new Histogram({
    name: 'flotilla_fsync_seconds',
    help: 'Duration of fsyncs: raft_log = one group-committed Raft log batch (write + sync), stream_store = one segment fdatasync.',
    labelNames: ['kind'],
    buckets: FSYNC_BUCKETS_SECONDS,
    registers: [registry],
  });
  // Zero series for both kinds, so dashboards see them before the first sync.
  fsync.zero({ kind: 'raft_log' });
  fsync.zero({ kind: 'stream_store' });
  setFsyncObserver((kind, seconds) => fsync.observe({ kind }, seconds));

  const proposals = new Histogram({
    name: 'flotilla_raft_proposal_commit_seconds',
    help: 'Time from proposing a Raft entry to its commit, on the leader, by group kind.',
    labelNames: ['kind'],
    buckets: PROPOSAL_BUCKETS_SECONDS,
    registers: [registry],
  });
  // Stream replicas read `js.clusterObserver` on every commit, so setting it once is enough; every JetStream
  // account's (each has its own meta group and stream groups).
  const jetStreams = jetStreamsByAccount(server);
  const metaGroups = new Set<string>();
  for (const { js } of jetStreams) {
    js.clusterObserver = {
      proposalCommitted: (group, seconds) => proposals.observe({ kind: metaGroups.has(group) ? 'meta' : 'stream' }, seconds),
    };
  }
  const hookObserver = (): void => {
    if (metaGroups.size === jetStreams.length) return;
    for (const { js } of jetStreams) {
      const group = clusterViewOf(js)?.metaStatus().group;
      if (group !== undefined) metaGroups.add(group);
    }
  };
  hookObserver();

  let cached: AccountGroupStatus[] | null = null;
  const groups = (): AccountGroupStatus[] => {
    hookObserver(); // clustered JetStream may have come up after the registry
    return (cached ??= groupStatuses(jetStreams));
  };
  const labelsOf = (g: AccountGroupStatus) => ({ group: g.group, kind: g.kind, stream: g.stream ?? '', account: g.account });
  const texts: TextFamily[] = [];
  const groupGauge = (name: string, help: string, read: (g: AccountGroupStatus) => number): void => {
    texts.push(textFamily(name, help, 'gauge', (emit) => {
      for (const g of groups()) emit(labelsOf(g), read(g));
    }));
  };

  texts.push(
    textFamily('flotilla_raft_group_role', 'Raft role of this node in the group: 1 for the current role, 0 for the others.', 'gauge', (emit) => {
      for (const g of groups()) for (const role of ROLES) emit({ ...labelsOf(g), role }, g.role === role ? 1 : 0);
    }),
  );
  // The meta group's leader counts only while it is reachable (as /healthz and /jsz see it): a cut-off node's
  // Raft state can still name the old leader.
  groupGauge('flotilla_raft_group_has_leader', '1 when this node knows a (reachable, for the meta group) leader for the group.', (g) =>
    g.leader === 0 ? 0 : g.kind === 'meta' ? (g.metaLeaderName() ? 1 : 0) : 1,
  );
  groupGauge('flotilla_raft_group_term', 'Current Raft term.', (g) => g.term);
  groupGauge('flotilla_raft_group_commit_index', 'Highest log index known committed.', (g) => g.commit);
  groupGauge('flotilla_raft_group_applied_index', 'Highest log index applied to the state machine.', (g) => g.applied);
  groupGauge('flotilla_raft_group_apply_lag_entries', 'Committed entries not yet applied to the state machine (commit - applied).', (g) =>
    Math.max(0, g.commit - g.applied),
  );
  groupGauge('flotilla_raft_group_peers', 'Voters of the group (this node included).', (g) => g.replicas.length + 1);
  texts.push(
    textFamily('flotilla_raft_group_leader_changes_total', 'Leader changes this node observed in the group.', 'counter', (emit) => {
      for (const g of groups()) emit(labelsOf(g), g.leaderChanges);
    }),
  );
  const replicaGauge = (name: string, help: string, read: (r: AccountGroupStatus['replicas'][number]) => number): void => {
    texts.push(textFamily(name, help, 'gauge', (emit) => {
      for (const g of groups()) for (const r of g.replicas) emit({ ...labelsOf(g), peer: r.name }, read(r));
    }));
  };
  replicaGauge('flotilla_raft_replica_lag_entries', 'Entries the peer is behind this leader (0 on followers, where it is unknown).', (r) => r.lag);
  replicaGauge('flotilla_raft_replica_current', '1 when the peer is caught up and recently heard from.', (r) => (r.current ? 1 : 0));
  replicaGauge('flotilla_raft_replica_offline', '1 when the peer is known to be down.', (r) => (r.offline ? 1 : 0));
  replicaGauge('flotilla_raft_replica_last_active_seconds', 'Seconds since the peer was last heard from in this group.', (r) => r.activeAgoMs / 1000);

  registerPeerMetrics(registry, server);
  return {
    texts,
    newScrape: () => (cached = null),
    stop: () => {
      setFsyncObserver(null);
      for (const { js } of jetStreams) js.clusterObserver = undefined;
    },
  };
}

/** A group's status with the JetStream account it belongs to, and (meta) that account's reachable leader. */
interface AccountGroupStatus extends GroupStatus {
  account: string;
  metaLeaderName(): string;
}

/** Every account's meta group, then its stream groups by name; at most MAX_GROUPS_EXPORTED in all. */
function groupStatuses(jetStreams: readonly AccountJetStream[]): AccountGroupStatus[] {
  const out: AccountGroupStatus[] = [];
  const views = jetStreams.flatMap(({ account, js }) => {
    const view = clusterViewOf(js);
    return view === null ? [] : [{ account, view }];
  });
  const leaderOf = (view: ClusterView) => () => view.metaLeaderName();
  for (const { account, view } of views) out.push({ ...view.metaStatus(), account, metaLeaderName: leaderOf(view) });
  for (const { account, view } of views) {
    const replicas = view.replicas().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const r of replicas) {
      if (out.length >= MAX_GROUPS_EXPORTED) return out;
      out.push({ ...r.status(), account, metaLeaderName: leaderOf(view) });
    }
  }
  return out;
}

/** Per peer link traffic (packages/cluster ClusterNode.peerTraffic), labelled by the peer's server name. */
function registerPeerMetrics(registry: Registry, server: FlotillaServer): void {
  const traffic = () => server.cluster?.node.peerTraffic() ?? [];
  const counter = (name: string, help: string, read: (t: ReturnType<typeof traffic>[number]) => number): void => {
    new Counter({
      name,
      help,
      labelNames: ['peer'],
      registers: [registry],
      collect() {
        this.reset();
        for (const t of traffic()) this.inc({ peer: t.serverName }, read(t));
      },
    });
  };
  new Gauge({
    name: 'flotilla_peer_connected',
    help: '1 while a cluster link to the peer is up.',
    labelNames: ['peer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const t of traffic()) this.set({ peer: t.serverName }, t.connected ? 1 : 0);
    },
  });
  new Gauge({
    name: 'flotilla_peer_last_received_seconds',
    help: 'Seconds since anything was received from the peer.',
    labelNames: ['peer'],
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const t of traffic()) if (t.lastReceivedMs > 0) this.set({ peer: t.serverName }, (now - t.lastReceivedMs) / 1000);
    },
  });
  counter('flotilla_peer_sent_messages_total', 'Frames (routed messages, Raft messages, interest, pings) sent to the peer over gRPC.', (t) => t.framesSent);
  counter('flotilla_peer_received_messages_total', 'Frames received from the peer over gRPC.', (t) => t.framesReceived);
  counter('flotilla_peer_sent_bytes_total', 'Frame bytes sent to the peer (estimated from frame contents, before gRPC framing).', (t) => t.bytesSent);
  counter('flotilla_peer_received_bytes_total', 'Frame bytes received from the peer (estimated, as sent).', (t) => t.bytesReceived);
  counter('flotilla_peer_reconnects_total', 'Links to the peer re-established after it was lost.', (t) => t.reconnects);
}
