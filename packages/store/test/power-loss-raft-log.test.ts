// LevelRaftLogStore (WAL + LevelDB) through simulated power cuts (support/power-loss-fs.ts): per group the
// recovered log and hard state are exactly the state after some write, never before the last acknowledged
// synced one.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HardState } from '@flotilla/raft';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LevelRaftLogStore } from '../src/raft-log/level-raft-log-store.js';
import type { WalSyncMode } from '../src/raft-log/wal-segment.js';
import { crash, forgetRoot, prng, registerRoot, simTmpBase, type CrashMode } from './support/power-loss-fs.js';

vi.mock('node:fs', async (importOriginal) => (await import('./support/power-loss-fs.js')).wrapFs(await importOriginal()));
vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('./support/power-loss-fs.js')).wrapFsPromises(await importOriginal()),
);
vi.mock('level', async (importOriginal) => (await import('./support/power-loss-fs.js')).wrapLevel(await importOriginal()));

const CHAINS = 10;
const CRASHES_PER_CHAIN = 10;
const GROUPS = ['g1', 'g2'];
const BASE_SEED = Number(process.env.POWER_LOSS_SEED ?? 0x4af7);

interface LogState {
  /** Term of each entry; index = position + 1. */
  terms: number[];
  hardState: HardState;
}

interface GroupModel {
  /** State after each issued write; [0] is the state the life started from. */
  history: LogState[];
  /** Highest history position whose synced write resolved before the crash. */
  acked: number;
}

const dataOf = (group: string, index: number, term: number): Uint8Array => {
  const data = new Uint8Array(96);
  data.set(Buffer.from(`${group}:${index}:${term}:`));
  return data;
};
const tick = (): Promise<void> => new Promise((res) => setImmediate(res));
const modeOf = (r: number): CrashMode => (r < 0.3 ? 'synced-only' : r < 0.6 ? 'torn' : r < 0.85 ? 'scrambled' : 'everything');

async function live(store: LevelRaftLogStore, models: Map<string, GroupModel>, rand: () => number): Promise<void> {
  let crashed = false;
  const steps = 1 + Math.floor(rand() * 80);
  for (let i = 0; i < steps; i++) {
    if (rand() < 0.25) {
      // Sometimes long enough for WAL writes (thread pool) and LevelDB applies to complete.
      if (rand() < 0.5) await tick();
      else await new Promise((res) => setTimeout(res, 1 + Math.floor(rand() * 4)));
      continue;
    }
    const group = GROUPS[Math.floor(rand() * GROUPS.length)];
    const model = models.get(group)!;
    const prev = model.history[model.history.length - 1];
    const last = prev.terms.length;
    const lastTerm = last > 0 ? prev.terms[last - 1] : 1;
    // Mostly appends; sometimes a conflicting suffix under a new term (a new leader's log).
    const conflict = last > 3 && rand() < 0.15;
    const from = conflict ? last - Math.floor(rand() * 3) : last + 1;
    const term = conflict ? lastTerm + 1 : lastTerm;
    const count = 1 + Math.floor(rand() * 12);
    const entries = [];
    for (let j = 0; j < count; j++) entries.push({ index: from + j, term, type: 0, data: dataOf(group, from + j, term) });
    const hardState = { term, vote: 1, commit: Math.max(0, from - 2) };
    const terms = prev.terms.slice(0, from - 1);
    for (let j = 0; j < count; j++) terms.push(term);
    model.history.push({ terms, hardState });
    const pos = model.history.length - 1;
    const sync = rand() < 0.7;
    store.write({ group, snapshot: null, entries, hardState, sync }).then(
      () => {
        if (!crashed && sync) model.acked = Math.max(model.acked, pos);
      },
      () => undefined,
    );
  }
  crashed = true;
}

