// The word-wise unmask equals the byte-wise definition (RFC 6455 §5.3) at every length and alignment.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { unmaskWords } from '../src/websocket/word-unmask.js';

function unmaskBytes(buf: Uint8Array, mask: Uint8Array): void {
  for (let i = 0; i < buf.length; i++) buf[i]! ^= mask[i & 3]!;
}

describe('unmaskWords', () => {
  it('matches the byte-wise XOR for lengths 0..200 at offsets 0..7', () => {
    const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
    for (let len = 0; len <= 200; len++) {
      for (let off = 0; off < 8; off++) {
        const base = randomBytes(len + off + 4);
        const words = Buffer.from(base);
        const bytes = Buffer.from(base);
        unmaskWords(words.subarray(off, off + len), mask);
        unmaskBytes(bytes.subarray(off, off + len), mask);
        expect(words.equals(bytes)).toBe(true);
      }
    }
  });

  it('twice is the identity (masking and unmasking are the same XOR)', () => {
    const data = randomBytes(4099);
    const copy = Buffer.from(data);
    const mask = randomBytes(4);
    unmaskWords(copy.subarray(3), mask);
    unmaskWords(copy.subarray(3), mask);
    expect(copy.equals(data)).toBe(true);
  });
});
