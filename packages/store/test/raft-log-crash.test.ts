import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LevelRaftLogStore } from '@flotilla/store';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM fixture shared with the child process
import { applyShape, entryData, writeShape } from './fixtures/raft-log-workload.mjs';

const child = fileURLToPath(new URL('./fixtures/raft-log-crash-child.mjs', import.meta.url));
const built = fileURLToPath(new URL('../dist/raft-log/index.js', import.meta.url));
const GROUPS = 3;

/** The default store (WAL), the WAL with segments small enough to checkpoint mid-stream, and LevelDB alone. */
const VARIANTS: { name: string; options: { wal?: boolean; walSegmentBytes?: number }; kills: number }[] = [
  { name: 'with the WAL', options: {}, kills: 50 },
  { name: 'with 64 KiB WAL segments (checkpoints mid-stream)', options: { walSegmentBytes: 64 * 1024 }, kills: 20 },
  { name: 'with LevelDB alone (wal: false)', options: { wal: false }, kills: 10 },
];

type Terms = number[];
interface HardState {
  term: number;
  vote: number;
  commit: number;
}

/** The group's log (terms) and hard state after each write k = 0, 1, 2, ..., computed on demand. */
class ExpectedStates {
  private readonly terms: Terms[] = [[]];
  private readonly hardStates: (HardState | null)[] = [null];

  at(k: number): { terms: Terms; hardState: HardState | null } {
    while (this.terms.length <= k) {
      const prev = this.terms[this.terms.length - 1]!;
      const shape = writeShape(this.terms.length, prev) as { hardState: HardState };
      this.terms.push(applyShape([...prev], shape) as Terms);
      this.hardStates.push(shape.hardState);
    }
    return { terms: this.terms[k]!, hardState: this.hardStates[k]! };
  }
}

/** Run the writer, SIGKILL it after `killAfterMs`, return the last acknowledged write per group. */
function runAndKill(dir: string, killAfterMs: number, options: object): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const acked = new Map<string, number>();
    const proc = spawn(process.execPath, [child, dir, String(GROUPS), '100000', JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buffered = '';
    let timer: NodeJS.Timeout | null = null;
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [word, group, k] = line.split(' ');
        if (word === 'ack') acked.set(group!, Math.max(acked.get(group!) ?? 0, Number(k)));
      }
      if (!timer) timer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    });
    proc.on('exit', (_code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited without being killed: ${stderr}`));
      else resolve(acked);
    });
  });
}

describe.each(VARIANTS)('LevelRaftLogStore crash recovery $name', ({ options, kills: KILLS }) => {
  it(`every log reopened after kill -9 at ${KILLS} random points is a prefix of what was written`, async () => {
    expect(existsSync(built), 'build the store first (npm test runs the build)').toBe(true);
    let seed = 12345;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const states = new Map(Array.from({ length: GROUPS }, (_, i) => [`g${i}`, new ExpectedStates()]));
    let checkedWrites = 0;
    let replayedBatches = 0;
    const checkRun = async (run: number, killAfterMs: number): Promise<void> => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-crash-'));
      try {
        const acked = await runAndKill(dir, killAfterMs, options);
        const store = await LevelRaftLogStore.open({ ...options, dir });
        replayedBatches += store.stats.replayedBatches;
        for (const [group, expected] of states) {
          const loaded = await store.load(group);
          const terms = loaded.entries.map((x) => x.term);
          const ackedK = acked.get(group) ?? 0;
          // The reopened log equals the state after some write k >= the last acknowledged one; writes after it
          // may or may not have landed (a few rounds at most are in flight).
          let match = -1;
          for (let k = ackedK; k <= ackedK + 4 && match < 0; k++) {
            if (sameTerms(expected.at(k).terms, terms)) match = k;
          }
          expect(match, `run ${run} ${group}: acked ${ackedK}, found ${terms.length} entries`).toBeGreaterThanOrEqual(ackedK);
          expect(loaded.hardState).toEqual(expected.at(match).hardState ?? { term: 0, vote: 0, commit: 0 });
          for (const x of loaded.entries) expect(Buffer.from(x.data).equals(Buffer.from(entryData(group, x.index, x.term)))).toBe(true);
          checkedWrites += ackedK;
        }
        await store.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    // Five writers at a time: process start-up dominates, not the writes.
    const PARALLEL = 5;
    for (let run = 0; run < KILLS; run += PARALLEL) {
      const delays = Array.from({ length: PARALLEL }, () => Math.floor(random() * 80));
      await Promise.all(delays.map((ms, i) => checkRun(run + i, ms)));
    }
    expect(checkedWrites).toBeGreaterThan(KILLS);
    // With the WAL, LevelDB trails it by a few batches, so some kills leave batches only the WAL holds.
    if (options.wal === false) expect(replayedBatches).toBe(0);
    else expect(replayedBatches).toBeGreaterThan(0);
  }, 120_000);
});

function sameTerms(a: Terms, b: Terms): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
