// Client frames are masked (RFC 6455 §5.3) and ws unmasks them byte by byte in JS unless the native
// `bufferutil` is installed (an install script; not taken). That loop was the server's largest single
// cost in a WebSocket pub/sub profile (~20 % of its CPU). This replaces ws's fallback with one that XORs
// 32-bit words. It must run before ws's receiver loads (it destructures the function then): import this
// module before 'ws'. ws is pinned to an exact version, whose lib/buffer-util.js exports `unmask`.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** XORs `buf` with the 4-byte `mask` in place: bytes up to a 4-byte boundary, then words, then the tail. */
export function unmaskWords(buf: Uint8Array, mask: Uint8Array): void {
  const len = buf.length;
  let i = 0;
  const head = Math.min(len, (4 - (buf.byteOffset & 3)) & 3);
  for (; i < head; i++) buf[i]! ^= mask[i & 3]!;
  const words = (len - i) >>> 2;
  if (words > 0) {
    // the key rotated to start at byte i, as a word in the platform's byte order
    const key = new Uint8Array(4);
    for (let k = 0; k < 4; k++) key[k] = mask[(i + k) & 3]!;
    const key32 = new Uint32Array(key.buffer)[0]!;
    const view = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    for (let w = 0; w < words; w++) view[w]! ^= key32;
    i += words * 4;
  }
  for (; i < len; i++) buf[i]! ^= mask[i & 3]!;
}

const require = createRequire(import.meta.url);
// ws does not export lib/: its file is found next to its entry point (the same module ws's receiver loads)
const bufferUtil = require(join(dirname(require.resolve('ws')), 'lib', 'buffer-util.js')) as { unmask: (b: Uint8Array, m: Uint8Array) => void };
const original = bufferUtil.unmask;
// Small buffers keep ws's own function (native where bufferutil or a newer Node provides it).
bufferUtil.unmask = (buffer, mask) => (buffer.length < 32 ? original(buffer, mask) : unmaskWords(buffer, mask));
