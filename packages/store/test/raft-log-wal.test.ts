import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Entry, HardState } from '@flotilla/raft';
import { LevelRaftLogStore, type LevelRaftLogStoreOptions } from '@flotilla/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readWalRecord } from '../src/raft-log/wal-codec.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const e = (index: number, term = 1, text = `v${index}`): Entry => ({ index, term, type: 0, data: enc.encode(text) });
const texts = (entries: readonly Entry[]) => entries.map((x) => `${x.index}:${dec.decode(x.data)}`);
const hs = (commit: number): HardState => ({ term: 1, vote: 1, commit });

let root: string;
let open: LevelRaftLogStore[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'raft-log-wal-'));
  open = [];
});
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  await rm(root, { recursive: true, force: true });
});

async function openStore(dir: string, options: Partial<LevelRaftLogStoreOptions> = {}): Promise<LevelRaftLogStore> {
  const store = await LevelRaftLogStore.open({ ...options, dir });
  open.push(store);
  return store;
}

async function closeStore(store: LevelRaftLogStore): Promise<void> {
  open = open.filter((s) => s !== store);
  await store.close();
}

/** A copy of the directory taken while the store is open: what a crash of the process would leave. */
async function crashCopy(dir: string, name: string): Promise<string> {
  const copy = join(root, name);
  await cp(dir, copy, { recursive: true });
  await rm(join(copy, 'LOCK'), { force: true });
  return copy;
}

const write = (store: LevelRaftLogStore, from: number, count: number, sync = true) =>
  store.write({ group: 'g', entries: Array.from({ length: count }, (_, i) => e(from + i)), hardState: hs(from - 1), snapshot: null, sync });

async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'wal'))).filter((n) => n.endsWith('.wal')).map((n) => join(dir, 'wal', n));
}

/** End offsets of the valid records of a segment file. */
async function recordEnds(path: string): Promise<number[]> {
  const buf = await readFile(path);
  const ends: number[] = [];
  for (let o = 0, r = readWalRecord(buf, 0); r && ends.length < 100_000; o = r.end, r = readWalRecord(buf, o)) ends.push(r.end);
  return ends;
}

const expectedTexts = (last: number) => Array.from({ length: last }, (_, i) => `${i + 1}:v${i + 1}`);

