// The s2 stream framing the backup archive travels in (jsm.go s2-decodes what it receives to count progress).
import { describe, expect, it } from 'vitest';
import { crc32c, s2Frame, s2Unframe, S2FramingError } from '../src/backup/s2-framing.js';

async function* from(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const b of it) out.push(b);
  return Buffer.concat(out);
}

describe('s2 framing', () => {
  it('uses CRC-32C (its check value) and the S2sTwO stream identifier', async () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    const framed = await collect(s2Frame(from([Buffer.from('abc')])));
    expect(framed.subarray(0, 10)).toEqual(Buffer.from([0xff, 6, 0, 0, ...Buffer.from('S2sTwO')]));
    // One uncompressed block: type 1, length 4 + 3, masked crc, data.
    expect(framed[10]).toBe(1);
    expect(framed.readUIntLE(11, 3)).toBe(7);
    expect(framed.subarray(18)).toEqual(Buffer.from('abc'));
  });

  it('round-trips data in 64 KiB blocks through any cut', async () => {
    const data = Buffer.alloc(200_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const framed = await collect(s2Frame(from([data])));
    const pieces: Buffer[] = [];
    for (let off = 0; off < framed.length; off += 777) pieces.push(framed.subarray(off, off + 777));
    expect((await collect(s2Unframe(from(pieces)))).equals(data)).toBe(true);
  });

  it('refuses a damaged block, a truncated stream and compressed blocks', async () => {
    const framed = await collect(s2Frame(from([Buffer.from('hello world')])));
    const bad = Buffer.from(framed);
    bad[bad.length - 1] ^= 1;
    await expect(collect(s2Unframe(from([bad])))).rejects.toThrow(new S2FramingError('s2 block checksum mismatch'));
    await expect(collect(s2Unframe(from([framed.subarray(0, framed.length - 2)])))).rejects.toThrow(new S2FramingError('truncated s2 stream'));
    const compressed = Buffer.concat([framed.subarray(0, 10), Buffer.from([0, 5, 0, 0, 1, 2, 3, 4, 5])]);
    await expect(collect(s2Unframe(from([compressed])))).rejects.toThrow(S2FramingError);
  });
});
