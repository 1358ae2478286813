import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entry, Snapshot } from '@flotilla/raft';
import { LevelRaftLogStore } from '@flotilla/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const enc = new TextEncoder();
const dec = new TextDecoder();
const e = (index: number, term: number, text = `v${index}`): Entry => ({ index, term, type: 0, data: enc.encode(text) });
const texts = (entries: readonly Entry[]) => entries.map((x) => `${x.index}:${x.term}:${dec.decode(x.data)}`);

let dir: string;
let store: LevelRaftLogStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
  store = await LevelRaftLogStore.open({ dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function reopen(): Promise<LevelRaftLogStore> {
  await store.close();
  store = await LevelRaftLogStore.open({ dir });
  return store;
}

const write = (group: string, entries: Entry[], hardState = null as null | { term: number; vote: number; commit: number }, snapshot: Snapshot | null = null) =>
  store.write({ group, entries, hardState, snapshot, sync: true });

describe('LevelRaftLogStore', () => {
  it('starts empty', async () => {
    expect(await store.load('g')).toEqual({ hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] });
  });

  it('persists entries and hard state across a reopen', async () => {
    await write('g', [e(1, 1), e(2, 1)], { term: 1, vote: 3, commit: 1 });
    await write('g', [e(3, 2)], { term: 2, vote: 0, commit: 2 });
    await reopen();
    const state = await store.load('g');
    expect(texts(state.entries)).toEqual(['1:1:v1', '2:1:v2', '3:2:v3']);
    expect(state.hardState).toEqual({ term: 2, vote: 0, commit: 2 });
  });

  const truncations = [
    { name: 'at a block boundary', from: 4, expected: ['1:1:v1', '2:1:v2', '3:1:v3', '4:3:x4'] },
    { name: 'inside a block', from: 2, expected: ['1:1:v1', '2:3:x2'] },
    { name: 'at the first entry', from: 1, expected: ['1:3:x1'] },
  ];
  for (const t of truncations) {
    it(`truncates a conflicting suffix ${t.name}`, async () => {
      await write('g', [e(1, 1), e(2, 1), e(3, 1)]);
      await write('g', [e(4, 1), e(5, 1)]);
      await write('g', [e(t.from, 3, `x${t.from}`)]);
      expect(texts((await store.load('g')).entries)).toEqual(t.expected);
      await reopen();
      expect(texts((await store.load('g')).entries)).toEqual(t.expected);
      await write('g', [e(t.from + 1, 3, 'next')]);
      expect(texts((await store.load('g')).entries).at(-1)).toBe(`${t.from + 1}:3:next`);
    });
  }

  it('compacts the prefix after a snapshot', async () => {
    await write('g', [e(1, 1), e(2, 1)]);
    await write('g', [e(3, 1), e(4, 1)]);
    await write('g', [e(5, 2)]);
    const snap: Snapshot = { meta: { index: 3, term: 1, config: { voters: [1, 2, 3], learners: [] } }, data: enc.encode('image') };
    await store.compact('g', snap);
    await reopen();
    const state = await store.load('g');
    expect(state.snapshot?.meta).toEqual(snap.meta);
    expect(dec.decode(state.snapshot!.data)).toBe('image');
    expect(texts(state.entries)).toEqual(['4:1:v4', '5:2:v5']);
  });

  it('replaces the log with a snapshot received from the leader', async () => {
    await write('g', [e(1, 1), e(2, 1), e(3, 1)]);
    const snap: Snapshot = { meta: { index: 10, term: 4, config: { voters: [1], learners: [] } }, data: enc.encode('s') };
    await store.write({ group: 'g', snapshot: snap, entries: [e(11, 4)], hardState: { term: 4, vote: 0, commit: 10 }, sync: true });
    await reopen();
    const state = await store.load('g');
    expect(state.snapshot?.meta.index).toBe(10);
    expect(texts(state.entries)).toEqual(['11:4:v11']);
    expect(state.hardState.commit).toBe(10);
  });

  it('keeps groups apart', async () => {
    await Promise.all([write('a', [e(1, 1, 'a1')]), write('ab', [e(1, 1, 'ab1'), e(2, 1, 'ab2')])]);
    expect(texts((await store.load('a')).entries)).toEqual(['1:1:a1']);
    expect(texts((await store.load('ab')).entries)).toEqual(['1:1:ab1', '2:1:ab2']);
  });

  it('group-commits writes issued together into one synced batch', async () => {
    // A group's first write scans LevelDB for its blocks (real I/O, which under load can straddle a tick);
    // once known, writes issued in one tick must share one synced batch.
    await Promise.all(Array.from({ length: 50 }, (_, i) => write(`g${i}`, [e(1, 1)], { term: 1, vote: 0, commit: 0 })));
    const before = { ...store.stats };
    await Promise.all(Array.from({ length: 50 }, (_, i) => write(`g${i}`, [e(2, 1), e(3, 1)], { term: 1, vote: 0, commit: 1 })));
    expect(store.stats.writes - before.writes).toBe(50);
    expect(store.stats.syncedBatches - before.syncedBatches).toBe(1);
  });

  it('orders overlapping writes of one group', async () => {
    await Promise.all([write('g', [e(1, 1), e(2, 1), e(3, 1)]), write('g', [e(2, 2, 'new')]), write('g', [e(3, 2)])]);
    expect(texts((await store.load('g')).entries)).toEqual(['1:1:v1', '2:2:new', '3:2:v3']);
  });
});

describe('LevelRaftLogStore under RaftNode', () => {
  it('three nodes commit batches, restart from their LevelDB logs and keep every acknowledged write', async () => {
    const { InMemoryNetwork, RaftNode } = await import('@flotilla/raft');
    const ids = [1, 2, 3];
    const dirs = await Promise.all(ids.map(() => mkdtemp(join(tmpdir(), 'raft-node-log-'))));
    const machines = ids.map(() => ({ values: [] as string[] }));
    const startAll = async (net: InstanceType<typeof InMemoryNetwork>) => {
      const stores = await Promise.all(dirs.map((d) => LevelRaftLogStore.open({ dir: d })));
      const nodes = await Promise.all(
        ids.map((id, i) =>
          RaftNode.start({
            group: 'stream-A',
            id,
            peers: ids,
            store: stores[i]!,
            transport: net.transport(),
            tickMs: 5,
            snapshotEveryEntries: 5,
            stateMachine: {
              apply: (entry) => machines[i]!.values.push(dec.decode(entry.data)),
              snapshot: () => enc.encode(JSON.stringify(machines[i]!.values)),
              restore: (data) => {
                machines[i]!.values = JSON.parse(dec.decode(data)) as string[];
              },
            },
          }),
        ),
      );
      return { stores, nodes };
    };
    const waitFor = async (fn: () => boolean) => {
      for (let i = 0; i < 1000 && !fn(); i++) await new Promise((r) => setTimeout(r, 5));
      expect(fn()).toBe(true);
    };
    try {
      let run = await startAll(new InMemoryNetwork());
      await waitFor(() => run.nodes.some((n) => n.isLeader()));
      let leader = run.nodes.find((n) => n.isLeader())!;
      for (let b = 0; b < 12; b++) await leader.proposeBatch(Array.from({ length: 50 }, (_, i) => enc.encode(`a${b}-${i}`)));
      await leader.propose(enc.encode('single'));
      await waitFor(() => machines.every((m) => m.values.length === 601));
      await Promise.all(run.nodes.map((n) => n.stop()));
      await Promise.all(run.stores.map((s) => s.close()));
      for (const m of machines) m.values = [];
      run = await startAll(new InMemoryNetwork());
      await waitFor(() => run.nodes.some((n) => n.isLeader()));
      leader = run.nodes.find((n) => n.isLeader())!;
      await leader.propose(enc.encode('after-restart'));
      await waitFor(() => machines.every((m) => m.values.at(-1) === 'after-restart'));
      for (const m of machines) {
        expect(m.values).toHaveLength(602);
        expect(m.values[0]).toBe('a0-0');
        expect(m.values[600]).toBe('single');
      }
      await Promise.all(run.nodes.map((n) => n.stop()));
      await Promise.all(run.stores.map((s) => s.close()));
    } finally {
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    }
  });
});
