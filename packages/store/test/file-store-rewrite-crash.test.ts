// A crash between a flush's segment write and its LevelDB batch, made deterministic: the batch is held
// at a gate while the store's files are copied (what a kill -9 at that moment leaves), then the copy is
// reopened and checked like the crash test does.
import { readFileSync, readdirSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@flotilla/store';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'flotilla-rewrite-crash-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const MAX_MSGS = 10;
const OPTIONS = { maxBlockMsgs: 4, maxBlockBytes: 4096, limits: { maxMsgs: MAX_MSGS } };
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

interface BatchDb {
  batch: (ops: unknown, opts: unknown) => Promise<void>;
}

/** Holds the store's next LevelDB batches until `release`; `reached` resolves when the first one is held. */
function holdIndexWrites(store: FileStore): { reached: Promise<void>; release: () => void } {
  const db = (store as unknown as { db: BatchDb }).db;
  const original = db.batch.bind(db);
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reachedP = new Promise<void>((r) => (reached = r));
  db.batch = (ops, opts) => {
    reached();
    return gate.then(() => original(ops, opts));
  };
  return { reached: reachedP, release };
}

/** Bytes of frames in the store's segment files right now (the zeros written ahead of the tail are not). */
function segmentBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) {
    if (!f.startsWith('seg-')) continue;
    const bytes = readFileSync(join(dir, f));
    let end = bytes.length;
    while (end > 0 && bytes[end - 1] === 0) end--; // these frames end in their last record's non-zero data
    n += end;
  }
  return n;
}

describe('FileStore crash between segment write and index batch', () => {
  it('writes the floor of limit removals only after the appends that caused them', async () => {
    const dir = await tempDir();
    const s = await FileStore.open({ dir, ...OPTIONS });
    for (let i = 0; i < MAX_MSGS; i++) await s.append('x', undefined, enc(`m${i}`));
    const db = (s as unknown as { db: BatchDb }).db;
    const original = db.batch.bind(db);
    const seenAtBatch: number[] = [];
    db.batch = (ops, opts) => {
      seenAtBatch.push(segmentBytes(dir));
      return original(ops, opts);
    };
    // Five appends push 1..5 out: the flush writes a new floor. Had it reached LevelDB before the appends
    // reached the segment, a kill in between would hide 1..5 with nothing in their place.
    await s.appendBatch(Array.from({ length: 5 }, (_, i) => ({ subject: 'x', data: enc(`n${i}`) })));
    const after = segmentBytes(dir);
    db.batch = original;
    await s.close();
    expect(seenAtBatch.length).toBeGreaterThan(0);
    expect(seenAtBatch[0]).toBe(after);
  });

  it('an erase rewrite does not drop acknowledged messages whose limit removal is not yet durable', async () => {
    const dir = await tempDir();
    const s = await FileStore.open({ dir, ...OPTIONS });
    // Blocks [1..4] [5..8] [9,10], each flush acknowledged; the floor on disk is 1.
    const acked = new Set<number>();
    for (const n of [4, 4, 2]) {
      const batch = Array.from({ length: n }, (_, i) => ({ subject: 'x', data: enc(`m${acked.size + i + 1}`) }));
      for (const r of await s.appendBatch(batch)) acked.add(r.seq);
    }
    expect([...acked]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // One flush: five appends push 1..5 out through max_msgs (5 is in the second block) while 7 is erased,
    // so the second block is rewritten without 5 and 7.
    const held = holdIndexWrites(s);
    const appends = s.appendBatch(Array.from({ length: 5 }, (_, i) => ({ subject: 'x', data: enc(`n${i}`) })));
    const erase = s.delete(7, { erase: true });
    await held.reached;
    // The kill: the new copy is written (and the old one zeroed), the floor that hides 1..5 is not.
    const crashed = await tempDir();
    await cp(dir, crashed, { recursive: true });
    held.release();
    await Promise.all([appends, erase]);
    await s.close();

    const r = await FileStore.open({ dir: crashed, ...OPTIONS });
    try {
      const st = r.state();
      const present = new Set((await r.readRange(1, 100)).map((m) => m.seq));
      // max_msgs only ever removes the oldest: every acknowledged message from first_seq on is there
      // (7's erase was not acknowledged, so it may have landed).
      for (const seq of acked) {
        if (seq === 7 || seq < st.first_seq) continue;
        expect(present.has(seq), `acked seq ${seq} (first_seq ${st.first_seq})`).toBe(true);
      }
      expect(st.messages).toBe(present.size);
    } finally {
      await r.close();
    }
  });
});
