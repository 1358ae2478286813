import { expect, it } from 'vitest';
import { EntryType, NONE } from '@flotilla/raft';
import { MetaState, encodeMetaEntry, type MetaEntry } from '../src/cluster/meta-state.js';
import { withFounder } from '../src/cluster/clustered-catalogue.js';
import type { StreamAssignment } from '../src/cluster/cluster-contracts.js';

let index = 0;
const entry = (e: MetaEntry) => ({ index: ++index, term: 1, type: EntryType.Normal, data: encodeMetaEntry(e) });

it('SERVER.REMOVE marks a node removed, and the mark survives a snapshot', () => {
  const s = new MetaState();
  s.apply(entry({ op: 'node', node: { name: 'n2', raftNodeId: 2, serverId: 'ID2' } }));
  expect(s.isRemoved(2)).toBe(false);
  s.apply(entry({ op: 'removeNode', raftNodeId: 2 }));
  expect(s.isRemoved(2)).toBe(true);
  const copy = new MetaState();
  copy.restore(s.snapshot());
  expect(copy.isRemoved(2)).toBe(true);
  expect(copy.isRemoved(3)).toBe(false);
  // A snapshot from before removals existed restores with none.
  const old = new MetaState();
  old.restore(new TextEncoder().encode(JSON.stringify({ assignments: [], nodes: [] })));
  expect(old.isRemoved(2)).toBe(false);
});

it('a group whose peers change is founded by nobody again; unchanged peers keep the default', () => {
  const a = { peers: [3, 1] } as unknown as StreamAssignment;
  expect(withFounder(a, [3, 1])).toEqual({ peers: [3, 1] });
  expect(withFounder(a, [2])).toEqual({ peers: [2], founder: NONE });
  expect(withFounder(a, [1, 3])).toEqual({ peers: [1, 3], founder: NONE });
});
