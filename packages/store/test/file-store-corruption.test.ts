// Damage in a FileStore's segment files (bit flips in a payload, a record header, a frame header): open
// loses exactly the damaged records, reports each damaged run (file, offset, sequences around it), keeps
// every sound record after it, and rewrites the survivors so the next open finds no damage.
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore, StoreError, damageTotals, setDamageObserver, type StoreDamage } from '@flotilla/store';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const reports: StoreDamage[] = [];
beforeEach(() => {
  reports.length = 0;
  setDamageObserver((d) => reports.push(d));
});
afterEach(() => {
  setDamageObserver(null);
});

const FRAME_HEADER_BYTES = 28;
const RECORD_FIXED_BYTES = 26;
const MSGS = 400;
const PER_BLOCK = 50;
const payloadOf = (seq: number): string => `payload-${seq}-`.padEnd(100, String.fromCharCode(97 + (seq % 26)));

async function writtenStore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flotilla-corrupt-'));
  dirs.push(dir);
  const s = await FileStore.open({ dir, maxBlockMsgs: PER_BLOCK });
  for (let i = 0; i < MSGS; i += PER_BLOCK) {
    await Promise.all(Array.from({ length: PER_BLOCK }, (_, k) => s.append(`sub.${(i + k) % 5}`, undefined, Buffer.from(payloadOf(i + k + 1)))));
  }
  await s.close();
  return dir;
}

interface Frame {
  pos: number;
  len: number;
  /** Offset in the file of each record, and its sequence. */
  records: { at: number; seq: number; dataAt: number }[];
}

async function segmentOf(dir: string): Promise<{ path: string; bytes: Buffer; frames: Frame[] }> {
  const name = (await readdir(dir)).filter((n) => n.startsWith('seg-')).sort()[0]!;
  const path = join(dir, name);
  const bytes = await readFile(path);
  const frames: Frame[] = [];
  for (let pos = 0; pos + FRAME_HEADER_BYTES <= bytes.length && bytes.readUInt32BE(pos) === 0x464c5432; ) {
    const len = bytes.readUInt32BE(pos + 4);
    const records: Frame['records'] = [];
    for (let at = pos + FRAME_HEADER_BYTES; at < pos + FRAME_HEADER_BYTES + len; ) {
      const subjectLen = bytes.readUInt16BE(at + 16);
      const headerLen = bytes.readUInt32BE(at + 18);
      const dataLen = bytes.readUInt32BE(at + 22);
      records.push({ at, seq: Number(bytes.readBigUInt64BE(at)), dataAt: at + RECORD_FIXED_BYTES + subjectLen + headerLen });
      at += RECORD_FIXED_BYTES + subjectLen + headerLen + dataLen + 4;
    }
    frames.push({ pos, len, records });
    pos += FRAME_HEADER_BYTES + len;
  }
  return { path, bytes, frames };
}

async function flip(path: string, bytes: Buffer, offset: number, bit = 0): Promise<void> {
  bytes[offset] ^= 1 << bit;
  await writeFile(path, bytes);
}

/** Opens the store and returns the sequences it holds, checking each message's content. */
async function contentOf(dir: string): Promise<number[]> {
  const s = await FileStore.open({ dir, maxBlockMsgs: PER_BLOCK });
  try {
    const msgs = await s.readRange(1, 10_000);
    for (const m of msgs) {
      expect(Buffer.from(m.data).toString()).toBe(payloadOf(m.seq));
      expect(m.subject).toBe(`sub.${(m.seq - 1) % 5}`);
    }
    expect(s.state().messages).toBe(msgs.length);
    expect(s.state().last_seq).toBe(MSGS);
    return msgs.map((m) => m.seq);
  } finally {
    await s.close();
  }
}

const all = (except: number[] = []): number[] => Array.from({ length: MSGS }, (_, i) => i + 1).filter((s) => !except.includes(s));

