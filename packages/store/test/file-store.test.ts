import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Level } from 'level';
import { FileStore, MemoryStore, setFsyncObserver, type FileStoreOptions, type MessageStore } from '@flotilla/store';
import { runStoreSuite } from './store-suite.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'flotilla-filestore-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

runStoreSuite('FileStore', {
  create: async (opts) => FileStore.open({ ...opts, dir: await tempDir() }),
  // nats-server fileStoreMsgSize: 22 + subject + payload + 8 (+ 4 + header when there are headers).
  sizeOf: (subject, header, data) =>
    header.length === 0 ? 30 + Buffer.byteLength(subject) + data.length : 34 + Buffer.byteLength(subject) + header.length + data.length,
});

// The same contract when writes wait for company (a stream replica's store: interval sync, write-behind).
runStoreSuite('FileStore write-behind', {
  create: async (opts) => FileStore.open({ ...opts, dir: await tempDir(), sync: { intervalMs: 1000 }, writeDelayMs: 5 }),
  sizeOf: (subject, header, data) =>
    header.length === 0 ? 30 + Buffer.byteLength(subject) + data.length : 34 + Buffer.byteLength(subject) + header.length + data.length,
});

/** Everything observable about a store, to compare before and after a reopen. */
async function observe(s: MessageStore): Promise<unknown> {
  const msgs = await s.readRange(1, 100_000);
  return {
    state: s.state({ deleted: true }),
    subjects: [...s.subjectCounts().entries()].sort(),
    msgs: msgs.map((m) => [m.seq, m.subject, dec(m.header), dec(m.data), m.timestampNs]),
  };
}

