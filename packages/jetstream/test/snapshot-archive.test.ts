// Flotilla's backup archive: a round trip through arbitrary chunk cuts, and the damage a reader refuses.
import { describe, expect, it } from 'vitest';
import { ArchiveError, ArchiveReader, encodeArchive, fixedChunks, type ArchiveMeta } from '../src/backup/snapshot-archive.js';
import type { StreamConfig } from '../src/stream/stream-config-types.js';

const META: ArchiveMeta = { config: { name: 'S' } as StreamConfig, created: '2026-01-01T00:00:00Z', state: { messages: 2 }, consumers: [] };

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

async function archiveBytes(store: Uint8Array[]): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const b of encodeArchive(META, from(store))) out.push(b);
  return Buffer.concat(out);
}

async function readAll(bytes: Buffer, cut: number): Promise<{ meta: ArchiveMeta; store: Buffer }> {
  const pieces: Buffer[] = [];
  for await (const c of fixedChunks(from([bytes]), cut)) pieces.push(c);
  const reader = new ArchiveReader(from(pieces));
  const meta = await reader.meta();
  const store: Buffer[] = [];
  for await (const s of reader.store()) store.push(s);
  expect(reader.complete).toBe(true);
  return { meta, store: Buffer.concat(store) };
}

describe('the backup archive', () => {
  const storeBytes = [Buffer.alloc(300_000, 1), Buffer.from('tail')];

  it('reads back what was written, whatever the chunk size', async () => {
    const bytes = await archiveBytes(storeBytes);
    for (const cut of [1024, 4096, 128 * 1024, bytes.length]) {
      const { meta, store } = await readAll(bytes, cut);
      expect(meta).toEqual(META);
      expect(store.equals(Buffer.concat(storeBytes))).toBe(true);
    }
  });

  it('cuts exact chunks, the last one shorter', async () => {
    const sizes: number[] = [];
    for await (const c of fixedChunks(from([Buffer.alloc(2500), Buffer.alloc(10)]), 1024)) sizes.push(c.length);
    expect(sizes).toEqual([1024, 1024, 462]);
  });

  it('refuses a flipped byte, a truncation, trailing data and foreign bytes', async () => {
    const bytes = await archiveBytes(storeBytes);
    const flipped = Buffer.from(bytes);
    flipped[bytes.length - 100] ^= 0xff;
    await expect(readAll(flipped, 4096)).rejects.toThrow(new ArchiveError('archive checksum mismatch'));
    await expect(readAll(bytes.subarray(0, bytes.length - 3), 4096)).rejects.toThrow(new ArchiveError('truncated archive'));
    await expect(readAll(Buffer.concat([bytes, Buffer.from('x')]), 4096)).rejects.toThrow(new ArchiveError('data after the end of the archive'));
    await expect(readAll(Buffer.alloc(100, 7), 4096)).rejects.toThrow(new ArchiveError('not a flotilla stream archive'));
  });
});