describe('FileStore damage', () => {
  it('a flipped payload bit loses that record only, is reported, and is gone after the next open', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    expect(frames.length).toBe(MSGS / PER_BLOCK);
    const victim = frames[3]!.records[10]!;
    const before = damageTotals().regions;
    await flip(path, bytes, victim.dataAt + 5, 3);
    expect(await contentOf(dir)).toEqual(all([victim.seq]));
    expect(reports).toEqual([{ file: path, offset: victim.at, bytes: frames[3]!.records[11]!.at - victim.at, afterSeq: victim.seq - 1, beforeSeq: victim.seq + 1 }]);
    expect(damageTotals().regions).toBe(before + 1);
    // The survivors were written again and the damaged copy erased: nothing to report any more.
    reports.length = 0;
    expect(await contentOf(dir)).toEqual(all([victim.seq]));
    expect(reports).toEqual([]);
  });

  it('a flipped record-header bit (a length) loses that record only; the next records are found again', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    const victim = frames[2]!.records[0]!;
    await flip(path, bytes, victim.at + 24, 6); // dataLen
    expect(await contentOf(dir)).toEqual(all([victim.seq]));
    expect(reports.length).toBe(1);
    expect(reports[0]).toMatchObject({ file: path, offset: victim.at, afterSeq: victim.seq - 1, beforeSeq: victim.seq + 1 });
  });

  it('two damaged records in one frame are two runs, each losing one record', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    const a = frames[1]!.records[5]!;
    const b = frames[1]!.records[30]!;
    bytes[a.dataAt] ^= 0x10;
    await flip(path, bytes, b.at + 3, 1); // the sequence
    expect(await contentOf(dir)).toEqual(all([a.seq, b.seq]));
    expect(reports.map((r) => [r.afterSeq, r.beforeSeq])).toEqual([
      [a.seq - 1, a.seq + 1],
      [b.seq - 1, b.seq + 1],
    ]);
  });

  it('a damaged frame header loses nothing: the scan resynchronises and keeps every record', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    const victim = frames[4]!;
    await flip(path, bytes, victim.pos + 5, 2); // the body length
    expect(await contentOf(dir)).toEqual(all());
    expect(reports).toEqual([{ file: path, offset: victim.pos, bytes: FRAME_HEADER_BYTES, afterSeq: victim.records[0]!.seq - 1, beforeSeq: victim.records[0]!.seq }]);
    reports.length = 0;
    expect(await contentOf(dir)).toEqual(all());
    expect(reports).toEqual([]);
  });

  it('damaged magic of the last frame: its records are kept (not truncated as a torn tail)', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    const last = frames[frames.length - 1]!;
    await flip(path, bytes, last.pos, 0);
    expect(await contentOf(dir)).toEqual(all());
    expect(reports.length).toBe(1);
    expect(reports[0]).toMatchObject({ offset: last.pos, beforeSeq: last.records[0]!.seq });
  });

  it('a frame header and the first record behind it damaged: that record lost, the rest kept', async () => {
    const dir = await writtenStore();
    const { path, bytes, frames } = await segmentOf(dir);
    const victim = frames[5]!;
    bytes[victim.pos + 1] ^= 0xff;
    await flip(path, bytes, victim.records[0]!.dataAt, 0);
    expect(await contentOf(dir)).toEqual(all([victim.records[0]!.seq]));
    expect(reports.length).toBe(1);
    expect(reports[0]).toMatchObject({ offset: victim.pos, afterSeq: victim.records[0]!.seq - 1, beforeSeq: victim.records[1]!.seq });
  });

  it('refuses a store of format 1 with an error saying so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flotilla-corrupt-'));
    dirs.push(dir);
    await mkdir(dir, { recursive: true });
    const old = Buffer.alloc(64);
    old.writeUInt32BE(0x464c5442, 0);
    await writeFile(join(dir, 'seg-000000000001.log'), old);
    const err = await FileStore.open({ dir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('CORRUPT');
    expect((err as StoreError).message).toContain('format 1');
  });
});
