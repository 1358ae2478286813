/**
 * RaftLogStore on LevelDB. Each write's entries become ONE value (a block keyed by its first index), and every
 * write issued while the previous batch is in flight (or in the same tick) goes into ONE LevelDB batch:
 * group commit across all Raft groups sharing the store. A LevelDB batch is atomic, so after a crash the log
 * is a prefix of what was written, with hard state and entries consistent.
 *
 * With the write-ahead file (default), a batch goes as one record to the WAL and a synced batch is durable once
 * its record is (one write on a pre-zeroed file: far cheaper than a synced LevelDB write); LevelDB gets the
 * batches unsynced, in order, a few at a time (LevelApplier). A full WAL segment is checkpointed (one synced
 * LevelDB write) and replaced; `open()` replays the records LevelDB lacks. LevelDB stays the store of record.
 */
import type { HardState, LogWrite, PersistedState, RaftLogStore, Snapshot } from '@flotilla/raft';
import { Level } from 'level';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { observeFsync } from '../fsync-observer.js';
import { KeyedSerialQueue } from '../serial-queue.js';
import { LevelApplier } from './level-applier.js';
import { RaftWal } from './raft-wal.js';
import { encodeWalRecord, type BatchOp } from './wal-codec.js';
import { recoverWal } from './wal-recovery.js';
import { listSegments, type WalSyncMode } from './wal-segment.js';
import {
  blockFirstIndex,
  blockKey,
  blockRange,
  decodeBlock,
  decodeHardState,
  decodeSnapshot,
  encodeBlock,
  encodeHardState,
  encodeSnapshot,
  hardStateKey,
  snapshotKey,
} from './raft-log-codec.js';

type DB = Level<Uint8Array, Uint8Array>;

interface BlockSpan {
  first: number;
  last: number;
}

export interface LevelRaftLogStoreOptions {
  /** Directory of the LevelDB database (created if missing). */
  dir: string;
  /** LevelDB memtable size (default 64 MiB). */
  writeBufferBytes?: number;
  /** Write-ahead file in front of LevelDB (default true); false: every synced batch is a synced LevelDB write. */
  wal?: boolean;
  /** How a WAL record is made durable: one write on an O_DSYNC descriptor (default) or write + fdatasync. */
  walSync?: WalSyncMode;
  /** A WAL segment this full is checkpointed and replaced (default 64 MiB). */
  walSegmentBytes?: number;
  /** Pre-zero WAL segments (default true) so a synced record write changes no file metadata. */
  walPrezero?: boolean;
  /** With the WAL: batches wait up to this long to be applied to LevelDB together (default 10 ms). */
  levelApplyDelayMs?: number;
}

/** Test-only fault injection: each makes the store stop as a crash would at that point. */
export interface RaftLogStoreTestHooks {
  /** Batches reach the WAL but not LevelDB (as if LevelDB lost its unsynced batches). */
  skipLevelDb?: boolean;
  /** The next checkpoint fails after its synced LevelDB write, or after creating the new segment. */
  failCheckpointAfter?: 'level-sync' | 'new-segment';
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
const MAX_CHUNK_BYTES = 1024 * 1024;
/** Records of non-synced batches held in memory at most (then written, synced, with the next batch). */
const MAX_PENDING_RECORD_BYTES = 1024 * 1024;
/** LevelDB ops waiting to be applied beyond this are applied at once; twice this holds back new batches. */
const MAX_LEVEL_BACKLOG_BYTES = 4 * 1024 * 1024;
/** WAL batches wait this long to be applied to LevelDB together (an awaited R3 publish is ~3 ms: ~15 per batch). */
const DEFAULT_LEVEL_APPLY_DELAY_MS = 50;
/** Subdirectory of the LevelDB directory holding the WAL segments (LevelDB ignores it). */
const WAL_DIR = 'wal';

export interface RaftLogStoreStats {
  /** LevelDB batches written, and how many of them were synced. */
  batches: number;
  syncedBatches: number;
  /** Wall time spent inside synced batch writes (write + fsync), in milliseconds. */
  syncedBatchMs: number;
  /** write() calls folded into batches. */
  writes: number;
  /** WAL checkpoints (a synced LevelDB write, then a new segment). */
  checkpoints: number;
  /** WAL batches replayed into LevelDB by open(). */
  replayedBatches: number;
}

export class LevelRaftLogStore implements RaftLogStore {
  readonly stats: RaftLogStoreStats = { batches: 0, syncedBatches: 0, syncedBatchMs: 0, writes: 0, checkpoints: 0, replayedBatches: 0 };
  /** Fault injection for tests; never set in production. */
  testHooks: RaftLogStoreTestHooks = {};
  private readonly spans = new Map<string, BlockSpan[]>();
  /** Per-group queue so one group's writes apply in order even if callers overlap them. */
  private readonly groupQueues = new KeyedSerialQueue<string>();
  private pendingOps: BatchOp[] = [];
  private pendingWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private pendingSync = false;
  private flushScheduled = false;
  private inFlight: Promise<void> | null = null;
  private closed = false;
  /** After a failed batch the WAL and LevelDB may disagree: every later write fails until a reopen recovers. */
  private failure: unknown = null;

