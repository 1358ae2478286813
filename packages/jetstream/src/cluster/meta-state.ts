// The meta group's replicated state: the cluster's catalogue (one StreamAssignment per stream) and the node
// list. Entries and snapshots are JSON: catalogue changes are rare, so readability beats compactness.
import type { Entry, NodeId, StateMachine } from '@flotilla/raft';
import type { StreamAssignment } from './cluster-contracts.js';

/** A node the meta group has heard of (kept after it goes away, so names stay resolvable). */
export interface MetaNode {
  name: string;
  raftNodeId: NodeId;
  serverId: string;
}

export type MetaEntry =
  | { op: 'assign'; assignment: StreamAssignment }
  | { op: 'unassign'; name: string; group: string }
  | { op: 'node'; node: MetaNode }
  /** SERVER.REMOVE: the node is peered out of the meta group and takes no replicas any more. */
  | { op: 'removeNode'; raftNodeId: NodeId };

interface MetaSnapshot {
  assignments: StreamAssignment[];
  nodes: MetaNode[];
  removed?: NodeId[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeMetaEntry(entry: MetaEntry): Uint8Array {
  return encoder.encode(JSON.stringify(entry));
}

export class MetaState implements StateMachine {
  private readonly byName = new Map<string, StreamAssignment>();
  private readonly nodeById = new Map<NodeId, MetaNode>();
  private readonly removed = new Set<NodeId>();
  /** Called after every applied entry and restore, so replicas follow the catalogue. */
  onChange: (() => void) | null = null;

  apply(entry: Entry): unknown {
    const e = JSON.parse(decoder.decode(entry.data)) as MetaEntry;
    let result: unknown;
    switch (e.op) {
      case 'assign':
        this.byName.set(e.assignment.config.name, e.assignment);
        result = e.assignment;
        break;
      case 'unassign': {
        // Only the incarnation named: a delete that raced a re-create must not remove the new stream.
        const cur = this.byName.get(e.name);
        result = cur !== undefined && cur.group === e.group;
        if (result) this.byName.delete(e.name);
        break;
      }
      case 'node':
        this.nodeById.set(e.node.raftNodeId, e.node);
        break;
      case 'removeNode':
        this.removed.add(e.raftNodeId);
        break;
    }
    this.onChange?.();
    return result;
  }

  snapshot(): Uint8Array {
    const snap: MetaSnapshot = { assignments: this.assignments(), nodes: this.nodes(), removed: [...this.removed] };
    return encoder.encode(JSON.stringify(snap));
  }

  restore(data: Uint8Array): void {
    const snap = JSON.parse(decoder.decode(data)) as MetaSnapshot;
    this.byName.clear();
    this.nodeById.clear();
    for (const a of snap.assignments) this.byName.set(a.config.name, a);
    for (const n of snap.nodes) this.nodeById.set(n.raftNodeId, n);
    this.removed.clear();
    for (const id of snap.removed ?? []) this.removed.add(id);
    this.onChange?.();
  }

  assignment(name: string): StreamAssignment | undefined {
    return this.byName.get(name);
  }

  /** Every assignment, sorted by stream name. */
  assignments(): StreamAssignment[] {
    return [...this.byName.values()].sort((a, b) => compare(a.config.name, b.config.name));
  }

  get streamCount(): number {
    return this.byName.size;
  }

  node(id: NodeId): MetaNode | undefined {
    return this.nodeById.get(id);
  }

  /** Peered out by SERVER.REMOVE. */
  isRemoved(id: NodeId): boolean {
    return this.removed.has(id);
  }

  nodes(): MetaNode[] {
    return [...this.nodeById.values()].sort((a, b) => compare(a.name, b.name));
  }

  /** Replicas per node, for placement. */
  replicaCounts(): Map<NodeId, number> {
    const counts = new Map<NodeId, number>();
    for (const a of this.byName.values()) for (const p of a.peers) counts.set(p, (counts.get(p) ?? 0) + 1);
    return counts;
  }

  /** Preferred leaderships per node (first peer), the placement tie-breaker. */
  preferredLeaderCounts(): Map<NodeId, number> {
    const counts = new Map<NodeId, number>();
    for (const a of this.byName.values()) {
      const first = a.peers[0];
      if (first !== undefined) counts.set(first, (counts.get(first) ?? 0) + 1);
    }
    return counts;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
