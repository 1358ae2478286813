// `npm run bench -- store [--quick]`: the storage engine's throughput against this machine's own limit.
// Prints one table: appends/s (128 B, 1 KiB, 64 KiB; sync always with 1,000 appends per batch, and
// interval sync), raw file append + fdatasync per batch with the same bytes, sequential reads,
// get-by-sequence latency on a warm store, and open time at 1,000,000 messages.
import { mkdtemp, rm } from 'node:fs/promises';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@flotilla/store';

const BATCH = 1000;
/** Record bytes on disk per message besides subject/payload (record-codec header). */
const RECORD_OVERHEAD = 26;
const SUBJECT = 'bench.orders.created';

const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function withDir(fn) {
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-bench-store-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Appends `total` messages, BATCH per event-loop tick, each batch awaited before the next: as one
 * appendBatch call (how the JetStream layer applies a Raft batch), or as BATCH append() promises.
 */
async function appendRun(dir, size, total, sync, mode = 'batch') {
  const store = await FileStore.open({ dir, sync });
  const payload = Buffer.alloc(size, 0x61);
  const msgs = Array.from({ length: BATCH }, () => ({ subject: SUBJECT, data: payload }));
  const start = process.hrtime.bigint();
  for (let done = 0; done < total; done += BATCH) {
    const n = Math.min(BATCH, total - done);
    if (mode === 'batch') {
      await store.appendBatch(n === BATCH ? msgs : msgs.slice(0, n));
    } else {
      const pending = new Array(n);
      for (let i = 0; i < n; i++) pending[i] = store.append(SUBJECT, undefined, payload);
      await Promise.all(pending);
    }
  }
  await store.flush();
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  return { store, rate: total / secs, secs };
}

/** The disk's limit for the same work: one write of a batch's record bytes, then fdatasync. */
function rawFileRun(dir, size, total) {
  const fd = openSync(join(dir, 'raw.log'), 'a');
  const buf = Buffer.alloc(BATCH * (RECORD_OVERHEAD + SUBJECT.length + size), 0x62);
  const start = process.hrtime.bigint();
  for (let done = 0; done < total; done += BATCH) {
    const n = Math.min(BATCH, total - done);
    writeSync(fd, buf, 0, n * (RECORD_OVERHEAD + SUBJECT.length + size));
    fdatasyncSync(fd);
  }
  closeSync(fd);
  return total / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function sequentialRead(store, total) {
  const start = process.hrtime.bigint();
  let read = 0;
  let bytes = 0;
  for (let seq = 1; read < total; ) {
    const msgs = await store.readRange(seq, BATCH);
    if (msgs.length === 0) break;
    for (const m of msgs) bytes += m.data.length;
    read += msgs.length;
    seq = msgs[msgs.length - 1].seq + 1;
  }
  if (bytes === 0) throw new Error('read nothing');
  return read / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function warmGetMicros(store, lastSeq, samples) {
  // Warm: the sampled range (~9 MB of 128 B messages) fits the default 16 MiB block cache.
  const from = Math.max(1, lastSeq - 50_000);
  await store.readRange(from, 50_000);
  let x = 12345;
  const start = process.hrtime.bigint();
  for (let i = 0; i < samples; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const m = await store.get(from + (x % (lastSeq - from + 1)));
    if (m === null) throw new Error('missing message');
  }
  return Number(process.hrtime.bigint() - start) / 1e3 / samples;
}

export async function main(args) {
  const quick = args.includes('--quick');
  const scale = quick ? 0.1 : 1;
  const rows = [];
  // Warm-up, untimed: JIT-compile the append path before the first measured run.
  for (const mode of ['batch', 'singles']) {
    await withDir(async (dir) => {
      const r = await appendRun(dir, 128, 20_000, 'always', mode);
      await r.store.close();
    });
  }
  const sizes = [
    { label: '128 B', size: 128, total: 300_000 * scale },
    { label: '1 KiB', size: 1024, total: 100_000 * scale },
    { label: '64 KiB', size: 64 * 1024, total: 5_000 * scale },
  ];
  for (const { label, size, total } of sizes) {
    const always = await withDir(async (dir) => {
      const r = await appendRun(dir, size, total, 'always');
      await r.store.close();
      return r.rate;
    });
    const alwaysSingles = await withDir(async (dir) => {
      const r = await appendRun(dir, size, total, 'always', 'singles');
      await r.store.close();
      return r.rate;
    });
    const interval = await withDir(async (dir) => {
      const r = await appendRun(dir, size, total, { intervalMs: 100 });
      await r.store.close();
      return r.rate;
    });
    const raw = await withDir(async (dir) => rawFileRun(dir, size, total));
    rows.push([`append ${label}, sync always, appendBatch(${BATCH})`, fmt(always), `${((always / raw) * 100).toFixed(0)}% of raw`]);
    rows.push([`append ${label}, sync always, ${BATCH} x append() per tick`, fmt(alwaysSingles), `${((alwaysSingles / raw) * 100).toFixed(0)}% of raw`]);
    rows.push([`append ${label}, sync interval 100 ms, appendBatch(${BATCH})`, fmt(interval), `${((interval / raw) * 100).toFixed(0)}% of raw`]);
    rows.push([`raw file append + fdatasync per ${BATCH}, ${label}`, fmt(raw), 'machine limit']);
  }

  const openTotal = quick ? 100_000 : 1_000_000;
  await withDir(async (dir) => {
    const w = await appendRun(dir, 128, openTotal, 'always');
    rows.push([`append 128 B x ${fmt(openTotal)} (store for reads)`, fmt(w.rate), `${w.secs.toFixed(2)} s`]);
    await w.store.close();
    const t0 = process.hrtime.bigint();
    const store = await FileStore.open({ dir });
    const openMs = Number(process.hrtime.bigint() - t0) / 1e6;
    rows.push([`open (rebuild index) at ${fmt(openTotal)} msgs`, `${openMs.toFixed(0)} ms`, `${fmt(openTotal / (openMs / 1000))} msgs/s`]);
    const coldRead = await sequentialRead(store, openTotal);
    rows.push(['sequential read (readRange 1,000), from disk', fmt(coldRead), 'msgs/s']);
    const warmRead = await sequentialRead(store, openTotal);
    rows.push(['sequential read (readRange 1,000), second pass', fmt(warmRead), 'msgs/s']);
    const getUs = await warmGetMicros(store, store.state().last_seq, 200_000);
    rows.push(['get by sequence, warm store', `${getUs.toFixed(2)} µs`, 'per get']);
    await store.close();
  });

  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  console.log(`store bench (${quick ? 'quick' : 'full'}), node ${process.version}`);
  console.log(`${'measure'.padEnd(w0)}  ${'result'.padStart(w1)}  note`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`);
}
