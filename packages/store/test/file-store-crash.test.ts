import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@flotilla/store';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM fixture shared with the child process
import { MAX_MSGS, STORE_OPTIONS, kOf, subjectFor } from './fixtures/file-store-workload.mjs';

const child = fileURLToPath(new URL('./fixtures/file-store-crash-child.mjs', import.meta.url));
const built = fileURLToPath(new URL('../dist/file-store.js', import.meta.url));
const CHAINS = 5;
const KILLS_PER_CHAIN = 10;

interface Acked {
  /** seq -> k of every append that resolved. */
  appends: Map<number, number>;
  deletes: Set<number>;
  /** Deletes started: they may or may not have landed if the writer was killed before they resolved. */
  tentative: Set<number>;
}

/** Runs the writer on `dir`, SIGKILLs it `killAfterMs` after its first ack, records what it acknowledged. */
function runAndKill(dir: string, firstK: number, seed: number, killAfterMs: number, acked: Acked): Promise<void> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, dir, String(firstK), String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buffered = '';
    let stderr = '';
    let timer: NodeJS.Timeout | null = null;
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [op, a, b] = line.split(' ');
        if (op === 'a') acked.appends.set(Number(b), Number(a));
        else if (op === 'd') acked.deletes.add(Number(a));
        else if (op === 't') acked.tentative.add(Number(a));
      }
      timer ??= setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    });
    // 'close', not 'exit': 'exit' can come before the last lines the writer put in the pipe are read, and
    // a missed "t <seq>" makes a delete that landed look like a lost acknowledged append.
    proc.on('close', (_code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited without being killed: ${stderr}`));
      else resolve();
    });
  });
}

const sizeOf = (subject: string, hdrLen: number, dataLen: number): number =>
  hdrLen === 0 ? 30 + subject.length + dataLen : 34 + subject.length + hdrLen + dataLen;

/** Reopens the store and checks it against itself and against what the writer acknowledged. */
async function check(dir: string, acked: Acked, label: string): Promise<number> {
  const store = await FileStore.open({ dir, ...STORE_OPTIONS, limits: { maxMsgs: MAX_MSGS } });
  try {
    const st = store.state({ deleted: true });
    const msgs = await store.readRange(1, MAX_MSGS * 2);
    // The index, per-subject counts and state agree with the messages.
    expect(msgs.length, label).toBe(st.messages);
    expect(msgs.reduce((n, m) => n + sizeOf(m.subject, m.header.length, m.data.length), 0), label).toBe(st.bytes);
    const counts = new Map<string, number>();
    for (const m of msgs) counts.set(m.subject, (counts.get(m.subject) ?? 0) + 1);
    expect([...store.subjectCounts().entries()].sort(), label).toEqual([...counts.entries()].sort());
    expect(st.num_subjects, label).toBe(counts.size);
    if (msgs.length > 0) {
      expect(msgs[0].seq, label).toBe(st.first_seq);
      expect(msgs[msgs.length - 1].seq, label).toBeLessThanOrEqual(st.last_seq);
      expect(st.num_deleted, label).toBe(st.last_seq - st.first_seq + 1 - st.messages);
      expect(st.first_ts, label).toBe(msgs[0].timestampNs);
    }
    expect(st.messages, label).toBeLessThanOrEqual(MAX_MSGS);
    // Every message is one the writer made, at the sequence it was acknowledged with (if it was).
    const present = new Map(msgs.map((m) => [m.seq, m]));
    for (const m of msgs) {
      const k = kOf(m.data);
      expect(k, `${label} seq ${m.seq}`).toBeGreaterThanOrEqual(0);
      expect(m.subject).toBe(subjectFor(k));
      const ackedK = acked.appends.get(m.seq);
      if (ackedK !== undefined) expect(k, `${label} seq ${m.seq}`).toBe(ackedK);
    }
    // Every acknowledged append is there unless deleted or pushed out by max_msgs (oldest first, so
    // below first_seq). max_msgs can only have acted once more than MAX_MSGS sequences were used (appends
    // that landed without an ack count too); after it acted the store held MAX_MSGS, and only deletes
    // take it below that.
    const limitReached = st.last_seq > MAX_MSGS;
    if (limitReached) expect(st.messages, label).toBeGreaterThanOrEqual(MAX_MSGS - acked.deletes.size - acked.tentative.size);
    for (const [seq] of acked.appends) {
      if (acked.deletes.has(seq)) expect(present.has(seq), `${label} deleted seq ${seq}`).toBe(false);
      else if (acked.tentative.has(seq)) continue;
      else if (seq >= st.first_seq || !limitReached) expect(present.has(seq), `${label} acked seq ${seq}`).toBe(true);
    }
    return acked.appends.size;
  } finally {
    await store.close();
  }
}

describe('FileStore crash recovery', () => {
  it(`reopens consistent, with every acknowledged append, after kill -9 at ${CHAINS * KILLS_PER_CHAIN} random points`, async () => {
    expect(existsSync(built), 'build the store first (npm test runs the build)').toBe(true);
    let seed = 4242;
    const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    let checked = 0;
    const chain = async (c: number): Promise<void> => {
      const dir = await mkdtemp(join(tmpdir(), 'file-store-crash-'));
      const acked: Acked = { appends: new Map(), deletes: new Set(), tentative: new Set() };
      try {
        // Each run reopens what the previous kill left behind: recovery of recovered stores too.
        for (let run = 0; run < KILLS_PER_CHAIN; run++) {
          const killAfterMs = Math.floor(random() * 80);
          await runAndKill(dir, (c * KILLS_PER_CHAIN + run) * 1_000_000, Math.floor(random() * 1e9), killAfterMs, acked);
          checked += await check(dir, acked, `chain ${c} run ${run} (kill after ${killAfterMs} ms)`);
        }
      } catch (err) {
        // KEEP_CRASH_DIRS=1 leaves a failing chain's files for inspection.
        if (process.env.KEEP_CRASH_DIRS) console.log(`kept ${dir}`);
        throw err;
      } finally {
        if (!process.env.KEEP_CRASH_DIRS) await rm(dir, { recursive: true, force: true });
      }
    };
    await Promise.all(Array.from({ length: CHAINS }, (_, c) => chain(c)));
    expect(checked).toBeGreaterThan(CHAINS * KILLS_PER_CHAIN);
  }, 120_000);
});