describe('FileStore durability and layout', () => {
  const small = (dir: string, extra?: Partial<FileStoreOptions>): Promise<FileStore> =>
    FileStore.open({ dir, maxBlockMsgs: 8, maxBlockBytes: 4096, ...extra });

  it('write-behind: records wait for the delay, are readable meanwhile, and flush() or 1 MiB writes them at once', async () => {
    const dir = await tempDir();
    // A delay far past the test timeout: anything that resolves did not wait for it.
    const s = await FileStore.open({ dir, sync: { intervalMs: 60_000 }, writeDelayMs: 600_000 });
    let written = false;
    const first = s.append('wb.a', undefined, enc('one')).then(() => (written = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(written).toBe(false);
    expect(dec((await s.readRange(1, 1))[0]!.data)).toBe('one');
    await s.flush();
    await first;
    expect(written).toBe(true);
    // Past the byte bound the write goes out without flush().
    const big = new Uint8Array(64 * 1024).fill(7);
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < 17; i++) appends.push(s.append('wb.big', undefined, big));
    await Promise.all(appends);
    expect(s.state().messages).toBe(18);
    await s.close();
    const reopened = await FileStore.open({ dir, sync: { intervalMs: 60_000 } });
    expect(reopened.state().messages).toBe(18);
    expect(dec((await reopened.readRange(1, 1))[0]!.data)).toBe('one');
    await reopened.close();
  });

  it('sync() syncs an interval store now; flush() only writes it', async () => {
    const kinds: string[] = [];
    const previous = setFsyncObserver((kind) => kinds.push(kind));
    try {
      const s = await FileStore.open({ dir: await tempDir(), sync: { intervalMs: 600_000 } });
      await s.append('sy.a', undefined, enc('one'));
      await s.flush();
      expect(kinds.filter((k) => k === 'stream_store')).toEqual([]);
      await s.sync();
      expect(kinds.filter((k) => k === 'stream_store').length).toBeGreaterThanOrEqual(1);
      await s.close();
    } finally {
      setFsyncObserver(previous);
    }
  });

  it('reopens to the same messages, index, per-subject counts and state', async () => {
    const dir = await tempDir();
    const s = await small(dir);
    for (let i = 0; i < 100; i++) await s.append(`r.${i % 7}`, i % 5 ? undefined : enc(`H${i}`), enc(`payload-${i}`));
    await Promise.all([s.delete(3), s.delete(50, { erase: false }), s.delete(51)]);
    await s.purge({ filter: 'r.2' });
    await s.compact(10);
    await s.purge({ filter: 'r.>', keep: 60 });
    const before = await observe(s);
    await s.close();
    const r = await small(dir);
    expect(await observe(r)).toEqual(before);
    expect((await r.append('r.0', undefined, enc('after'))).seq).toBe(101);
    await r.close();
  });

  it('keeps sequences across a full purge and a compact past the end', async () => {
    const dir = await tempDir();
    const s = await small(dir);
    for (let i = 0; i < 20; i++) await s.append('p', undefined, enc(String(i)));
    await s.purge();
    await s.close();
    let r = await small(dir);
    expect(r.state()).toMatchObject({ messages: 0, first_seq: 21, last_seq: 20 });
    await r.compact(1000);
    await r.close();
    r = await small(dir);
    expect(r.state()).toMatchObject({ messages: 0, first_seq: 1000, last_seq: 999 });
    expect((await r.append('p', undefined, enc('x'))).seq).toBe(1000);
    await r.close();
  });

  it('erasing a message rewrites its block without the bytes', async () => {
    const dir = await tempDir();
    const s = await small(dir, { maxBlockMsgs: 100 });
    await s.appendBatch([
      { subject: 'e', data: enc('keep-1') },
      { subject: 'e', data: enc('SECRET-PAYLOAD') },
      { subject: 'e', data: enc('keep-3') },
    ]);
    await s.delete(2); // erase is the default
    await s.close();
    let blocks = '';
    for (const name of await readdir(dir)) if (name.endsWith('.log')) blocks += (await readFile(join(dir, name))).toString('latin1');
    expect(blocks).toContain('keep-1');
    expect(blocks).not.toContain('SECRET-PAYLOAD');
    const r = await small(dir);
    expect((await r.readRange(1, 10)).map((m) => dec(m.data))).toEqual(['keep-1', 'keep-3']);
    await r.close();
  });

  it('reads blocks back from disk when the cache is tiny', async () => {
    const dir = await tempDir();
    const s = await small(dir, { cacheBytes: 1024 });
    const batch = Array.from({ length: 500 }, (_, i) => ({ subject: `c.${i % 3}`, data: enc(`v${i}`) }));
    await s.appendBatch(batch);
    const got = await s.readRange(1, 500);
    expect(got.map((m) => dec(m.data))).toEqual(batch.map((b) => dec(b.data)));
    expect(dec((await s.get(250))!.data)).toBe('v249');
    expect((await s.lastBySubject('c.1'))?.seq).toBe(500); // i = 499
    await s.close();
  });

  it('never recycles a buffer a reader still sees, while blocks cycle through a tiny cache', async () => {
    const s = await FileStore.open({ dir: await tempDir(), cacheBytes: 32 * 1024, maxBlockBytes: 8192 });
    const msg = (tag: string, i: number) => ({ subject: `v.${i % 5}`, data: enc(`${tag}-${i}-${'p'.repeat(40)}`) });
    await s.appendBatch(Array.from({ length: 300 }, (_, i) => msg('first', i)));
    const early = await s.readRange(1, 300);
    const seen = early.map((m) => dec(m.data));
    for (let round = 0; round < 30; round++) {
      await s.appendBatch(Array.from({ length: 300 }, (_, i) => msg(`r${round}`, i)));
      await s.readRange(1 + ((round * 997) % 9000), 50); // loads old blocks into pooled buffers
    }
    expect(early.map((m) => dec(m.data))).toEqual(seen);
    const all = await s.readRange(1, 10_000);
    expect(all.length).toBe(9300);
    expect(dec(all[9299].data)).toBe(dec(msg('r29', 299).data));
    expect(dec(all[0].data)).toBe(seen[0]);
    await s.close();
  });

  it('builds blocks in one staging buffer without disturbing what readers saw of an unflushed block', async () => {
    const dir = await tempDir();
    const s = await FileStore.open({ dir, maxBlockBytes: 16 * 1024 });
    const body = (tag: string, i: number) => enc(`${tag}-${i}-${'q'.repeat(200)}`);
    // Read before the flush: the views point into the block being built.
    for (let i = 0; i < 20; i++) s.appendNoWait('early', undefined, body('early', i));
    const early = await s.readRange(1, 20);
    const seen = early.map((m) => dec(m.data));
    await s.flush();
    // Many more blocks, each built in the staging buffer and copied out when sealed (big and small ones).
    for (let round = 0; round < 40; round++) {
      const n = round % 3 === 0 ? 3 : 150;
      for (let i = 0; i < n; i++) s.appendNoWait(`r.${round % 4}`, undefined, body(`r${round}`, i));
      await s.flush();
    }
    expect(early.map((m) => dec(m.data))).toEqual(seen);
    const total = s.state().last_seq;
    const all = await s.readRange(1, total);
    expect(all.length).toBe(total);
    expect(dec(all[20]!.data)).toBe(dec(body('r0', 0)));
    expect(dec(all[total - 1]!.data)).toBe(dec(body('r39', 2))); // round 39 is a small one (3 messages)
    await s.close();
    const again = await FileStore.open({ dir, maxBlockBytes: 16 * 1024 });
    const reread = await again.readRange(1, total);
    expect(reread.map((m) => dec(m.data))).toEqual(all.map((m) => dec(m.data)));
    await again.close();
  });

  it('interval sync makes appends durable at close and at the interval', async () => {
    const dir = await tempDir();
    const s = await FileStore.open({ dir, sync: { intervalMs: 5 } });
    for (let i = 0; i < 50; i++) void s.append('i', undefined, enc(String(i)));
    await s.flush();
    await new Promise((r) => setTimeout(r, 20));
    await s.close();
    const r = await FileStore.open({ dir });
    expect(r.state()).toMatchObject({ messages: 50, last_seq: 50 });
    await r.close();
  });

  it('applies limits that tightened while closed when it reopens', async () => {
    const dir = await tempDir();
    const s = await small(dir);
    for (let i = 0; i < 30; i++) await s.append(`l.${i % 3}`, undefined, enc(String(i)));
    await s.close();
    const r = await small(dir, { limits: { maxMsgsPerSubject: 2 } });
    expect(r.state()).toMatchObject({ messages: 6, first_seq: 25 });
    await r.close();
    const again = await small(dir);
    expect(again.state()).toMatchObject({ messages: 6, first_seq: 25, last_seq: 30 });
    await again.close();
  });

  it('deletes segment files and their tombstones once no block in them is live', async () => {
    const dir = await tempDir();
    const s = await small(dir, { maxSegmentBytes: 2048 });
    for (let i = 0; i < 200; i++) await s.append(`g.${i % 4}`, undefined, enc(`payload-${i}`));
    for (let seq = 20; seq < 120; seq += 3) expect(await s.delete(seq, { erase: false })).toBe(true);
    const segmentsBefore = (await readdir(dir)).filter((n) => n.endsWith('.log')).length;
    expect(segmentsBefore).toBeGreaterThan(5);
    await s.compact(150);
    for (let i = 0; i < 20; i++) await s.append('g.new', undefined, enc(`later-${i}`)); // rolls the tail segment
    await s.flush();
    const state = s.state();
    await s.close();
    const after = (await readdir(dir)).filter((n) => n.endsWith('.log'));
    expect(after.length).toBeLessThan(segmentsBefore);
    expect(after).not.toContain('seg-000000000001.log');
    expect(after).not.toContain('seg-000000000002.log');
    const db = new Level<Buffer, Buffer>(join(dir, 'index'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    let tombstones = 0;
    for await (const key of db.keys()) if (key[0] === 0x02) tombstones++;
    await db.close();
    expect(tombstones).toBe(0);
    const r = await small(dir, { maxSegmentBytes: 2048 });
    expect(r.state()).toEqual(state);
    expect(r.state()).toMatchObject({ messages: 71, first_seq: 150, last_seq: 220 });
    await r.close();
  });

  it('restores a FileStore snapshot into a MemoryStore with the same messages', async () => {
    const s = await small(await tempDir());
    for (let i = 0; i < 40; i++) await s.append(`x.${i % 3}`, i % 2 ? enc('H') : undefined, enc(`m${i}`));
    await s.delete(7);
    const m = new MemoryStore();
    await m.restore(s.snapshot());
    const a = await s.readRange(1, 100);
    const b = await m.readRange(1, 100);
    expect(b.map((x) => [x.seq, x.subject, dec(x.header), dec(x.data), x.timestampNs])).toEqual(
      a.map((x) => [x.seq, x.subject, dec(x.header), dec(x.data), x.timestampNs]),
    );
    expect(m.state({ deleted: true }).deleted).toEqual([7]);
    await s.close();
    await m.close();
  });

  it('streams a snapshot of the messages live when it started, while appends go on', async () => {
    const s = await small(await tempDir(), { maxBlockMsgs: 100, maxBlockBytes: 64 * 1024 });
    await s.appendBatch(Array.from({ length: 3000 }, (_, i) => ({ subject: `s.${i % 7}`, data: enc(`d${i}`) })));
    const it = s.snapshot()[Symbol.asyncIterator]();
    const chunks: Uint8Array[] = [];
    let step = await it.next();
    while (!step.done) {
      chunks.push(step.value);
      if (chunks.length === 1) await s.appendBatch([{ subject: 's.x', data: enc('late') }]);
      step = await it.next();
    }
    const m = new MemoryStore();
    await m.restore((async function* () { yield* chunks; })());
    expect(m.state()).toMatchObject({ messages: 3000, first_seq: 1, last_seq: 3000 });
    expect(dec((await m.get(3000))!.data)).toBe('d2999');
    expect(s.state().last_seq).toBe(3001);
    await s.close();
    await m.close();
  });

  it('refuses work after close', async () => {
    const s = await small(await tempDir());
    await s.close();
    await expect(s.append('x', undefined, enc('y'))).rejects.toMatchObject({ code: 'CLOSED' });
  });
});
