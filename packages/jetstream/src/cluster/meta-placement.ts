// Where a stream's replicas go: the least-loaded active nodes (by replicas held, then by preferred
// leaderships, then by id so every tie breaks the same way), the first being the preferred leader.
import type { NodeId } from '@flotilla/raft';

export interface NodeLoad {
  /** replicas per node */
  replicas: ReadonlyMap<NodeId, number>;
  /** streams whose preferred leader each node is */
  leaders: ReadonlyMap<NodeId, number>;
}

function byLoad(load: NodeLoad): (a: NodeId, b: NodeId) => number {
  return (a, b) =>
    (load.replicas.get(a) ?? 0) - (load.replicas.get(b) ?? 0) ||
    (load.leaders.get(a) ?? 0) - (load.leaders.get(b) ?? 0) ||
    a - b;
}

/**
 * With `unique_tag`: a node's failure domain (its value of the unique tag); no two replicas of one stream share
 * one. `taken`: domains the stream's kept replicas already occupy.
 */
export interface Zones {
  zoneOf(id: NodeId): string | undefined;
  taken?: ReadonlySet<string>;
}

/** `count` distinct nodes out of `candidates`, preferred leader first; null when too few candidates. */
export function placeReplicas(count: number, candidates: readonly NodeId[], load: NodeLoad, zones?: Zones): NodeId[] | null {
  const unique = [...new Set(candidates)];
  if (count < 1 || unique.length < count) return null;
  const sorted = unique.sort(byLoad(load));
  let chosen: NodeId[];
  if (zones === undefined) chosen = sorted.slice(0, count);
  else {
    // Least loaded first, skipping a node whose domain is already used.
    const used = new Set(zones.taken ?? []);
    chosen = [];
    for (const id of sorted) {
      if (chosen.length === count) break;
      const zone = zones.zoneOf(id);
      if (zone === undefined || used.has(zone)) continue;
      used.add(zone);
      chosen.push(id);
    }
    if (chosen.length < count) return null;
  }
  // The preferred leader is the chosen node leading the fewest streams.
  const leader = [...chosen].sort((a, b) => (load.leaders.get(a) ?? 0) - (load.leaders.get(b) ?? 0) || a - b)[0]!;
  return [leader, ...chosen.filter((p) => p !== leader)];
}

/**
 * A new replica count for an existing peer set: grows with the least-loaded free candidates, shrinks by
 * dropping the last peers that are not `keep` (the current leader). Null when it cannot grow far enough.
 */
export function resizePeers(
  peers: readonly NodeId[],
  count: number,
  candidates: readonly NodeId[],
  load: NodeLoad,
  keep: NodeId,
  zones?: Zones,
): NodeId[] | null {
  if (count === peers.length) return [...peers];
  if (count < peers.length) {
    const kept = peers.filter((p) => p === keep);
    for (const p of peers) if (kept.length < count && p !== keep) kept.push(p);
    // Keep the placement order (preferred leader first) among the survivors.
    return peers.filter((p) => kept.includes(p));
  }
  const free = candidates.filter((c) => !peers.includes(c));
  const added = placeReplicas(count - peers.length, free, load, zonesBesides(zones, peers));
  return added === null ? null : [...peers, ...added.sort(byLoad(load))];
}

/**
 * STREAM.PEER.REMOVE: `removed` leaves; a free candidate takes its place when there is one, else the group
 * shrinks. Null when nothing would be left.
 */
export function replacePeer(
  peers: readonly NodeId[],
  removed: NodeId,
  candidates: readonly NodeId[],
  load: NodeLoad,
  zones?: Zones,
): NodeId[] | null {
  const rest = peers.filter((p) => p !== removed);
  const free = candidates.filter((c) => c !== removed && !peers.includes(c));
  const replacement = placeReplicas(1, free, load, zonesBesides(zones, rest));
  if (replacement !== null) return [...rest, replacement[0]!];
  return rest.length > 0 ? rest : null;
}

/**
 * Re-placement under a (new) placement: the current peers that still `fit` stay (one per domain), the rest are
 * replaced by the least-loaded fitting candidates, `keep` (the leader) staying when it fits. Null when too few fit.
 */
export function replacePeers(
  peers: readonly NodeId[],
  count: number,
  candidates: readonly NodeId[],
  load: NodeLoad,
  keep: NodeId,
  fits: (id: NodeId) => boolean,
  zones?: Zones,
): NodeId[] | null {
  const kept: NodeId[] = [];
  const used = new Set<string>();
  const ordered = [...peers.filter((p) => p === keep), ...peers.filter((p) => p !== keep)];
  for (const p of ordered) {
    if (!fits(p)) continue;
    const zone = zones?.zoneOf(p);
    if (zones !== undefined && (zone === undefined || used.has(zone))) continue;
    if (zone !== undefined) used.add(zone);
    kept.push(p);
  }
  const stay = peers.filter((p) => kept.includes(p));
  if (stay.length >= count) return resizePeers(stay, count, [], load, keep);
  const free = candidates.filter((c) => !peers.includes(c) && fits(c));
  const added = placeReplicas(count - stay.length, free, load, zonesBesides(zones, stay));
  return added === null ? null : [...stay, ...added.sort(byLoad(load))];
}

function zonesBesides(zones: Zones | undefined, peers: readonly NodeId[]): Zones | undefined {
  if (zones === undefined) return undefined;
  const taken = new Set(zones.taken ?? []);
  for (const p of peers) {
    const z = zones.zoneOf(p);
    if (z !== undefined) taken.add(z);
  }
  return { zoneOf: (id) => zones.zoneOf(id), taken };
}

/**
 * With accounts each account has its own catalogue (meta group), and every node follows them all: placement
 * balances the nodes over every account's streams, as nats-server's one catalogue does, rather than each
 * account filling the same nodes first. One per node, shared by its accounts' environments.
 */
export class SharedPlacementLoad {
  private readonly sources = new Map<string, () => NodeLoad>();

  /** The catalogue of `account` (a later one for the same account replaces it). */
  register(account: string, load: () => NodeLoad): void {
    this.sources.set(account, load);
  }

  total(): NodeLoad {
    const replicas = new Map<NodeId, number>();
    const leaders = new Map<NodeId, number>();
    for (const source of this.sources.values()) {
      const l = source();
      for (const [id, n] of l.replicas) replicas.set(id, (replicas.get(id) ?? 0) + n);
      for (const [id, n] of l.leaders) leaders.set(id, (leaders.get(id) ?? 0) + n);
    }
    return { replicas, leaders };
  }
}
