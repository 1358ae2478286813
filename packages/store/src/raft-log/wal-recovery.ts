// Recovery of the Raft log store at open: LevelDB says which WAL batch it holds last (its walseq key, written in
// the same atomic batch); the WAL records after it are applied to LevelDB in order, LevelDB is synced, and the
// WAL files are removed. Records stop at the first torn or invalid one, and at a gap in the sequence.
import { readFile } from 'node:fs/promises';
import type { Level } from 'level';
import { WAL_SEQ_KEY, decodeSeq, encodeSeq, readWalRecord, type BatchOp } from './wal-codec.js';
import { listSegments, removeSegments } from './wal-segment.js';

/** Replayed ops are handed to LevelDB in batches of about this many bytes. */
const REPLAY_BATCH_BYTES = 4 * 1024 * 1024;

export interface WalRecovery {
  /** Sequence number of the last batch LevelDB holds (durably) after recovery. */
  lastSeq: number;
  /** WAL batches LevelDB lacked and recovery applied. */
  replayedBatches: number;
}

export async function recoverWal(db: Level<Uint8Array, Uint8Array>, walDir: string): Promise<WalRecovery> {
  const stored = await db.get(WAL_SEQ_KEY);
  const levelSeq = stored ? decodeSeq(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength)) : 0;
  let lastSeq = levelSeq;
  let replayedBatches = 0;
  let ops: BatchOp[] = [];
  let opBytes = 0;
  const applyPending = async (): Promise<void> => {
    if (ops.length === 0) return;
    ops.push({ type: 'put', key: WAL_SEQ_KEY, value: encodeSeq(lastSeq) });
    await db.batch(ops, { sync: false });
    ops = [];
    opBytes = 0;
  };
  const segments = await listSegments(walDir);
  scan: for (const segment of segments) {
    const buf = await readFile(segment.path);
    // Each record advances the offset by at least its header, so the loop ends within the file.
    for (let offset = 0; offset < buf.length; ) {
      const record = readWalRecord(buf, offset);
      if (!record) break;
      offset = record.end;
      if (record.seq <= levelSeq) continue;
      // Records are written in order with nothing skipped: a gap means what follows is not this history.
      if (record.seq !== lastSeq + 1) break scan;
      for (const op of record.ops) {
        ops.push(op);
        opBytes += op.key.length + (op.type === 'put' ? op.value.length : 0);
      }
      lastSeq = record.seq;
      replayedBatches++;
      if (opBytes >= REPLAY_BATCH_BYTES) await applyPending();
    }
  }
  await applyPending();
  // One synced write makes every LevelDB batch durable, replayed or not, before the records go.
  await db.put(WAL_SEQ_KEY, encodeSeq(lastSeq), { sync: true });
  await removeSegments(
    walDir,
    segments.map((s) => s.path),
  );
  return { lastSeq, replayedBatches };
}
