// What clustered JetStream gets from this node's cluster links: identity, the peers (linked now or seen
// since start), the expected cluster size for the meta bootstrap, one durable Raft log for every group on
// this node (`<storeDir>/raft`) and the gRPC Raft transport.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { ClusterEnvironment, ClusterPeer } from '@flotilla/jetstream';
import { LevelRaftLogStore } from '@flotilla/store';
import type { ClusterRouting } from './cluster-routing.js';
import { clusterTestKnobsFrom, raftLogWalOptionsFrom } from './test-knobs.js';

export interface JetStreamClusterEnvironment extends ClusterEnvironment {
  /** Closes the Raft log store (after JetStream stopped). */
  close(): Promise<void>;
}

export async function openJetStreamEnvironment(
  routing: ClusterRouting,
  storeDir: string,
  routes: readonly string[],
  serverName: string,
  uniqueTag?: string,
): Promise<JetStreamClusterEnvironment> {
  const node = routing.node;
  const raftStore = await LevelRaftLogStore.open({ ...raftLogWalOptionsFrom(), dir: join(storeDir, 'raft') });
  const seen = new Map<string, Omit<ClusterPeer, 'active'>>();
  const remember = (p: { serverName: string; raftNodeId: number; serverId: string; tags: readonly string[] }): void => {
    seen.set(p.serverName, { name: p.serverName, raftNodeId: p.raftNodeId, serverId: p.serverId, tags: [...p.tags] });
  };
  for (const p of node.peers()) remember(p);
  routing.addPeerListener((p) => remember(p));
  const self = { name: serverName, raftNodeId: node.raftNodeId, serverId: node.serverId, tags: [...routing.tags] };
  return {
    get clusterName(): string {
      return node.clusterName;
    },
    self,
    peers(): ClusterPeer[] {
      const linked = new Set(node.peers().map((p) => p.serverId));
      const out: ClusterPeer[] = [{ ...self, active: true }];
      for (const p of seen.values()) if (p.name !== self.name) out.push({ ...p, active: linked.has(p.serverId) });
      return out;
    },
    onPeersChanged(listener: () => void): () => void {
      return routing.addPeerListener(() => listener());
    },
    ...(uniqueTag !== undefined ? { uniqueTag } : {}),
    expectedClusterSize: await expectedClusterSize(routes, node.port, node.clusterUrl),
    raftStore,
    transport: routing.raftTransport,
    testKnobs: clusterTestKnobsFrom(),
    close: () => raftStore.close(),
  };
}

/** A route's host name is resolved for at most this long when checking whether it names this node. */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Self plus the distinct configured routes that are not this node (route lists often include it, by IP or
 * by a DNS name such as a StatefulSet pod's, which is resolved and compared with this host's addresses).
 */
export async function expectedClusterSize(routes: readonly string[], ownPort: number, ownUrl: string): Promise<number> {
  // Checked all at once: each may wait for a DNS answer.
  const checked = await Promise.all(
    routes.map(async (r) => {
      const hostPort = hostPortOf(r);
      return hostPort === null || (await isSelf(hostPort, ownPort, ownUrl)) ? null : `${hostPort.host}:${hostPort.port}`;
    }),
  );
  return 1 + new Set(checked.filter((x): x is string => x !== null)).size;
}

function hostPortOf(route: string): { host: string; port: number } | null {
  try {
    const u = new URL(route.includes('://') ? route : `nats://${route}`);
    const port = Number(u.port);
    if (!Number.isInteger(port) || port <= 0) return null;
    return { host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port };
  } catch {
    return null;
  }
}

async function isSelf(r: { host: string; port: number }, ownPort: number, ownUrl: string): Promise<boolean> {
  if (ownPort <= 0 || r.port !== ownPort) return false;
  const advertised = ownUrl.slice(0, ownUrl.lastIndexOf(':')).replace(/^\[|\]$/g, '').toLowerCase();
  // A StatefulSet pod lists every pod's route, its own by DNS name: `<pod>.<service>[.<ns>…]`, pod = hostname.
  const host = hostname().toLowerCase();
  const local = localAddresses();
  if (r.host === advertised || local.has(r.host) || r.host === host || r.host.startsWith(`${host}.`)) return true;
  if (isIP(r.host) !== 0) return false;
  // Any other name: this node if it resolves to one of this host's addresses.
  const addresses = await Promise.race([
    lookup(r.host, { all: true }).catch(() => []),
    new Promise<[]>((resolve) => setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS).unref()),
  ]);
  return addresses.some((a) => local.has(a.address.toLowerCase()));
}

function localAddresses(): Set<string> {
  const out = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::1', '::']);
  for (const addrs of Object.values(networkInterfaces())) for (const a of addrs ?? []) out.add(a.address.toLowerCase());
  return out;
}
