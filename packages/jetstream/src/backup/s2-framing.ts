// The archive travels inside s2 stream framing (the Snappy framing format with s2's `S2sTwO` identifier),
// every block stored uncompressed: jsm.go (`nats stream backup`) feeds what it receives through an s2
// reader to count progress, and fails the backup on anything that is not an s2 stream. Framing: chunks of
// `type u8 | length u24 LE | body`; the identifier chunk 0xff, uncompressed data 0x01 (masked CRC-32C of
// the data, then the data), skippable 0x80–0xfe. A reader refuses compressed chunks (0x00): Flotilla never
// writes them, and such an archive is nats-server's, not Flotilla's.
const STREAM_ID = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x53, 0x32, 0x73, 0x54, 0x77, 0x4f]); // "S2sTwO"
const SNAPPY_ID_BODY = Buffer.from('sNaPpY', 'latin1');
const CHUNK_UNCOMPRESSED = 0x01;
const CHUNK_COMPRESSED = 0x00;
/** Snappy's limit for an uncompressed block; every s2 reader accepts it. */
const MAX_BLOCK_BYTES = 64 * 1024;

export class S2FramingError extends Error {}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC32C_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function maskedCrc(data: Uint8Array): number {
  const c = crc32c(data);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** `source` as an s2 stream of uncompressed blocks. */
export async function* s2Frame(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  yield Buffer.from(STREAM_ID);
  for await (const piece of source) {
    for (let off = 0; off < piece.length; off += MAX_BLOCK_BYTES) {
      const data = piece.subarray(off, Math.min(piece.length, off + MAX_BLOCK_BYTES));
      const head = Buffer.allocUnsafe(8);
      head[0] = CHUNK_UNCOMPRESSED;
      head.writeUIntLE(data.length + 4, 1, 3);
      head.writeUInt32LE(maskedCrc(data), 4);
      yield Buffer.concat([head, data]);
    }
  }
}

/** The data of an s2 stream of uncompressed blocks, each block's checksum verified. */
export async function* s2Unframe(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  let sawId = false;
  for await (const piece of source) {
    pending = pending.length === 0 ? Buffer.from(piece) : Buffer.concat([pending, piece]);
    for (;;) {
      if (pending.length < 4) break;
      const type = pending[0]!;
      const len = pending.readUIntLE(1, 3);
      if (pending.length < 4 + len) break;
      const body = pending.subarray(4, 4 + len);
      pending = pending.subarray(4 + len);
      if (type === 0xff) {
        if (len !== 6 || !(body.equals(STREAM_ID.subarray(4)) || body.equals(SNAPPY_ID_BODY))) throw new S2FramingError('not an s2 stream');
        sawId = true;
        continue;
      }
      if (!sawId) throw new S2FramingError('not an s2 stream');
      if (type === CHUNK_UNCOMPRESSED) {
        if (len < 4 || len - 4 > MAX_BLOCK_BYTES * 64) throw new S2FramingError('bad s2 block');
        const data = body.subarray(4);
        if (body.readUInt32LE(0) !== maskedCrc(data)) throw new S2FramingError('s2 block checksum mismatch');
        yield Buffer.from(data);
        continue;
      }
      if (type === CHUNK_COMPRESSED) throw new S2FramingError('not a flotilla stream archive (compressed s2 blocks)');
      if (type >= 0x80) continue; // skippable and padding
      throw new S2FramingError(`reserved s2 chunk type ${type}`);
    }
    if (!sawId && pending.length >= 10 && pending[0] !== 0xff) throw new S2FramingError('not an s2 stream');
  }
  if (pending.length !== 0) throw new S2FramingError('truncated s2 stream');
}
