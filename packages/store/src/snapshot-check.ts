// Reads a store's snapshot stream end to end and checks every record's crc32 — what nats-server's `jsck`
// snapshot option asks for (its filestore checks each message before the snapshot). Bounded: one frame at a
// time. Throws StoreError CORRUPT naming the first record that fails.
import { FRAME_END, FRAME_HEADER, FRAME_RECORDS, readFrames } from './snapshot-codec.js';
import { RecordCursor } from './record-codec.js';
import { StoreError } from './store-error.js';

/** The number of records checked. */
export async function checkSnapshotRecords(source: AsyncIterable<Uint8Array>): Promise<number> {
  let records = 0;
  let ended = false;
  for await (const { kind, payload } of readFrames(source)) {
    if (kind === FRAME_HEADER) continue;
    if (kind === FRAME_END) {
      ended = true;
      continue;
    }
    if (kind !== FRAME_RECORDS) throw new StoreError('CORRUPT', `snapshot frame kind ${kind}`);
    const cur = new RecordCursor(payload);
    for (let off = 0; off < payload.length; off = cur.end) {
      cur.readAt(off);
      if (!cur.sound(off)) throw new StoreError('CORRUPT', `message ${cur.seq} fails its checksum`);
      records++;
    }
  }
  if (!ended) throw new StoreError('CORRUPT', 'snapshot stream without its end');
  return records;
}
