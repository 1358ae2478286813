// `node scripts/bench/raft-log-store.js [--procs 1,3] [--writers 1,16] [--rounds 3] [--slice-ms 1500]`
// Synced write latency and throughput of the Raft log store (LevelRaftLogStore), LevelDB-only against the
// write-ahead file (O_DSYNC or write + fdatasync; pre-zeroed or appended; LevelDB applied per batch or deferred), in 1 process and in N processes at once (as N cluster
// nodes on one disk). Each write is one 200 B entry + hard state, sync: true, like a Raft append; `writers`
// concurrent groups per process each await their write before the next (group commit folds them);
// `--writers 0` is lockstep: every process writes once at the same moment and the round waits for all of
// them (the three nodes' synced writes of one R3 append; the figure includes a pipe round trip).
// Modes alternate within every round (the disk is shared and noisy); the table shows medians over rounds.
// Needs the built store (`npx tsc -b`). Run it under the shared bench lock.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LevelRaftLogStore } from '@flotilla/store';

const MODES = {
  leveldb: { wal: false },
  'wal-dsync': { wal: true, walSync: 'dsync' },
  // LevelDB batch started with every WAL write instead of a few batches together.
  'wal-dsync-apply0': { wal: true, walSync: 'dsync', levelApplyDelayMs: 0 },
  'wal-fdatasync': { wal: true, walSync: 'fdatasync' },
  'wal-append-dsync': { wal: true, walSync: 'dsync', walPrezero: false },
  'wal-append-fdatasync': { wal: true, walSync: 'fdatasync', walPrezero: false },
};
const ENTRY_BYTES = 200;
const CHILD_TIMEOUT_MS = 60_000;

function option(args, name, fallback) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
}

/**
 * Lockstep child: one synced write per "w" line on stdin, "d" when it is durable; prints its CPU at "end".
 * The parent sends "w" to every process at once and waits for all: the three nodes' writes of one R3 append.
 */