  private readonly level: LevelApplier | null;

  private constructor(
    private readonly db: DB,
    private readonly wal: RaftWal | null,
    lastSeq: number,
    levelApplyDelayMs: number,
  ) {
    this.level = wal
      ? new LevelApplier(db, lastSeq, {
          delayMs: levelApplyDelayMs,
          maxPendingBytes: MAX_LEVEL_BACKLOG_BYTES,
          skip: () => this.testHooks.skipLevelDb === true,
        })
      : null;
  }

  static async open(options: LevelRaftLogStoreOptions): Promise<LevelRaftLogStore> {
    // 'view' (plain Uint8Array) encodings: with 'buffer' classic-level spends far longer inside batch().
    const db = new Level<Uint8Array, Uint8Array>(options.dir, {
      keyEncoding: 'view',
      valueEncoding: 'view',
      // Log blocks are large, short-lived values: a big memtable avoids constant L0 flushes and stalls.
      writeBufferSize: options.writeBufferBytes ?? 64 * 1024 * 1024,
      compression: false,
    });
    await db.open();
    const walDir = join(options.dir, WAL_DIR);
    const useWal = options.wal ?? true;
    let wal: RaftWal | null = null;
    let replayedBatches = 0;
    let lastSeq = 0;
    try {
      // Recovery also runs with the WAL off, so a directory last written with it loses nothing.
      if (useWal || (await listSegments(walDir)).length > 0) {
        const recovered = await recoverWal(db, walDir);
        replayedBatches = recovered.replayedBatches;
        lastSeq = recovered.lastSeq;
        if (useWal) {
          await mkdir(walDir, { recursive: true });
          const segmentBytes = options.walSegmentBytes ?? DEFAULT_SEGMENT_BYTES;
          wal = await RaftWal.create(
            {
              dir: walDir,
              syncMode: options.walSync ?? 'dsync',
              segmentBytes,
              chunkBytes: options.walPrezero === false ? 0 : Math.min(MAX_CHUNK_BYTES, segmentBytes),
              maxPendingBytes: MAX_PENDING_RECORD_BYTES,
            },
            recovered.lastSeq + 1,
          );
        }
      }
    } catch (error) {
      await db.close();
      throw error;
    }
    const store = new LevelRaftLogStore(db, wal, lastSeq, options.levelApplyDelayMs ?? DEFAULT_LEVEL_APPLY_DELAY_MS);
    store.stats.replayedBatches = replayedBatches;
    return store;
  }

  async load(group: string): Promise<PersistedState> {
    await this.groupQueues.idle(group);
    await this.level?.caughtUp();
    const snapBuf = asBuffer(await this.db.get(snapshotKey(group)));
    const snapshot = snapBuf ? decodeSnapshot(snapBuf) : null;
    const hsBuf = asBuffer(await this.db.get(hardStateKey(group)));
    const hardState = hsBuf ? decodeHardState(hsBuf) : { term: 0, vote: 0, commit: 0 };
    const spans: BlockSpan[] = [];
    const entries: PersistedState['entries'] = [];
    const floor = snapshot?.meta.index ?? 0;
    for await (const [key, value] of this.db.iterator(blockRange(group))) {
      const first = blockFirstIndex(asBuffer(key)!);
      const block = decodeBlock(first, asBuffer(value)!);
      if (block.length === 0) continue;
      spans.push({ first, last: first + block.length - 1 });
      for (const e of block) {
        if (e.index <= floor) continue;
        const expected = entries.length > 0 ? entries[entries.length - 1]!.index + 1 : floor + 1;
        // A gap cannot happen with atomic batches; stop at one rather than hand raft a broken log.
        if (e.index !== expected) break;
        entries.push(e);
      }
    }
    this.spans.set(group, spans);
    return { hardState, snapshot, entries };
  }

