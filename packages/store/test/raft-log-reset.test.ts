// RaftLogStore.reset: a group's snapshot and entries go, the given hard state stays, in one atomic batch; other
// groups are untouched; later writes append to the empty log. With and without the write-ahead file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entry, Snapshot } from '@flotilla/raft';
import { LevelRaftLogStore } from '@flotilla/store';
import { afterEach, describe, expect, it } from 'vitest';

const enc = new TextEncoder();
const e = (index: number, term: number): Entry => ({ index, term, type: 0, data: enc.encode(`v${index}`) });
const snapshot: Snapshot = { meta: { index: 5, term: 2, config: { voters: [1, 2, 3], learners: [] } }, data: enc.encode('stand-in') };

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

for (const wal of [true, false]) {
  describe(`LevelRaftLogStore.reset (wal ${wal ? 'on' : 'off'})`, () => {
    it('leaves an empty log with the given hard state, across a reopen, other groups untouched', async () => {
      dir = await mkdtemp(join(tmpdir(), 'raft-log-reset-'));
      let store = await LevelRaftLogStore.open({ dir, wal });
      await store.write({ group: 'g', snapshot, entries: [], hardState: { term: 3, vote: 2, commit: 5 }, sync: true });
      await store.write({ group: 'g', snapshot: null, entries: [e(6, 3), e(7, 3)], hardState: { term: 3, vote: 2, commit: 7 }, sync: true });
      await store.write({ group: 'other', snapshot: null, entries: [e(1, 1)], hardState: { term: 1, vote: 1, commit: 1 }, sync: true });
      await store.reset('g', { term: 4, vote: 0, commit: 0 });
      expect(await store.load('g')).toEqual({ hardState: { term: 4, vote: 0, commit: 0 }, snapshot: null, entries: [] });
      // The next entries land in the empty log (a leader's snapshot or entries from index 1).
      await store.write({ group: 'g', snapshot: null, entries: [e(1, 1)], hardState: null, sync: true });
      await store.close();
      store = await LevelRaftLogStore.open({ dir, wal });
      try {
        const g = await store.load('g');
        expect(g.hardState).toEqual({ term: 4, vote: 0, commit: 0 });
        expect(g.snapshot).toBeNull();
        expect(g.entries.map((x) => [x.index, x.term])).toEqual([[1, 1]]);
        const other = await store.load('other');
        expect(other.hardState).toEqual({ term: 1, vote: 1, commit: 1 });
        expect(other.entries.map((x) => x.index)).toEqual([1]);
      } finally {
        await store.close();
      }
    });
  });
}