async function lockstepChild(mode) {
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-bench-raftlog-'));
  const store = await LevelRaftLogStore.open({ dir, ...MODES[mode] });
  const data = new Uint8Array(ENTRY_BYTES).fill(0x61);
  let index = 0;
  let cpuBefore = process.cpuUsage();
  process.stdout.write('ready\n');
  const stdin = createInterface({ input: process.stdin });
  for await (const line of stdin) {
    if (line === 'end') break;
    if (index === 1) cpuBefore = process.cpuUsage();
    index++;
    await store.write({ group: 'g', entries: [{ index, term: 1, type: 0, data }], hardState: { term: 1, vote: 1, commit: index - 1 }, snapshot: null, sync: true });
    process.stdout.write('d\n');
  }
  const cpu = process.cpuUsage(cpuBefore);
  await store.close();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ cpuUsPerWrite: (cpu.user + cpu.system) / Math.max(1, index - 1) })}\n`);
}

/** Child: open a store, wait for "go" on stdin, write for `sliceMs`, print one JSON line. */
async function child([mode, writersArg, sliceMsArg]) {
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-bench-raftlog-'));
  const store = await LevelRaftLogStore.open({ dir, ...MODES[mode] });
  const writers = Number(writersArg);
  const sliceMs = Number(sliceMsArg);
  const data = new Uint8Array(ENTRY_BYTES).fill(0x61);
  const next = new Array(writers).fill(1);
  // Warm-up: each group's first write scans LevelDB for its blocks.
  await Promise.all(next.map((_, g) => store.write({ group: `g${g}`, entries: [{ index: next[g]++, term: 1, type: 0, data }], hardState: null, snapshot: null, sync: true })));
  process.stdout.write('ready\n');
  const stdin = createInterface({ input: process.stdin });
  await new Promise((resolve) => stdin.once('line', resolve));
  stdin.close();
  process.stdin.destroy();
  const latenciesMs = [];
  const before = { ...store.stats };
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + sliceMs;
  await Promise.all(
    next.map(async (_, g) => {
      // Bounded by the slice's end time.
      while (performance.now() < end) {
        const t0 = performance.now();
        const index = next[g]++;
        await store.write({ group: `g${g}`, entries: [{ index, term: 1, type: 0, data }], hardState: { term: 1, vote: 1, commit: index - 1 }, snapshot: null, sync: true });
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const batches = store.stats.syncedBatches - before.syncedBatches;
  await store.close();
  await rm(dir, { recursive: true, force: true });
  latenciesMs.sort((a, b) => a - b);
  const at = (q) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))] ?? 0;
  process.stdout.write(
    `${JSON.stringify({ writesPerSec: (latenciesMs.length / elapsedMs) * 1000, batchesPerSec: (batches / elapsedMs) * 1000, p50Ms: at(0.5), p99Ms: at(0.99), cpuUsPerWrite: (cpu.user + cpu.system) / Math.max(1, latenciesMs.length) })}\n`,
  );
}

/** `procs` copies of this script with `args`; `lines[i]()` resolves with child i's next stdout line. */
function spawnChildren(procs, args) {
  const self = fileURLToPath(import.meta.url);
  const kids = Array.from({ length: procs }, () => spawn(process.execPath, [self, ...args], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const lines = kids.map((k) => {
    const rl = createInterface({ input: k.stdout });
    const queue = [];
    const waiters = [];
    rl.on('line', (l) => (waiters.length ? waiters.shift()(l) : queue.push(l)));
    return () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r)));
  });
  return { kids, lines };
}

/** Starts `procs` children, releases them together, returns their results. */
async function runSlice(mode, procs, writers, sliceMs) {
  if (writers === 0) return runLockstepSlice(mode, procs, sliceMs);
  const { kids, lines } = spawnChildren(procs, ['--child', mode, String(writers), String(sliceMs)]);
  const timer = setTimeout(() => kids.forEach((k) => k.kill('SIGKILL')), CHILD_TIMEOUT_MS);
  try {
    await Promise.all(lines.map((next) => next()));
    for (const k of kids) k.stdin.end('go\n');
    return (await Promise.all(lines.map((next) => next()))).map((l) => JSON.parse(l));
  } finally {
    clearTimeout(timer);
  }
}

/** `writers` 0: every process writes once per round, all at once; a round ends when all are durable. */
async function runLockstepSlice(mode, procs, sliceMs) {
  const { kids, lines } = spawnChildren(procs, ['--lockstep-child', mode]);
  const timer = setTimeout(() => kids.forEach((k) => k.kill('SIGKILL')), CHILD_TIMEOUT_MS);
  try {
    await Promise.all(lines.map((next) => next()));
    // One warm-up round, then rounds until the slice ends (bounded by time).
    const roundsMs = [];
    for (let round = 0, end = Infinity; performance.now() < end; round++) {
      const t0 = performance.now();
      for (const k of kids) k.stdin.write('w\n');
      await Promise.all(lines.map((next) => next()));
      if (round === 0) end = performance.now() + sliceMs;
      else roundsMs.push(performance.now() - t0);
    }
    for (const k of kids) k.stdin.end('end\n');
    const cpu = (await Promise.all(lines.map((next) => next()))).map((l) => JSON.parse(l).cpuUsPerWrite);
    const sorted = [...roundsMs].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    const perSec = (roundsMs.length / roundsMs.reduce((a, b) => a + b, 0)) * 1000;
    return cpu.map((c) => ({ writesPerSec: perSec, batchesPerSec: perSec, p50Ms: at(0.5), p99Ms: at(0.99), cpuUsPerWrite: c }));
  } finally {
    clearTimeout(timer);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const fmt = (n, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

export async function main(args) {
  const procsList = option(args, 'procs', '1,3').split(',').map(Number);
  const writersList = option(args, 'writers', '1,16').split(',').map(Number);
  const rounds = Number(option(args, 'rounds', '3'));
  const sliceMs = Number(option(args, 'slice-ms', '1500'));
  const modes = option(args, 'modes', Object.keys(MODES).join(',')).split(',');
  const results = new Map();
  for (let round = 0; round < rounds; round++) {
    for (const procs of procsList) {
      for (const writers of writersList) {
        // Alternate the mode order each round so neither always runs first.
        const order = round % 2 === 0 ? modes : [...modes].reverse();
        for (const mode of order) {
          const perProc = await runSlice(mode, procs, writers, sliceMs);
          const key = `${procs}|${writers}|${mode}`;
          if (!results.has(key)) results.set(key, []);
          results.get(key).push({
            writesPerSec: perProc.reduce((s, r) => s + r.writesPerSec, 0) / procs,
            batchesPerSec: perProc.reduce((s, r) => s + r.batchesPerSec, 0) / procs,
            p50Ms: median(perProc.map((r) => r.p50Ms)),
            p99Ms: Math.max(...perProc.map((r) => r.p99Ms)),
            cpuUsPerWrite: median(perProc.map((r) => r.cpuUsPerWrite)),
          });
          process.stderr.write(`round ${round + 1}/${rounds} procs ${procs} writers ${writers} ${mode}: ${fmt(results.get(key).at(-1).writesPerSec)} writes/s per process\n`);
        }
      }
    }
  }
  console.log(`Raft log store, synced writes (${ENTRY_BYTES} B entry + hard state), median of ${rounds} rounds of ${sliceMs} ms; per process`);
  console.log('procs  writers  mode                  writes/s  synced batches/s  p50 ms  p99 ms  CPU µs/write');
  for (const procs of procsList) {
    for (const writers of writersList) {
      for (const mode of modes) {
        const rs = results.get(`${procs}|${writers}|${mode}`);
        const m = (f) => median(rs.map(f));
        console.log(
          `${String(procs).padStart(5)}  ${String(writers).padStart(7)}  ${mode.padEnd(20)}  ${fmt(m((r) => r.writesPerSec)).padStart(8)}  ${fmt(m((r) => r.batchesPerSec)).padStart(16)}  ${fmt(m((r) => r.p50Ms), 3).padStart(6)}  ${fmt(m((r) => r.p99Ms), 2).padStart(6)}  ${fmt(m((r) => r.cpuUsPerWrite)).padStart(12)}`,
        );
      }
    }
  }
}

if (process.argv[2] === '--lockstep-child') {
  await lockstepChild(process.argv[3]);
  process.exit(0);
} else if (process.argv[2] === '--child') {
  await child(process.argv.slice(3));
  process.exit(0);
}
else if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
