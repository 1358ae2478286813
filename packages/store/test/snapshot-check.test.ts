// checkSnapshotRecords: what STREAM.SNAPSHOT's `jsck` runs over a store's snapshot stream.
import { describe, expect, it } from 'vitest';
import { MemoryStore, StoreError, checkSnapshotRecords } from '../src/index.js';

async function snapshotOf(n: number): Promise<Buffer[]> {
  const store = new MemoryStore();
  for (let i = 0; i < n; i++) await store.append(`s.${i}`, undefined, Buffer.from(`payload ${i}`));
  const out: Buffer[] = [];
  for await (const c of store.snapshot()) out.push(Buffer.from(c));
  return out;
}

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

describe('checkSnapshotRecords', () => {
  it('counts sound records', async () => {
    expect(await checkSnapshotRecords(from(await snapshotOf(25)))).toBe(25);
  });

  it('names the first record whose checksum fails', async () => {
    const chunks = await snapshotOf(3);
    const whole = Buffer.concat(chunks);
    // The last record's data sits just before its crc and the END frame (5 bytes).
    whole[whole.length - 5 - 4 - 1] ^= 0xff;
    await expect(checkSnapshotRecords(from([whole]))).rejects.toThrow(StoreError);
    await expect(checkSnapshotRecords(from([whole]))).rejects.toThrow('message 3 fails its checksum');
  });
});
