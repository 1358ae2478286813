// The Snappy framing format of `Content-Encoding: snappy` answers: stream identifier, chunks of at most 64 KiB
// input (compressed, or stored when compression does not help), masked CRC-32C per chunk.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { snappyFramed, snappyUnframed } from '../src/system-account/snappy-frames.js';

describe('snappy framing', () => {
  it('starts with the stream identifier; an empty input is the identifier alone', () => {
    expect(snappyFramed(Buffer.alloc(0))).toEqual(Buffer.from([0xff, 6, 0, 0, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]));
  });

  it('compressible data: compressed chunks of at most 64 KiB input, read back whole', () => {
    const data = Buffer.from('{"subject":"orders.new","qgroup":"workers"},'.repeat(5000));
    const framed = snappyFramed(data);
    expect(framed.length).toBeLessThan(data.length / 4);
    expect(framed[10]).toBe(0x00); // first chunk compressed
    expect(snappyUnframed(framed).equals(data)).toBe(true);
  });

  it('incompressible data is stored uncompressed (chunk type 1), and read back whole', () => {
    const data = randomBytes(70_000);
    const framed = snappyFramed(data);
    expect(framed[10]).toBe(0x01);
    expect(snappyUnframed(framed).equals(data)).toBe(true);
  });

  it('a flipped byte fails the chunk checksum', () => {
    const framed = snappyFramed(randomBytes(100));
    framed[framed.length - 1] ^= 0xff;
    expect(() => snappyUnframed(framed)).toThrow('checksum');
  });
});
