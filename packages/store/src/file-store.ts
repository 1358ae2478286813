/**
 * MessageStore on disk. Message blocks (every record appended in one flush, cut at maxBlockBytes /
 * maxBlockMsgs) go to append-only segment files, one writev + one fdatasync per flush; LevelDB
 * (`level`) holds the rest, with big-endian keys:
 *   0x01            meta: floor (first live seq), last seq, last timestamp
 *   0x02 | seq u64  tombstone: an interior message removed after its block was written
 * Why not the blocks in LevelDB too: a synced LevelDB batch of one 160 KB value costs several times a
 * raw append + fdatasync (its log, memtable flush and compaction write every byte again), which capped
 * appends far below the target; see README.md for the figures.
 * Open rebuilds the index from the segments: blocks from the floor on, minus tombstones, so the index,
 * per-subject counts and state always agree with the messages. Removals made by limits are re-derived
 * by re-applying the limits at open; removals the caller asked for are synced to LevelDB.
 */
import { join } from 'node:path';
import { Level } from 'level';
import { Block } from './block.js';
import { BlockTable, newEntry, type BlockEntry } from './block-table.js';
import { BufferPool } from './buffer-pool.js';
import { RECORD_OVERHEAD, RecordCursor } from './record-codec.js';
import { reportDamage } from './damage-report.js';
import { FRAME_HEADER_BYTES, SegmentLog, segmentFileName, type FrameLocation, type RecoveredFrame } from './segment-log.js';
import { StoreCore, type StoreCoreOptions } from './store-core.js';
import { StoreError, storeIoError } from './store-error.js';
import type { StoredMessage } from './types.js';

const META_KEY = Buffer.from([0x01]);
const TOMB_PREFIX = 0x02;
const META_VERSION = 1;
const EMPTY = Buffer.alloc(0);
const NO_BYTES = new Uint8Array(0);
const RESOLVED = Promise.resolve();
/** Recycled block buffers kept (x maxBlockBytes). */
const POOLED_BUFFERS = 64;
/** Blocks up to this size are copied out of their pooled buffer when sealed. */
const SMALL_BLOCK_BYTES = 4096;
/** Blocks read ahead when a range read has to go to disk. */
const READ_AHEAD_BLOCKS = 4;
/** Sequences read per step when streaming a snapshot. */
const SNAPSHOT_STEP = 1000;

export type SyncPolicy = 'always' | { intervalMs: number };

export interface FileStoreOptions extends StoreCoreOptions {
  /** Directory for the segment files and the LevelDB index (created if missing). */
  dir: string;
  /** `always` (default): fsync before a mutation resolves. Interval: fsync at most every intervalMs. */
  sync?: SyncPolicy;
  /** A block is cut when it reaches this many bytes or messages. */
  maxBlockBytes?: number;
  maxBlockMsgs?: number;
  /** A new segment file is started once the current one reaches this size. */
  maxSegmentBytes?: number;
  /** Bytes of blocks kept in memory for reads (default 16 MiB). */
  cacheBytes?: number;
  /**
   * Interval-synced stores only: new records wait up to this long (or until WRITE_BEHIND_MAX_BYTES) for
   * company before they are written, instead of one write per event-loop turn; 0 (default) writes every
   * turn. For stores whose durable record is elsewhere (a stream replica's Raft log replays what a crash
   * lost): one write per batch of publishes, not per publish. Reads are served from memory meanwhile;
   * `flush()` writes at once.
   */
  writeDelayMs?: number;
  /**
   * After a failed write, roll it back and take writes again once the cause is gone (default). False: refuse
   * every later write until the store is reopened — for a stream replica, whose store must never fall behind
   * the entries its Raft log has applied (the log replays them after a restart).
   */
  recoverFailedWrites?: boolean;
}

/** A failed write is recovered from at once; a failed recovery (disk still full) is retried this often, doubling. */
const RECOVERY_FIRST_DELAY_MS = 100;
const RECOVERY_MAX_DELAY_MS = 2000;

/** A write-behind store writes at once when this many record bytes wait. */
const WRITE_BEHIND_MAX_BYTES = 1024 * 1024;

type DB = Level<Buffer, Buffer>;
type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

