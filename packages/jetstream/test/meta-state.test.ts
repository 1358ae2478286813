import { describe, it, expect } from 'vitest';
import { EntryType, type Entry } from '@flotilla/raft';
import { normaliseStreamConfig, parseStreamConfigRequest } from '@flotilla/jetstream';
import { MetaState, encodeMetaEntry, type MetaEntry } from '../src/cluster/meta-state.js';
import type { StreamAssignment } from '../src/cluster/cluster-contracts.js';

let index = 0;
function entry(e: MetaEntry): Entry {
  return { index: ++index, term: 1, type: EntryType.Normal, data: encodeMetaEntry(e) };
}

function assignment(name: string, group: string, peers: number[]): StreamAssignment {
  const config = normaliseStreamConfig(parseStreamConfigRequest({ name, subjects: [`${name}.>`], num_replicas: peers.length }));
  return { config, created: '2026-11-30T00:00:00Z', group, peers };
}

describe('meta state machine', () => {
  it('applies assignments, node records and removals, and reports changes', () => {
    const s = new MetaState();
    let changes = 0;
    s.onChange = () => changes++;
    const a = assignment('ORDERS', 'S-ORDERS-1', [3, 1, 2]);
    expect(s.apply(entry({ op: 'assign', assignment: a }))).toEqual(a);
    s.apply(entry({ op: 'assign', assignment: assignment('AUDIT', 'S-AUDIT-1', [1]) }));
    s.apply(entry({ op: 'node', node: { name: 'n1', raftNodeId: 1, serverId: 'ID1' } }));
    expect(changes).toBe(3);
    expect(s.assignments().map((x) => x.config.name)).toEqual(['AUDIT', 'ORDERS']);
    expect(s.assignment('ORDERS')?.peers).toEqual([3, 1, 2]);
    expect(s.node(1)).toEqual({ name: 'n1', raftNodeId: 1, serverId: 'ID1' });
    expect(Object.fromEntries(s.replicaCounts())).toEqual({ 1: 2, 2: 1, 3: 1 });
    expect(Object.fromEntries(s.preferredLeaderCounts())).toEqual({ 1: 1, 3: 1 });
    // A delete naming an older incarnation leaves the current stream alone.
    expect(s.apply(entry({ op: 'unassign', name: 'ORDERS', group: 'S-ORDERS-0' }))).toBe(false);
    expect(s.streamCount).toBe(2);
    expect(s.apply(entry({ op: 'unassign', name: 'ORDERS', group: 'S-ORDERS-1' }))).toBe(true);
    expect(s.assignments().map((x) => x.config.name)).toEqual(['AUDIT']);
  });

  it('restores exactly what it snapshotted', () => {
    const s = new MetaState();
    s.apply(entry({ op: 'assign', assignment: assignment('A', 'S-A-1', [1, 2, 3]) }));
    s.apply(entry({ op: 'node', node: { name: 'n2', raftNodeId: 2, serverId: 'ID2' } }));
    const copy = new MetaState();
    let restored = 0;
    copy.onChange = () => restored++;
    copy.apply(entry({ op: 'assign', assignment: assignment('STALE', 'S-STALE-1', [1]) }));
    copy.restore(s.snapshot());
    expect(restored).toBe(2);
    expect(copy.assignments()).toEqual(s.assignments());
    expect(copy.nodes()).toEqual([{ name: 'n2', raftNodeId: 2, serverId: 'ID2' }]);
    expect(copy.assignment('STALE')).toBeUndefined();
  });
});