async function checkRecovered(store: LevelRaftLogStore, models: Map<string, GroupModel>, label: string): Promise<void> {
  for (const group of GROUPS) {
    const model = models.get(group)!;
    const got = await store.load(group);
    expect(got.snapshot, `${label} ${group}: no snapshot was written`).toBeNull();
    const terms = got.entries.map((e, i) => {
      expect(e.index, `${label} ${group}: entry indexes are dense from 1`).toBe(i + 1);
      expect(Buffer.from(e.data).equals(Buffer.from(dataOf(group, e.index, e.term))), `${label} ${group}: entry ${e.index} data`).toBe(true);
      return e.term;
    });
    const same = (s: LogState): boolean =>
      s.terms.length === terms.length &&
      s.terms.every((t, i) => t === terms[i]) &&
      s.hardState.term === got.hardState.term &&
      s.hardState.vote === got.hardState.vote &&
      s.hardState.commit === got.hardState.commit;
    let match = -1;
    for (let k = model.history.length - 1; k >= 0 && match < 0; k--) if (same(model.history[k])) match = k;
    expect(match, `${label} ${group}: recovered log (${terms.length} entries, ${JSON.stringify(got.hardState)}) is no written state`).toBeGreaterThanOrEqual(0);
    expect(match, `${label} ${group}: recovered the state after write ${match}, acknowledged ${model.acked}`).toBeGreaterThanOrEqual(model.acked);
    models.set(group, { history: [{ terms, hardState: got.hardState }], acked: 0 });
  }
}

describe('LevelRaftLogStore under simulated power loss', () => {
  const bases: string[] = [];
  afterAll(async () => {
    for (const b of bases) await rm(b, { recursive: true, force: true });
  });

  it(`keeps every acknowledged synced write through ${CHAINS * CRASHES_PER_CHAIN} power cuts`, async () => {
    const base = await mkdtemp(join(simTmpBase(tmpdir()), 'flotilla-powerloss-raftlog-'));
    bases.push(base);
    let crashes = 0;
    let replayed = 0;
    for (let chain = 0; chain < CHAINS; chain++) {
      const seed = BASE_SEED + chain;
      const rand = prng(seed);
      const walSync: WalSyncMode = chain % 2 === 0 ? 'dsync' : 'fdatasync';
      // Small WAL segments: checkpoints (synced LevelDB write, new segment, old one removed) happen every life.
      const options = { walSync, walSegmentBytes: 8 * 1024, levelApplyDelayMs: 2, writeBufferBytes: 1024 * 1024 };
      let dir = join(base, `c${chain}`);
      await mkdir(dir);
      registerRoot(dir);
      const models = new Map<string, GroupModel>(
        GROUPS.map((g) => [g, { history: [{ terms: [], hardState: { term: 0, vote: 0, commit: 0 } }], acked: 0 }]),
      );
      let store = await LevelRaftLogStore.open({ dir, ...options });
      for (let c = 0; c < CRASHES_PER_CHAIN; c++) {
        await live(store, models, rand);
        const mode = modeOf(rand());
        const label = `seed ${seed} (POWER_LOSS_SEED=${BASE_SEED}, chain ${chain}, ${walSync}) crash ${c} [${mode}]`;
        const [image] = crash([dir], mode, rand);
        if (process.env.POWER_LOSS_TRACE) console.log(label, JSON.stringify([...models].map(([g, m]) => [g, m.acked, m.history.length])), image);
        crashes++;
        await store.close().catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
        dir = image.dir;
        store = await LevelRaftLogStore.open({ dir, ...options });
        replayed += store.stats.replayedBatches;
        if (process.env.POWER_LOSS_TRACE) console.log('replayed', store.stats.replayedBatches);
        await checkRecovered(store, models, label);
      }
      await store.close();
      forgetRoot(dir);
    }
    expect(crashes).toBe(CHAINS * CRASHES_PER_CHAIN);
    // The WAL mattered: some crashes left batches LevelDB had lost (its unsynced writes), replayed from the WAL.
    expect(replayed).toBeGreaterThan(0);
  });
});