/** What one flush writes. */
interface FlushPlan {
  frames: { entry: BlockEntry; last: number; body: Buffer }[];
  zero: FrameLocation[];
  ops: BatchOp[];
  hard: boolean;
  /** The floor this flush's meta writes, null if it writes no meta. */
  floor: number | null;
  /** last_seq when planned: durable once a synced flush of this plan completes. */
  lastSeq: number;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A write failure is reported to awaiting callers; nobody awaiting must not crash the process.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

function isZeros(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

function tombKey(seq: number): Buffer {
  const k = Buffer.allocUnsafe(9);
  k[0] = TOMB_PREFIX;
  k.writeBigUInt64BE(BigInt(seq), 1);
  return k;
}

function keySeq(key: Buffer): number {
  return Number(key.readBigUInt64BE(1));
}

interface Meta {
  floor: number;
  last: number;
  lastTs: bigint;
}

function encodeMeta(m: Meta): Buffer {
  const b = Buffer.allocUnsafe(25);
  b[0] = META_VERSION;
  b.writeBigUInt64BE(BigInt(m.floor), 1);
  b.writeBigUInt64BE(BigInt(m.last), 9);
  b.writeBigInt64BE(m.lastTs, 17);
  return b;
}

function decodeMeta(b: Buffer | undefined): Meta {
  if (b === undefined) return { floor: 0, last: 0, lastTs: 0n };
  if (b.length !== 25 || b[0] !== META_VERSION) throw new StoreError('CORRUPT', 'bad meta record');
  return { floor: Number(b.readBigUInt64BE(1)), last: Number(b.readBigUInt64BE(9)), lastTs: b.readBigInt64BE(17) };
}

export class FileStore extends StoreCore {
  readonly kind = 'file' as const;
  private readonly db: DB;
  private readonly log: SegmentLog;
  private readonly table: BlockTable;
  /** The failed flush's error came from LevelDB: reopen it to recover (LevelDB keeps a write error). */
  private indexFailed = false;
  /** Recovery from a failed write in progress (or waiting for its next attempt). */
  private recovering: Promise<void> | null = null;
  private recoveryTimer: NodeJS.Timeout | null = null;
  private recoveryDelayMs = RECOVERY_FIRST_DELAY_MS;
  private readonly dir: string;
  private readonly recoverFailedWrites: boolean;
  /** Damaged runs found by the last open. */
  private damageRuns = 0;
  /** loadFrame: the frame's damage run starting at its first byte was reported. */
  private reportedAtZero = false;
  private readonly syncAlways: boolean;
  private readonly maxBlockBytes: number;
  private readonly maxBlockMsgs: number;
  private readonly cacheBytes: number;
  private building: BlockEntry | null = null;
  /**
   * The building block's records go into this one reused buffer, hot in the CPU cache, and are copied out in
   * one memcpy when the block is sealed. Written straight into a pooled block buffer (last touched some
   * 16 MiB of blocks earlier) every record cost cache misses: ~6% of the publish path's CPU.
   */
  private staging: Buffer | null = null;
  private stagingInUse = false;
  private readonly pool: BufferPool;
  private readonly dirty = new Set<BlockEntry>();
  /** Tombstones to delete once their segment file is gone, by segment id. */
  private readonly tombsBySegment = new Map<number, number[]>();
  private tombsToDelete: number[] = [];
  /** Older copies of rewritten blocks found at open (a crash came before they were zeroed). */
  private staleCopies: FrameLocation[] = [];
  private hardRemoval = false;
  /** The meta must be written: sequences moved, or the floor is not the one on disk. */
  private metaDirty = false;
  private writtenFloor = -1;
  /** The floor in LevelDB as of the last completed batch: records below it are hidden after a crash. */
  private durableFloor = 0;
  /** last_seq as of the last synced flush (all its records durable); an unsynced meta writes no more. */
  private durableLastSeq = 0;
  private next: Deferred | null = null;
  private inFlight: Promise<void> | null = null;
  private flushScheduled = false;
  private readonly writeDelayMs: number;
  /** A write-behind write waiting for its delay. */
  private writeTimer: NodeJS.Timeout | null = null;
  /** Record bytes kept since the last flush was planned (bounds a write-behind wait). */
  private unplannedBytes = 0;
  private syncRequested = false;
  private unsynced = false;
  /** LevelDB holds writes made without sync (limit-driven removals) since its last synced write. */
  private indexUnsynced = false;
  private failure: unknown = null;
  private syncTimer: NodeJS.Timeout | null = null;

  private constructor(opts: FileStoreOptions) {
    super(opts);
    this.dir = opts.dir;
    this.recoverFailedWrites = opts.recoverFailedWrites ?? true;
    this.db = new Level<Buffer, Buffer>(join(opts.dir, 'index'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    this.log = new SegmentLog(opts.dir, opts.maxSegmentBytes ?? 64 * 1024 * 1024, (opts.sync ?? 'always') === 'always');
    this.cacheBytes = opts.cacheBytes ?? 16 * 1024 * 1024;
    this.table = new BlockTable(this.cacheBytes, (e) => {
      // Content whose write is still in flight may be in use by the write: leave that to the GC.
      if (e.block !== null && (e.loc !== null || !e.written)) e.block.release();
    });
    const sync = opts.sync ?? 'always';
    this.syncAlways = sync === 'always';
    this.writeDelayMs = this.syncAlways ? 0 : Math.max(0, opts.writeDelayMs ?? 0);
    this.maxBlockBytes = opts.maxBlockBytes ?? 256 * 1024;
    this.maxBlockMsgs = opts.maxBlockMsgs ?? 1024;
    this.pool = new BufferPool(this.maxBlockBytes, POOLED_BUFFERS);
    if (sync !== 'always') {
      this.syncTimer = setInterval(() => {
        if (!this.unsynced && !this.indexUnsynced) return;
        this.syncRequested = true;
        this.markDirty();
      }, Math.max(1, sync.intervalMs));
      this.syncTimer.unref();
    }
  }

  /** Opens (or creates) the store and rebuilds its index from disk. */
  static async open(opts: FileStoreOptions): Promise<FileStore> {
    const s = new FileStore(opts);
    try {
      const frames = await s.log.open(); // creates the directory
      await s.db.open();
      await s.load(frames);
      // Messages that aged or ran out of TTL while the store was closed go at once.
      s.armAgeTimer();
    } catch (err) {
      // Nothing may stay open (file descriptors above all: running out of them is one way to get here).
      if (s.syncTimer !== null) clearInterval(s.syncTimer);
      s.stopAgeTimer();
      await s.db.close().catch(() => undefined);
      await s.log.close().catch(() => undefined);
      throw storeIoError(err);
    }
    return s;
  }

  /** nats-server fileStoreMsgSize: 22 + subject + payload + 8, plus 4 + header when there are headers. */
  protected accountedSize(subjectBytes: number, headerLen: number, dataLen: number): number {
    return headerLen === 0 ? 30 + subjectBytes + dataLen : 34 + subjectBytes + headerLen + dataLen;
  }

  // ---- writing ----------------------------------------------------------------------------------

  protected keepRecord(seq: number, ts: bigint, subjectId: number, header: Uint8Array, data: Uint8Array): void {
    const subjectBytes = this.subjects.byteLen[subjectId];
    const recordBytes = RECORD_OVERHEAD + subjectBytes + header.length + data.length;
    let e = this.building;
    if (e !== null) {
      const b = e.block as Block;
      if (b.count >= this.maxBlockMsgs || (b.count > 0 && b.end + recordBytes > this.maxBlockBytes)) {
        this.sealBuilding();
        e = null;
      }
    }
    if (e === null) {
      e = newEntry(seq, seq, null, this.newBuildingBlock(seq, recordBytes));
      this.table.push(e);
      this.dirty.add(e);
      this.building = e;
    }
    (e.block as Block).add(seq, ts, this.subjects.bytes[subjectId], header, data);
    e.last = seq;
    e.live++;
    this.unplannedBytes += recordBytes;
    if (this.next === null) this.markDirty(true);
    else if (this.unplannedBytes >= WRITE_BEHIND_MAX_BYTES) this.writeSoon();
  }

  private newBuildingBlock(first: number, recordBytes: number): Block {
    if (this.stagingInUse || recordBytes > this.maxBlockBytes) return Block.building(first, this.pool, recordBytes);
    this.staging ??= Buffer.allocUnsafeSlow(this.maxBlockBytes);
    this.stagingInUse = true;
    return new Block(first, this.staging);
  }

  private sealBuilding(): void {
    const e = this.building;
    if (e === null) return;
    this.building = null;
    const b = e.block as Block;
    if (this.stagingInUse && b.buf !== this.staging) this.stagingInUse = false; // it grew out of the staging buffer
    if (b.buf === this.staging && this.staging !== null) {
      this.stagingInUse = false;
      if (b.exposed) {
        // A reader holds views into it: the block keeps the buffer, the next block gets a new one.
        this.staging = null;
      } else if (b.end <= SMALL_BLOCK_BYTES) {
        b.setBuffer(Buffer.from(b.value()));
      } else {
        const into = this.pool.take(b.end);
        this.staging.copy(into, 0, 0, b.end);
        b.setBuffer(into);
        if (into.length === this.pool.bufferBytes) b.adopt(into, this.pool);
      }
      this.table.touch(e);
      return;
    }
    // A tiny block (a trickle of messages) moves to Node's small-buffer slab instead of holding a pooled one.
    if (b.end <= SMALL_BLOCK_BYTES && b.pooled !== null && !b.exposed) {
      const pooled = b.pooled;
      b.pooled = null;
      b.setBuffer(Buffer.from(b.value()));
      this.pool.give(pooled);
    }
    this.table.touch(e);
  }

  protected forgetRecord(seq: number, erase: boolean): void {
    const e = this.table.find(seq);
    if (e === undefined) return;
    e.live--;
    e.removed.push(seq);
    if (erase) {
      e.rewrite = true;
      e.erased.push(seq);
      if (e.block === null) {
        this.loadBlock(e).then(
          () => this.markDirty(),
          () => undefined,
        );
      }
    }
    this.dirty.add(e);
    if (this.next === null) this.markDirty();
  }

  protected forgetAll(): void {
    this.sealBuilding();
    for (const e of this.table.live()) {
      e.live = 0;
      this.dirty.add(e);
    }
    this.markDirty();
  }

  protected sequencesMoved(): void {
    // A block never spans skipped sequences, so its offset table stays dense.
    this.sealBuilding();
    this.metaDirty = true;
    this.markDirty();
  }

  protected override explicitRemoval(): void {
    this.hardRemoval = true;
    this.markDirty();
  }

  /** `newRecord`: only new records may wait for a write-behind delay; anything else is written next turn. */
  private markDirty(newRecord = false): void {
    if (this.next === null) this.next = deferred();
    if (!newRecord) this.writeSoon();
    if (!this.flushScheduled && this.inFlight === null) {
      this.flushScheduled = true;
      if (newRecord && this.writeDelayMs > 0 && this.unplannedBytes < WRITE_BEHIND_MAX_BYTES) {
        this.writeTimer = setTimeout(this.scheduledWrite, this.writeDelayMs);
      } else {
        setImmediate(this.scheduledWrite);
      }
    }
  }

  private readonly scheduledWrite = (): void => {
    this.flushScheduled = false;
    this.writeTimer = null;
    this.writeBatch();
  };

  /** A write-behind write waiting for its delay goes out on the next turn instead. */
  private writeSoon(): void {
    if (this.writeTimer === null) return;
    clearTimeout(this.writeTimer);
    this.writeTimer = null;
    setImmediate(this.scheduledWrite);
  }

  override flush(): Promise<void> {
    this.writeSoon();
    return super.flush();
  }

  /** An interval store syncs now (segments and LevelDB), as its timer would. */
  override sync(): Promise<void> {
    if (this.syncAlways) return this.flush();
    if (this.failure !== null) return this.durable();
    this.syncRequested = true;
    this.markDirty();
    return this.durable();
  }

  protected durable(): Promise<void> {
    if (this.failure !== null) return Promise.reject(storeIoError(this.failure));
    if (this.next !== null) return this.next.promise;
    return this.inFlight ?? RESOLVED;
  }

  /** Persists everything pending as one flush; the next flush starts when this one is done. */
  private writeBatch(): void {
    if (this.inFlight !== null || this.next === null || this.failure !== null) return;
    const done = this.next;
    this.next = null;
    // An interval (or closing) sync makes everything durable, LevelDB included; a sync-always flush syncs
    // LevelDB only for removals the caller asked for (limit-driven ones are re-derived on open).
    const fullSync = this.syncRequested;
    const sync = this.syncAlways || fullSync;
    this.syncRequested = false;
    this.unplannedBytes = 0;
    let plan: FlushPlan;
    try {
      plan = this.plan(fullSync && this.indexUnsynced, sync);
    } catch (err) {
      this.fail(err, done);
      return;
    }
    this.inFlight = this.persist(plan, sync, sync && (plan.hard || fullSync)).then(
      () => {
        this.unsynced = !sync;
        this.inFlight = null;
        done.resolve();
        if (this.next !== null) this.writeBatch();
      },
      (err: unknown) => {
        this.inFlight = null;
        this.fail(err, done);
      },
    );
  }

  private fail(err: unknown, done: Deferred): void {
    // After a failed write the in-memory view is ahead of the disk: refuse further work until `recover`
    // has put the view back to what the disk holds.
    const refusal = storeIoError(err);
    this.failure = err;
    this.writeFailure = refusal;
    done.reject(refusal);
    this.next?.reject(refusal);
    this.next = null;
    if (this.recovering === null && !this.closed && this.recoverFailedWrites) this.recovering = this.recoverFromFailure();
  }

  /**
   * Undoes a failed flush: every segment is cut back to its size after the last completed flush, LevelDB is
   * reopened if it failed, and the in-memory view is rebuilt from disk as at open. So whatever the failed
   * flush (and every mutation after it) touched is gone from state and reads, and writes work again once
   * the cause (a full disk) is gone, without a restart. A recovery that fails is retried on a timer.
   */
  private async recoverFromFailure(): Promise<void> {
    try {
      if (this.inFlight !== null) await this.inFlight.catch(() => undefined);
      if (this.writeTimer !== null) clearTimeout(this.writeTimer);
      this.writeTimer = null;
      this.flushScheduled = false;
      this.stopAgeTimer();
      await this.log.rollback();
      await this.log.close();
      if (this.indexFailed && this.db.status === 'open') await this.db.close();
      if (this.db.status === 'closed') await this.db.open();
      this.indexFailed = false;
      this.resetView();
      this.failure = null;
      await this.load(await this.log.open());
      await this.durable();
      this.writeFailure = null;
      this.recoveryDelayMs = RECOVERY_FIRST_DELAY_MS;
      this.recovering = null;
    } catch (err) {
      this.failure ??= err;
      this.writeFailure = storeIoError(this.failure);
      if (this.closed) {
        this.recovering = null;
        return;
      }
      const delay = this.recoveryDelayMs;
      this.recoveryDelayMs = Math.min(RECOVERY_MAX_DELAY_MS, delay * 2);
      this.recoveryTimer = setTimeout(() => {
        this.recoveryTimer = null;
        this.recovering = this.recoverFromFailure();
      }, delay);
      this.recoveryTimer.unref();
    }
  }

  /** Forgets the in-memory view (index, blocks, pending work) before it is rebuilt from disk. */
  private resetView(): void {
    this.building = null;
    this.stagingInUse = false;
    this.staging = null;
    this.dirty.clear();
    this.tombsBySegment.clear();
    this.tombsToDelete = [];
    this.staleCopies = [];
    this.hardRemoval = false;
    this.metaDirty = false;
    this.writtenFloor = -1;
    this.next = null;
    this.unplannedBytes = 0;
    this.syncRequested = false;
    this.unsynced = false;
    this.indexUnsynced = false;
    this.table.clear();
    this.forgetMessages();
  }

  /** Decides what this flush writes (synchronously, so it is a consistent cut of the index). */
  private plan(forceMeta: boolean, synced: boolean): FlushPlan {
    this.sealBuilding();
    const plan: FlushPlan = { frames: [], zero: this.staleCopies, ops: [], hard: this.hardRemoval, floor: null, lastSeq: this.lastSeq };
    this.staleCopies = [];
    this.hardRemoval = false;
    const floor = this.msgs > 0 ? this.firstSeq : this.lastSeq + 1;
    const ops = plan.ops;
    for (const t of this.tombsToDelete) ops.push({ type: 'del', key: tombKey(t) });
    this.tombsToDelete = [];
    const index = this.index;
    const retry: BlockEntry[] = [];
    for (const e of this.dirty) {
      if (e.dead) continue;
      if (e.live <= 0) {
        if (e.loc !== null) {
          // Its bytes stay in the segment until the whole segment goes: keep tombstones until then.
          for (const s of e.removed) {
            if (s < floor) continue;
            ops.push({ type: 'put', key: tombKey(s), value: EMPTY });
            e.tombs.push(s);
          }
          this.log.addLive(e.loc.segment, -1);
          this.holdTombs(e.loc.segment, e.tombs);
        }
        e.tombs = [];
        e.removed = [];
        e.erased = [];
        this.table.markDead(e);
        continue;
      }
      if (!e.written || (e.rewrite && e.block !== null)) {
        let block = e.block as Block;
        const rewriting = e.loc !== null;
        if (e.removed.length > 0 || e.rewrite) {
          this.table.uncache(e);
          const old = block;
          block = block.filtered(rewriting ? this.keepInRewrite(e) : (seq) => index.isLive(seq));
          e.block = block;
          old.release();
          this.table.touch(e);
        }
        // Every older tombstone is of a record the new copy leaves out: none is needed once it is durable
        // (deleted after the old copy is zeroed: the batch waits for that when there is a zero).
        for (const t of e.tombs) ops.push({ type: 'del', key: tombKey(t) });
        e.tombs = [];
        if (rewriting) {
          plan.zero.push(e.loc as FrameLocation);
          this.log.addLive((e.loc as FrameLocation).segment, -1);
          e.loc = null;
          // Removed records the copy keeps (their removal is not on disk yet) get what hides them: a
          // tombstone, or below the floor this batch writes.
          for (let s = block.first; s <= block.last; s++) {
            if (s < floor || block.offsetOf(s) < 0 || index.isLive(s)) continue;
            ops.push({ type: 'put', key: tombKey(s), value: EMPTY });
            e.tombs.push(s);
          }
        }
        e.removed = [];
        e.erased = [];
        e.rewrite = false;
        e.written = true;
        plan.frames.push({ entry: e, last: block.last, body: block.value() });
        continue;
      }
      for (const s of e.removed) {
        if (s < floor) continue; // covered by the floor in this flush's meta
        ops.push({ type: 'put', key: tombKey(s), value: EMPTY });
        e.tombs.push(s);
      }
      e.removed = [];
      if (e.rewrite) retry.push(e); // content still loading: rewrite in a later flush
    }
    this.dirty.clear();
    for (const e of retry) this.dirty.add(e);
    // last_seq and last_ts are also recovered from the segments, so pure appends skip LevelDB.
    if (forceMeta || this.metaDirty || plan.hard || floor !== this.writtenFloor || ops.length > 0) {
      // An unsynced flush's meta may reach the disk before its records (or a synced one's records before their
      // directory entry): its last_seq goes no further than what a synced flush made durable, or a power cut
      // leaves a last_seq past records that are gone (a replica would take them as held and never replay them).
      const last = synced ? this.lastSeq : Math.min(this.lastSeq, this.durableLastSeq);
      ops.push({ type: 'put', key: META_KEY, value: encodeMeta({ floor, last, lastTs: this.lastTs }) });
      this.writtenFloor = floor;
      plan.floor = floor;
      this.metaDirty = false;
    }
    return plan;
  }

  /**
   * Which records the rewritten copy of a written block keeps: live ones, and removed ones whose removal is
   * not on disk yet unless erased. Leaving out a record trimmed by a limit before this flush's floor or
   * tombstone is durable would, after a crash before the LevelDB batch, lose an acknowledged message while
   * older ones come back: a hole that re-applying the limits at open cannot explain.
   */
  private keepInRewrite(e: BlockEntry): (seq: number) => boolean {
    const index = this.index;
    const durableFloor = this.durableFloor;
    const erased = new Set(e.erased);
    // Tombstones of earlier flushes are on disk (a flush is planned only once the previous one completed).
    const tombstoned = new Set(e.tombs);
    return (seq) => index.isLive(seq) || (seq >= durableFloor && !erased.has(seq) && !tombstoned.has(seq));
  }

  private holdTombs(segment: number, tombs: number[]): void {
    if (tombs.length === 0) return;
    const held = this.tombsBySegment.get(segment);
    if (held === undefined) this.tombsBySegment.set(segment, [...tombs]);
    else for (const t of tombs) held.push(t);
  }

  private async persist(plan: FlushPlan, sync: boolean, syncIndex: boolean): Promise<void> {
    const writeIndex = (): Promise<void> => {
      if (plan.ops.length === 0) return RESOLVED;
      this.indexUnsynced = !syncIndex;
      return this.db.batch(plan.ops, { sync: syncIndex }).catch((err: unknown) => {
        this.indexFailed = true;
        throw err;
      });
    };
    // Without rewritten blocks the LevelDB write overlaps the fsync. It starts only once the segment write
    // is done: a floor (or tombstone) of limit removals must not reach disk before the appends that caused
    // them, or a kill in between hides acknowledged messages the store still had room for.
    // With rewritten blocks, tombstones may only go once the new copies are durable and the old ones zeroed.
    // An interval store's synced flush writes a meta whose last_seq covers records synced in this flush only.
    const overlap = plan.zero.length === 0 && (this.syncAlways || !sync);
    let index = RESOLVED;
    if (plan.frames.length > 0) {
      const locs = await this.log.append(plan.frames.map((f) => ({ first: f.entry.first, last: f.last, body: f.body })));
      for (let i = 0; i < locs.length; i++) {
        plan.frames[i].entry.loc = locs[i];
        this.log.addLive(locs[i].segment, 1);
      }
    }
    if (overlap) {
      index = writeIndex();
      index.catch(() => undefined); // awaited below; a segment failure must not leave it unhandled
    }
    // A flush that zeroes old copies syncs whatever the policy: unsynced, the zeros may reach the disk before
    // the new copies (a power cut then loses the whole block), or the tombstone deletes before the zeros.
    const syncLog = sync || plan.zero.length > 0;
    if (syncLog && this.log.hasUnsynced) await this.log.sync();
    if (plan.zero.length > 0) {
      // The new copies are durable and the old ones about to go: a later failure must not cut them away.
      this.log.commit();
      // Only after the new copies are durable: destroy the old ones (erase).
      for (const loc of plan.zero) await this.log.zero(loc);
      await this.log.sync();
    }
    if (!overlap) index = writeIndex();
    await index;
    this.log.commit();
    if (plan.floor !== null) this.durableFloor = plan.floor;
    if (sync) this.durableLastSeq = Math.max(this.durableLastSeq, plan.lastSeq);
    const gone = await this.log.removeDead();
    for (const id of gone) {
      const tombs = this.tombsBySegment.get(id);
      this.tombsBySegment.delete(id);
      if (tombs !== undefined) for (const t of tombs) this.tombsToDelete.push(t);
    }
    if (this.tombsToDelete.length > 0) this.markDirty();
  }

  // ---- reading ----------------------------------------------------------------------------------

  private loadBlock(e: BlockEntry): Promise<Block> {
    if (e.block !== null) return Promise.resolve(e.block);
    if (e.loading !== null) return e.loading;
    const loc = e.loc;
    if (loc === null) return Promise.reject(new StoreError('CORRUPT', `block ${e.first} has no location`));
    const into = this.pool.take(loc.len);
    e.loading = this.log.read(loc, into).then(
      (buf) => {
        e.loading = null;
        if (e.block !== null) return e.block;
        const b = Block.parse(buf, e.first);
        if (into.length === this.pool.bufferBytes) b.adopt(into, this.pool);
        if (!e.dead && e.loc === loc) {
          e.block = b;
          this.table.touch(e);
        }
        return b;
      },
      (err: unknown) => {
        e.loading = null;
        throw err;
      },
    );
    return e.loading;
  }

  /** The entry's content, loaded if needed; null if the entry died or its content was recycled meanwhile. */
  private async usableBlock(e: BlockEntry): Promise<Block | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (e.dead) return null;
      const block = e.block ?? (await this.loadBlock(e));
      if (!block.released) return block;
    }
    return null;
  }

  protected async readRecords(seqs: readonly number[]): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const { index, subjects, table } = this;
    let e: BlockEntry | undefined;
    let block: Block | null = null;
    let curBuf: Buffer = EMPTY;
    let c = new RecordCursor(EMPTY);
    const lastWanted = seqs.length > 0 ? seqs[seqs.length - 1] : 0;
    for (const seq of seqs) {
      if (e === undefined || seq > e.last || seq < e.first || e.dead) {
        e = table.find(seq);
        if (e === undefined) continue;
        if (e.block === null) {
          // Going to disk: start reading the next blocks of this range too, so reads overlap parsing.
          for (const ahead of table.following(e, READ_AHEAD_BLOCKS)) {
            if (ahead.first > lastWanted) break;
            if (ahead.block === null && ahead.loc !== null) this.loadBlock(ahead).catch(() => undefined);
          }
        }
        block = await this.usableBlock(e);
        if (block === null) continue;
        block.exposed = true; // views into it go to the caller
        table.touch(e);
      }
      if (block === null) continue;
      const id = index.subjOf(seq);
      if (id === 0) continue; // removed while we waited for the block
      const off = block.offsetOf(seq);
      if (off < 0) continue;
      if (block.buf !== curBuf) {
        curBuf = block.buf;
        c = new RecordCursor(curBuf);
      }
      c.readAt(off);
      // Plain Uint8Array views: a third of the cost of Buffer#subarray on this path.
      const base = curBuf.byteOffset;
      out.push({
        seq,
        subject: subjects.names[id],
        header: c.headerLen === 0 ? NO_BYTES : new Uint8Array(curBuf.buffer, base + c.headerStart, c.headerLen),
        data: new Uint8Array(curBuf.buffer, base + c.dataStart, c.dataLen),
        timestampNs: index.tsOf(seq),
      });
    }
    return out;
  }

  // ---- open / snapshot / restore ----------------------------------------------------------------

  /**
   * Rebuilds the index: blocks from the floor on, minus tombstones (the latest copy of a block wins). Every
   * record's checksum is verified; a damaged record is reported and left out, the scan resumes at the next
   * sound record, and the sound records of a damaged frame (or region) are written again as a new block.
   */
  private async load(frames: RecoveredFrame[]): Promise<void> {
    const meta = decodeMeta(await this.db.get(META_KEY));
    this.durableFloor = meta.floor;
    this.damageRuns = 0;
    const tombs = new Set<number>();
    for await (const key of this.db.keys({ gte: Buffer.from([TOMB_PREFIX]), lt: Buffer.from([TOMB_PREFIX + 1]) })) {
      tombs.add(keySeq(key));
    }
    const latest = new Map<number, RecoveredFrame>();
    const reader = this.log.reader();
    const ordered: { f: RecoveredFrame; key: number }[] = [];
    for (const f of frames) {
      if (f.damaged) {
        // Placed by its first sound sequence (a region with none is only erased).
        const key = await this.firstSoundSeq(f, await reader.bytes(f.segment, f.pos, f.len, this.log.sizeOf(f.segment)));
        if (key === 0) {
          this.reportRun(f, 0, f.len, 0, null);
          this.reportedAtZero = false;
          this.staleCopies.push({ segment: f.segment, pos: f.pos, len: f.len });
        } else {
          ordered.push({ f, key });
        }
        continue;
      }
      // File order: a rewritten copy comes later. Zero the older one, or it would come back (with no
      // tombstones left to hide its removed records) once the segment of the newer copy is deleted.
      const older = latest.get(f.first);
      if (older !== undefined) this.staleCopies.push({ segment: older.segment, pos: older.pos, len: older.len });
      latest.set(f.first, f);
    }
    for (const f of latest.values()) ordered.push({ f, key: f.first });
    ordered.sort((x, y) => x.key - y.key);
    const tail = frames.length > 0 ? frames[frames.length - 1] : undefined;
    const claimed = new Set<number>();
    // The newest blocks, up to half the cache, stay in memory: their bytes pass by anyway.
    let warmFrom = ordered.length;
    for (let budget = this.cacheBytes / 2; warmFrom > 0 && budget > 0; ) budget -= ordered[--warmFrom].f.len;
    let after = 0;
    for (let i = 0; i < ordered.length; i++) {
      const { f } = ordered[i];
      const before = i + 1 < ordered.length ? ordered[i + 1].key : Number.MAX_SAFE_INTEGER;
      const body = await reader.bytes(f.segment, f.pos, f.len, this.log.sizeOf(f.segment));
      const e = this.loadFrame(f, body, meta.floor, tombs, claimed, after, before, f === tail);
      if (e === null) continue;
      after = e.last;
      if (i >= warmFrom && e.live > 0 && e.block === null) {
        const into = this.pool.take(body.length);
        body.copy(into);
        e.block = Block.parse(into.subarray(0, body.length), e.first);
        if (into.length === this.pool.bufferBytes) e.block.adopt(into, this.pool);
        this.table.touch(e);
      }
    }
    for (const t of tombs) if (!claimed.has(t)) this.tombsToDelete.push(t);
    if (meta.last > this.lastSeq) this.lastSeq = meta.last;
    // Every sequence below the floor was removed. An interval store's unsynced meta caps last_seq at the last
    // synced flush but writes the real floor, so a power cut can leave a floor past last_seq + 1 (the records
    // were lost, the meta was not): handing those sequences out again would put new messages under the floor
    // on disk, hidden again by a cut before the next meta is durable while later ones survive.
    if (meta.floor - 1 > this.lastSeq) this.lastSeq = meta.floor - 1;
    if (meta.lastTs > this.lastTs) this.lastTs = meta.lastTs;
    if (this.msgs === 0) this.firstSeq = this.lastSeq > 0 ? this.lastSeq + 1 : 0;
    this.durableLastSeq = this.lastSeq;
    this.index.trimBelow(this.firstSeq);
    this.markDirty(); // writes the meta, drops dead blocks and segments, rewrites salvaged blocks
    // Limits may have changed while closed, and messages may have aged out.
    await this.updateLimits({});
  }

  /** The first sequence of a sound record in a damaged region (0: none). */
  private async firstSoundSeq(f: RecoveredFrame, body: Buffer): Promise<number> {
    const cur = new RecordCursor(body);
    // Bounded by the region's length; the damage path only.
    for (let off = 0; off < body.length; off++) if (cur.tryAt(off, body.length)) return cur.seq;
    return 0;
  }

  /**
   * Indexes one frame's records: sound ones with sequences in (after, before) and inside the frame's own
   * range. With damage (or for a damaged region) the live records found go into a new block, written at
   * the next flush, and the damaged bytes are erased after that; every damaged run is reported.
   */
  private loadFrame(
    f: RecoveredFrame,
    value: Buffer,
    floor: number,
    tombs: Set<number>,
    claimed: Set<number>,
    after: number,
    before: number,
    isTail: boolean,
  ): BlockEntry | null {
    const cur = new RecordCursor(value);
    const lo = f.damaged ? after : Math.max(after, f.first - 1);
    const hi = f.damaged ? before : Math.min(before, f.last + 1);
    const loc = { segment: f.segment, pos: f.pos, len: f.len };
    const e = newEntry(f.first, f.first, loc, null);
    let prev = lo;
    let damageAt = -1;
    let damaged = f.damaged;
    const liveOffsets: number[] = [];
    let first = 0;
    // Bounded by the frame's length: every step moves `off` forward.
    for (let off = 0; off < value.length; ) {
      if (!cur.tryAt(off, value.length) || cur.seq <= prev || cur.seq >= hi) {
        if (damageAt < 0) damageAt = off;
        off++;
        continue;
      }
      if (damageAt >= 0) {
        this.reportRun(f, damageAt, off, prev, cur.seq);
        if (!damaged) this.soundBefore(value, damageAt, floor, tombs, liveOffsets);
        damageAt = -1;
        damaged = true;
      }
      const seq = cur.seq;
      if (first === 0) first = seq;
      prev = seq;
      e.last = seq;
      if (tombs.has(seq)) {
        claimed.add(seq);
        e.tombs.push(seq);
      } else if (seq >= floor) {
        this.recover(seq, cur.subject(), value.subarray(cur.headerStart, cur.dataStart), cur.dataLen, cur.ts(off));
        e.live++;
        // Kept only once damage was seen (a sound frame needs none: it stays where it is).
        if (damaged) liveOffsets.push(off, cur.end);
      }
      off = cur.end;
    }
    if (damageAt >= 0) {
      // The last frame written, cut short by a crash, or the zeros written ahead of the tail: not damage.
      const torn = isTail && isZeros(value, damageAt);
      if (!torn) this.reportRun(f, damageAt, value.length, prev, null);
      if (!damaged) this.soundBefore(value, damageAt, floor, tombs, liveOffsets);
      damaged = true;
    }
    // A damaged header whose records all survived: still damage, reported (once, if no run started at 0).
    if (f.damaged && !this.reportedAtZero) this.reportRun(f, 0, 0, lo, first === 0 ? null : first);
    this.reportedAtZero = false;
    if (!damaged) {
      this.table.push(e);
      this.log.addLive(f.segment, 1);
      if (e.live === 0) this.dirty.add(e);
      return e;
    }
    // Damaged: the sound live records become a new block (left out: removed ones, whose tombstones can go
    // once the damaged copy is erased), the damaged copy is erased after the new one is durable.
    this.staleCopies.push(loc);
    if (e.live === 0) return null;
    const parts: Buffer[] = [];
    for (let i = 0; i < liveOffsets.length; i += 2) parts.push(value.subarray(liveOffsets[i], liveOffsets[i + 1]));
    const block = Block.parse(Buffer.concat(parts), first);
    const salvaged = newEntry(first, e.last, null, block);
    salvaged.live = e.live;
    salvaged.tombs = e.tombs;
    this.table.push(salvaged);
    this.table.touch(salvaged);
    this.dirty.add(salvaged);
    return salvaged;
  }

  /** The live records before `end` of a frame found sound (their offsets, as start/end pairs). */
  private soundBefore(value: Buffer, end: number, floor: number, tombs: Set<number>, into: number[]): void {
    const cur = new RecordCursor(value);
    for (let off = 0; off < end; off = cur.end) {
      cur.readAt(off);
      if (!tombs.has(cur.seq) && cur.seq >= floor) into.push(off, cur.end);
    }
  }

  private reportRun(f: RecoveredFrame, from: number, to: number, afterSeq: number, beforeSeq: number | null): void {
    this.damageRuns++;
    if (from === 0) this.reportedAtZero = true;
    // A damaged region starts where its header should have been.
    const start = f.damaged && from === 0 ? f.pos - FRAME_HEADER_BYTES : f.pos + from;
    reportDamage({
      file: join(this.dir, segmentFileName(f.segment)),
      offset: start,
      bytes: f.pos + to - start,
      afterSeq,
      beforeSeq,
    });
  }

  /** Damaged runs found in the segment files by the last open (or recovery). */
  damageFound(): number {
    return this.damageRuns;
  }

  protected async wipeStorage(): Promise<void> {
    await this.durable();
    this.sealBuilding();
    this.dirty.clear();
    this.tombsToDelete = [];
    this.tombsBySegment.clear();
    this.table.clear();
    await this.log.wipe();
    await this.db.clear();
    this.durableFloor = 0;
    this.durableLastSeq = 0;
  }

  /**
   * Streams the messages live when the snapshot starts. A message erased, or whose whole block was
   * dropped, while the snapshot streams is left out; other removals during the stream do not show.
   */
  protected async *snapshotSource(): AsyncGenerator<Buffer> {
    const seqs: number[] = [];
    for (let s = this.firstSeq; s <= this.lastSeq && this.msgs > 0; s++) if (this.index.isLive(s)) seqs.push(s);
    const header = { firstSeq: this.msgs > 0 ? this.firstSeq : this.lastSeq + 1, lastSeq: this.lastSeq, lastTs: this.lastTs };
    const self = this;
    async function* records(): AsyncGenerator<Buffer> {
      for (let i = 0; i < seqs.length; i += SNAPSHOT_STEP) {
        yield* await self.rawRecords(seqs.slice(i, i + SNAPSHOT_STEP));
      }
    }
    yield* this.frameSnapshot(header, records());
  }

  /** Record bytes for `seqs` straight from their blocks, live or not. */
  private async rawRecords(seqs: readonly number[]): Promise<Buffer[]> {
    const out: Buffer[] = [];
    let e: BlockEntry | undefined;
    let block: Block | null = null;
    for (const seq of seqs) {
      if (e === undefined || seq > e.last || seq < e.first || e.dead) {
        e = this.table.find(seq);
        if (e === undefined) continue;
        block = await this.usableBlock(e);
        if (block === null) continue;
        block.exposed = true;
      }
      if (block === null) continue;
      const off = block.offsetOf(seq);
      if (off < 0) continue;
      const cur = new RecordCursor(block.buf);
      cur.readAt(off);
      out.push(block.buf.subarray(off, cur.end));
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stopAgeTimer();
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
    if (this.recoveryTimer !== null) clearTimeout(this.recoveryTimer);
    this.recoveryTimer = null;
    if (this.recovering !== null) await this.recovering;
    try {
      if (this.failure === null) {
        this.syncRequested = true;
        if (this.unsynced || this.indexUnsynced) this.markDirty();
        this.writeSoon();
        // A flush can queue one more (tombstones of a deleted segment): wait until nothing is left, so no
        // write lands after close. Bounded: each round only follows up on the previous one.
        for (let round = 0; round < 8 && (this.next !== null || this.inFlight !== null); round++) await this.durable();
      }
    } finally {
      this.closed = true;
      await this.db.close();
      await this.log.close();
    }
  }
}