  write(update: LogWrite): Promise<void> {
    return this.inGroupOrder(update.group, () => this.doWrite(update));
  }

  compact(group: string, snapshot: Snapshot): Promise<void> {
    return this.inGroupOrder(group, async () => {
      const spans = await this.spansOf(group);
      const ops: BatchOp[] = [{ type: 'put', key: snapshotKey(group), value: encodeSnapshot(snapshot) }];
      const keep: BlockSpan[] = [];
      for (const s of spans) {
        if (s.last <= snapshot.meta.index) ops.push({ type: 'del', key: blockKey(group, s.first) });
        else keep.push(s);
      }
      this.spans.set(group, keep);
      await this.enqueue(ops, true);
    });
  }

  drop(group: string): Promise<void> {
    return this.replaceGroup(group, null);
  }

  reset(group: string, hardState: HardState): Promise<void> {
    return this.replaceGroup(group, hardState);
  }

  /** Deletes the group's snapshot and blocks, and its hard state unless one replaces it: one atomic batch. */
  private replaceGroup(group: string, hardState: HardState | null): Promise<void> {
    return this.inGroupOrder(group, async () => {
      const ops: BatchOp[] = [
        { type: 'del', key: snapshotKey(group) },
        hardState === null ? { type: 'del', key: hardStateKey(group) } : { type: 'put', key: hardStateKey(group), value: encodeHardState(hardState) },
      ];
      // Every block key, read from disk (the span cache may not be loaded for this group).
      await this.level?.caughtUp();
      for await (const key of this.db.keys(blockRange(group))) ops.push({ type: 'del', key: asBuffer(key)! });
      if (hardState === null) this.spans.delete(group);
      else this.spans.set(group, []);
      await this.enqueue(ops, true);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.groupQueues.idleAll();
    while (this.inFlight || this.pendingOps.length > 0) {
      if (this.inFlight) await this.inFlight;
      else this.flush();
    }
    this.closed = true;
    // Records not yet in the WAL are in LevelDB then; LevelDB's own log survives a process exit.
    // A failed store closes too (its failure was reported to the writes).
    await this.level?.caughtUp().catch(() => undefined);
    await this.wal?.close();
    await this.db.close();
  }

  private inGroupOrder(group: string, fn: () => Promise<void>): Promise<void> {
    return this.groupQueues.run(group, fn);
  }

  private async spansOf(group: string): Promise<BlockSpan[]> {
    let spans = this.spans.get(group);
    if (!spans) {
      await this.level?.caughtUp();
      spans = [];
      for await (const [key, value] of this.db.iterator(blockRange(group))) {
        const first = blockFirstIndex(asBuffer(key)!);
        spans.push({ first, last: first + asBuffer(value)!.readUInt32BE(0) - 1 });
      }
      this.spans.set(group, spans);
    }
    return spans;
  }

  private async doWrite(update: LogWrite): Promise<void> {
    const { group } = update;
    let spans = await this.spansOf(group);
    const ops: BatchOp[] = [];
    if (update.snapshot) {
      for (const s of spans) ops.push({ type: 'del', key: blockKey(group, s.first) });
      spans = [];
      ops.push({ type: 'put', key: snapshotKey(group), value: encodeSnapshot(update.snapshot) });
    }
    const first = update.entries[0];
    if (first) {
      const from = first.index;
      const keep: BlockSpan[] = [];
      for (const s of spans) {
        if (s.first >= from) {
          ops.push({ type: 'del', key: blockKey(group, s.first) });
        } else if (s.last >= from) {
          // A conflicting suffix starts inside this block: rewrite it without the suffix.
          const key = blockKey(group, s.first);
          await this.level?.caughtUp();
          const value = asBuffer(await this.db.get(key));
          const kept = value ? decodeBlock(s.first, value).filter((e) => e.index < from) : [];
          ops.push({ type: 'put', key, value: encodeBlock(kept) });
          keep.push({ first: s.first, last: from - 1 });
        } else {
          keep.push(s);
        }
      }
      ops.push({ type: 'put', key: blockKey(group, from), value: encodeBlock(update.entries) });
      keep.push({ first: from, last: from + update.entries.length - 1 });
      spans = keep;
    }
    this.spans.set(group, spans);
    if (update.hardState) ops.push({ type: 'put', key: hardStateKey(group), value: encodeHardState(update.hardState) });
    if (ops.length === 0) return;
    await this.enqueue(ops, update.sync);
  }

  private enqueue(ops: BatchOp[], sync: boolean): Promise<void> {
    if (this.closed) return Promise.reject(new Error('raft log store is closed'));
    if (this.failure) return Promise.reject(this.failure);
    this.stats.writes++;
    for (const op of ops) this.pendingOps.push(op);
    if (sync) this.pendingSync = true;
    const done = new Promise<void>((resolve, reject) => this.pendingWaiters.push({ resolve, reject }));
    if (!this.flushScheduled && !this.inFlight) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        if (!this.inFlight) this.flush();
      });
    }
    return done;
  }

