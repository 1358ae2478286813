// The Snappy framing format (google/snappy framing_format.txt), which nats-server writes for
// `Content-Encoding: snappy` (s2's writer in Snappy-compatible mode) and its clients read: a stream identifier,
// then chunks of at most 64 KiB of input, each compressed (`snappy`, a native binding) or stored as is when
// that is not smaller, each with the masked CRC-32C of its uncompressed bytes. The native binding is loaded on
// first use, so a platform without its prebuilt binary still starts (and answers such requests uncompressed).
import { createRequire } from 'node:module';

type SnappyBinding = typeof import('snappy');

/** The snappy binding could not be loaded on this platform. */
export class SnappyUnavailableError extends Error {
  readonly code = 'SNAPPY_UNAVAILABLE';
}

let binding: SnappyBinding | null = null;
let loadError: Error | null = null;

function snappyBinding(): SnappyBinding {
  if (binding !== null) return binding;
  if (loadError === null) {
    try {
      binding = createRequire(import.meta.url)('snappy') as SnappyBinding;
      return binding;
    } catch (err) {
      loadError = err instanceof Error ? err : new Error(String(err));
    }
  }
  throw new SnappyUnavailableError(`snappy binding unavailable: ${loadError.message}`);
}

const STREAM_IDENTIFIER = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);
const COMPRESSED_CHUNK = 0x00;
const UNCOMPRESSED_CHUNK = 0x01;
const MAX_CHUNK_INPUT_BYTES = 65_536;
const CRC_BYTES = 4;

/** `data` as a framed Snappy stream. */
export function snappyFramed(data: Buffer): Buffer {
  const snappy = snappyBinding();
  const parts: Buffer[] = [STREAM_IDENTIFIER];
  for (let at = 0; at < data.length; at += MAX_CHUNK_INPUT_BYTES) {
    const input = data.subarray(at, at + MAX_CHUNK_INPUT_BYTES);
    const compressed = snappy.compressSync(input);
    const useCompressed = compressed.length < input.length;
    const body = useCompressed ? compressed : input;
    const header = Buffer.alloc(4 + CRC_BYTES);
    header[0] = useCompressed ? COMPRESSED_CHUNK : UNCOMPRESSED_CHUNK;
    header.writeUIntLE(CRC_BYTES + body.length, 1, 3);
    header.writeUInt32LE(maskedCrc32c(input), 4);
    parts.push(header, body);
  }
  return Buffer.concat(parts);
}

/** Reads a framed Snappy stream (for tests and tools); throws RangeError on a malformed one. */
export function snappyUnframed(framed: Uint8Array): Buffer {
  const snappy = snappyBinding();
  const b = Buffer.from(framed.buffer, framed.byteOffset, framed.byteLength);
  if (!b.subarray(0, STREAM_IDENTIFIER.length).equals(STREAM_IDENTIFIER)) throw new RangeError('no snappy stream identifier');
  const out: Buffer[] = [];
  let at = STREAM_IDENTIFIER.length;
  while (at < b.length) {
    if (at + 4 > b.length) throw new RangeError('truncated snappy chunk header');
    const type = b[at]!;
    const length = b.readUIntLE(at + 1, 3);
    const chunk = b.subarray(at + 4, at + 4 + length);
    if (chunk.length !== length) throw new RangeError('truncated snappy chunk');
    at += 4 + length;
    if (type !== COMPRESSED_CHUNK && type !== UNCOMPRESSED_CHUNK) {
      if (type >= 0x80) continue; // skippable (padding, another stream identifier)
      throw new RangeError(`reserved snappy chunk type ${type}`);
    }
    const body = chunk.subarray(CRC_BYTES);
    const data = type === COMPRESSED_CHUNK ? (snappy.uncompressSync(body, { asBuffer: true }) as Buffer) : Buffer.from(body);
    if (maskedCrc32c(data) !== chunk.readUInt32LE(0)) throw new RangeError('snappy chunk checksum mismatch');
    out.push(data);
  }
  return Buffer.concat(out);
}

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli), masked as the framing format asks so a CRC of CRCs stays well distributed. */
function maskedCrc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = CRC32C_TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  crc = (crc ^ 0xffffffff) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