describe('LevelRaftLogStore write-ahead file', () => {
  it('replays the WAL records LevelDB lost, after those it holds', async () => {
    const dir = join(root, 'a');
    const store = await openStore(dir);
    await write(store, 1, 3);
    await write(store, 4, 2);
    // load() waits for LevelDB to hold every batch so far. From here LevelDB misses every batch (as if its
    // unsynced writes were lost); only the WAL has them.
    expect((await store.load('g')).entries).toHaveLength(5);
    store.testHooks.skipLevelDb = true;
    await write(store, 6, 1, false);
    await write(store, 7, 2, false);
    await write(store, 9, 3);
    await write(store, 12, 1);
    const copy = await crashCopy(dir, 'a-crash');

    const reopened = await openStore(copy);
    expect(reopened.stats.replayedBatches).toBe(4);
    const state = await reopened.load('g');
    expect(texts(state.entries)).toEqual(expectedTexts(12));
    expect(state.hardState).toEqual(hs(11));
    // The replayed batches are in LevelDB now: a second reopen (WAL gone) keeps them.
    await write(reopened, 13, 1);
    await closeStore(reopened);
    const again = await openStore(copy, { wal: false });
    expect(again.stats.replayedBatches).toBe(0);
    expect(texts((await again.load('g')).entries)).toEqual(expectedTexts(13));
  });

  it('skips the records LevelDB already holds (a clean reopen replays nothing)', async () => {
    const dir = join(root, 'b');
    const store = await openStore(dir);
    for (let i = 1; i <= 20; i++) await write(store, i, 1, i % 3 === 0);
    expect((await store.load('g')).entries).toHaveLength(20);
    const copy = await crashCopy(dir, 'b-crash');
    await closeStore(store);
    const reopened = await openStore(copy);
    expect(reopened.stats.replayedBatches).toBe(0);
    expect(texts((await reopened.load('g')).entries)).toEqual(expectedTexts(20));
  });

  it('opening a WAL directory with wal: false still replays it, then drops the WAL', async () => {
    const dir = join(root, 'c');
    const store = await openStore(dir);
    await write(store, 1, 2);
    expect((await store.load('g')).entries).toHaveLength(2);
    store.testHooks.skipLevelDb = true;
    await write(store, 3, 2);
    const copy = await crashCopy(dir, 'c-crash');
    const reopened = await openStore(copy, { wal: false });
    expect(reopened.stats.replayedBatches).toBe(1);
    expect(texts((await reopened.load('g')).entries)).toEqual(expectedTexts(4));
    expect(await segmentFiles(copy)).toEqual([]);
  });

  describe('a torn WAL tail recovers the valid prefix', () => {
    /** Three synced batches (entries 1-3, 4-6, 7-9) that only the WAL holds; returns the crash copy's segment. */
    async function threeWalOnlyBatches(name: string): Promise<{ copy: string; segment: string; ends: number[] }> {
      const dir = join(root, name);
      const store = await openStore(dir);
      store.testHooks.skipLevelDb = true;
      await write(store, 1, 3);
      await write(store, 4, 3);
      await write(store, 7, 3);
      const copy = await crashCopy(dir, `${name}-crash`);
      const [segment, ...others] = await segmentFiles(copy);
      expect(others).toEqual([]);
      const ends = await recordEnds(segment!);
      expect(ends).toHaveLength(3);
      return { copy, segment: segment!, ends };
    }

    // What is done to the segment's bytes (`ends`: where each record ends), and how many batches replay.
    const torn: Array<{ name: string; corrupt: (buf: Buffer, ends: number[]) => Buffer; replayed: number }> = [
      { name: 'truncated inside the last record', corrupt: (buf, ends) => buf.subarray(0, ends[1]! + 11), replayed: 2 },
      {
        name: 'a bad crc in the last record',
        corrupt: (buf, ends) => {
          buf[ends[2]! - 1] ^= 0xff;
          return buf;
        },
        replayed: 2,
      },
      {
        name: 'garbage after the last record',
        corrupt: (buf, ends) => {
          for (let i = 0; i < 64; i++) buf[ends[2]! + i] = (i * 37 + 11) & 0xff;
          return buf;
        },
        replayed: 3,
      },
      {
        // Cut the middle record out: the third now follows the first, with a sequence gap.
        name: 'a record out of sequence ends the replay (a gap is never applied across)',
        corrupt: (buf, ends) => Buffer.concat([buf.subarray(0, ends[0]), buf.subarray(ends[1]!, ends[2]), Buffer.alloc(1024)]),
        replayed: 1,
      },
    ];
    for (const [i, c] of torn.entries()) {
      it(c.name, async () => {
        const { copy, segment, ends } = await threeWalOnlyBatches(`torn${i}`);
        await writeFile(segment, c.corrupt(await readFile(segment), ends));
        const store = await openStore(copy);
        expect(store.stats.replayedBatches).toBe(c.replayed);
        expect(texts((await store.load('g')).entries)).toEqual(expectedTexts(3 * c.replayed));
      });
    }
  });

  it('checkpoints rotate the segments and keep everything', async () => {
    const dir = join(root, 'rot');
    const store = await openStore(dir, { walSegmentBytes: 4096 });
    for (let i = 1; i <= 300; i++) await write(store, i, 1, i % 5 !== 0);
    expect(store.stats.checkpoints).toBeGreaterThan(5);
    expect(await segmentFiles(dir)).toHaveLength(1);
    const copy = await crashCopy(dir, 'rot-crash');
    const reopened = await openStore(copy, { walSegmentBytes: 4096 });
    expect(texts((await reopened.load('g')).entries)).toEqual(expectedTexts(300));
  });

  it('a record larger than a segment is written whole, then checkpointed', async () => {
    const dir = join(root, 'big');
    const store = await openStore(dir, { walSegmentBytes: 4096 });
    store.testHooks.skipLevelDb = true;
    const big = 'x'.repeat(20_000);
    await store.write({ group: 'g', entries: [e(1, 1, big), e(2)], hardState: hs(0), snapshot: null, sync: true });
    const copy = await crashCopy(dir, 'big-crash');
    const reopened = await openStore(copy, { walSegmentBytes: 4096 });
    expect(reopened.stats.replayedBatches).toBe(1);
    expect(texts((await reopened.load('g')).entries)).toEqual([`1:${big}`, '2:v2']);
    // The next batches find the segment full: a checkpoint first.
    await reopened.write({ group: 'g', entries: [e(3, 1, big)], hardState: hs(2), snapshot: null, sync: true });
    await reopened.write({ group: 'g', entries: [e(4)], hardState: hs(3), snapshot: null, sync: true });
    expect(reopened.stats.checkpoints).toBe(1);
    const last = await openStore(await crashCopy(copy, 'big-again'));
    expect(texts((await last.load('g')).entries)).toEqual([`1:${big}`, '2:v2', `3:${big}`, '4:v4']);
  });

  for (const step of ['level-sync', 'new-segment'] as const) {
    it(`a crash between checkpoint steps (after ${step}) loses nothing acknowledged`, async () => {
      const dir = join(root, `cp-${step}`);
      const store = await openStore(dir, { walSegmentBytes: 4096 });
      let acked = 0;
      store.testHooks.failCheckpointAfter = step;
      // Writes until the first checkpoint fails (bounded: a 4 KiB segment fills within ~40 of these writes).
      for (let i = 1; i <= 200; i++) {
        const ok = await write(store, i, 1).then(
          () => true,
          () => false,
        );
        if (!ok) break;
        acked = i;
      }
      expect(acked).toBeGreaterThan(5);
      expect(acked).toBeLessThan(200);
      // The store refuses further writes rather than write past a half-done checkpoint.
      await expect(write(store, acked + 1, 1)).rejects.toThrow();
      const copy = await crashCopy(dir, `cp-${step}-crash`);
      expect((await segmentFiles(copy)).length).toBe(step === 'level-sync' ? 1 : 2);
      const reopened = await openStore(copy, { walSegmentBytes: 4096 });
      expect(texts((await reopened.load('g')).entries)).toEqual(expectedTexts(acked));
      expect(await segmentFiles(copy)).toHaveLength(1);
      // It goes on from there, through more checkpoints, and keeps it all.
      for (let i = acked + 1; i <= acked + 100; i++) await write(reopened, i, 1);
      expect(reopened.stats.checkpoints).toBeGreaterThan(0);
      const again = await crashCopy(copy, `cp-${step}-again`);
      const last = await openStore(again);
      expect(texts((await last.load('g')).entries)).toEqual(expectedTexts(acked + 100));
    });
  }
});