  /** Hand everything pending to LevelDB (and the WAL) as one batch; the next batch waits for this one. */
  private flush(): void {
    if (this.pendingOps.length === 0) return;
    const ops = this.pendingOps;
    const waiters = this.pendingWaiters;
    const sync = this.pendingSync;
    this.pendingOps = [];
    this.pendingWaiters = [];
    this.pendingSync = false;
    this.stats.batches++;
    const started = performance.now();
    const batch = this.failure ? Promise.reject(this.failure) : this.wal && this.level ? this.writeWithWal(this.wal, this.level, ops, sync) : this.writeLevelOnly(ops, sync);
    this.inFlight = batch.then(
      () => {
        if (sync) {
          this.stats.syncedBatches++;
          this.stats.syncedBatchMs += performance.now() - started;
        }
        this.inFlight = null;
        for (const w of waiters) w.resolve();
        if (this.pendingOps.length > 0) this.flush();
      },
      (error: unknown) => {
        this.inFlight = null;
        for (const w of waiters) w.reject(error);
        if (this.pendingOps.length > 0) this.flush();
      },
    );
  }

  private async writeLevelOnly(ops: BatchOp[], sync: boolean): Promise<void> {
    const started = performance.now();
    await this.db.batch(ops, { sync });
    if (sync) observeFsync('raft_log', (performance.now() - started) / 1000);
  }

  /**
   * The batch goes to the WAL as one record: a synced batch is done once the record is durable; its ops go to
   * LevelDB a little later with others. A non-synced batch is done once LevelDB has it (its record waits in
   * memory for the next synced one).
   */
  private async writeWithWal(wal: RaftWal, level: LevelApplier, ops: BatchOp[], sync: boolean): Promise<void> {
    try {
      const seq = wal.nextSeq;
      const record = encodeWalRecord(seq, ops);
      if (wal.needsCheckpoint(record.length)) await this.checkpoint(wal, level);
      // LevelDB fell behind (it takes far bigger batches than the WAL): let it catch up before adding more.
      if (level.backlogBytes >= 2 * MAX_LEVEL_BACKLOG_BYTES) await level.caughtUp();
      const started = performance.now();
      const durable = wal.append(record, sync);
      level.add(ops, seq);
      if (sync) {
        await durable;
        observeFsync('raft_log', (performance.now() - started) / 1000);
        return;
      }
      // Both settle before the next batch starts, so WAL writes stay in order.
      const [walResult, levelResult] = await Promise.allSettled([durable, level.caughtUp()]);
      if (walResult.status === 'rejected') throw walResult.reason;
      if (levelResult.status === 'rejected') throw levelResult.reason;
    } catch (error) {
      this.failure ??= error;
      throw error;
    }
  }

  /** Between batches: make every LevelDB batch durable, then the WAL records are no longer needed. */
  private async checkpoint(wal: RaftWal, level: LevelApplier): Promise<void> {
    await level.caughtUp(true);
    if (this.testHooks.failCheckpointAfter === 'level-sync') throw new Error('test: checkpoint stopped after the LevelDB sync');
    await wal.rotate(() => {
      if (this.testHooks.failCheckpointAfter === 'new-segment') throw new Error('test: checkpoint stopped after the new segment');
    });
    this.stats.checkpoints++;
  }
}

function asBuffer(view: Uint8Array | undefined): Buffer | undefined {
  return view === undefined ? undefined : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}
