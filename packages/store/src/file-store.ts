/**
 * MessageStore on LevelDB (`level`). Layout (all keys big-endian, so iteration is stream order):
 *   0x01                 meta: floor (first live seq), last seq, last timestamp
 *   0x02 | seq u64       tombstone: an interior message removed after its block was written
 *   0x03 | firstSeq u64  block: every record appended in one flush (up to maxBlockBytes/maxBlockMsgs)
 * Each flush (one per event-loop tick, or when the previous write finishes) is ONE LevelDB batch:
 * new blocks, tombstones, deleted blocks and the meta. So a crash leaves a consistent prefix, and the
 * in-memory index is rebuilt from blocks >= floor minus tombstones on open.
 */
import { Level } from 'level';
import { Block } from './block.js';
import { BLOCK_PREFIX, BlockTable, newEntry, type BlockEntry } from './block-table.js';
import { RecordCursor } from './record-codec.js';
import { StoreCore, type StoreCoreOptions } from './store-core.js';
import { StoreError } from './store-error.js';
import type { StoredMessage } from './types.js';

const META_KEY = Buffer.from([0x01]);
const TOMB_PREFIX = 0x02;
const META_VERSION = 1;
const EMPTY = Buffer.alloc(0);
const RESOLVED = Promise.resolve();
/** Blocks read per iterator step when opening or snapshotting. */
const ITERATE_BATCH = 32;

export type SyncPolicy = 'always' | { intervalMs: number };

export interface FileStoreOptions extends StoreCoreOptions {
  /** Directory of the LevelDB database (created if missing). */
  dir: string;
  /** `always` (default): fsync before a mutation resolves. Interval: fsync at most every intervalMs. */
  sync?: SyncPolicy;
  /** A block is cut when it reaches this many bytes or messages. */
  maxBlockBytes?: number;
  maxBlockMsgs?: number;
  /** Bytes of decoded blocks kept for reads. */
  cacheBytes?: number;
}

type DB = Level<Buffer, Buffer>;
type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

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
  private readonly table: BlockTable;
  private readonly syncAlways: boolean;
  private readonly maxBlockBytes: number;
  private readonly maxBlockMsgs: number;
  private building: BlockEntry | null = null;
  private readonly dirty = new Set<BlockEntry>();
  private orphanTombs: number[] = [];
  private metaDirty = false;
  private next: Deferred | null = null;
  private inFlight: Promise<void> | null = null;
  private flushScheduled = false;
  private syncRequested = false;
  private unsynced = false;
  private failure: unknown = null;
  private syncTimer: NodeJS.Timeout | null = null;

  private constructor(opts: FileStoreOptions) {
    super(opts);
    this.db = new Level<Buffer, Buffer>(opts.dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    this.table = new BlockTable(opts.cacheBytes ?? 64 * 1024 * 1024);
    const sync = opts.sync ?? 'always';
    this.syncAlways = sync === 'always';
    this.maxBlockBytes = opts.maxBlockBytes ?? 256 * 1024;
    this.maxBlockMsgs = opts.maxBlockMsgs ?? 1024;
    if (sync !== 'always') {
      this.syncTimer = setInterval(() => {
        if (!this.unsynced) return;
        this.syncRequested = true;
        this.markDirty();
      }, Math.max(1, sync.intervalMs));
      this.syncTimer.unref();
    }
  }

  /** Opens (or creates) the store and rebuilds its index from disk. */
  static async open(opts: FileStoreOptions): Promise<FileStore> {
    const s = new FileStore(opts);
    await s.db.open();
    try {
      await s.load();
    } catch (err) {
      await s.db.close();
      throw err;
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
    const recordBytes = 26 + subjectBytes + header.length + data.length;
    let e = this.building;
    if (e !== null) {
      const b = e.block as Block;
      if (b.count >= this.maxBlockMsgs || (b.count > 0 && b.end + recordBytes > this.maxBlockBytes)) {
        this.sealBuilding();
        e = null;
      }
    }
    if (e === null) {
      e = newEntry(seq, seq, false, Block.building(seq, recordBytes));
      this.table.push(e);
      this.dirty.add(e);
      this.building = e;
    }
    (e.block as Block).add(seq, ts, this.subjects.names[subjectId], subjectBytes, header, data);
    e.last = seq;
    e.live++;
    this.markDirty();
  }

  private sealBuilding(): void {
    const e = this.building;
    if (e === null) return;
    this.building = null;
    const b = e.block as Block;
    // Trim spare capacity so cached blocks cost what they hold.
    if (b.buf.length > b.end * 1.25) b.buf = Buffer.from(b.value());
    this.table.touch(e);
  }

  protected forgetRecord(seq: number, erase: boolean): void {
    const e = this.table.find(seq);
    if (e === undefined) return;
    e.live--;
    e.removed.push(seq);
    if (erase) {
      e.rewrite = true;
      if (e.block === null) {
        this.loadBlock(e).then(
          () => this.markDirty(),
          () => undefined,
        );
      }
    }
    this.dirty.add(e);
    this.markDirty();
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

  private markDirty(): void {
    this.metaDirty = true;
    if (this.next === null) this.next = deferred();
    if (!this.flushScheduled && this.inFlight === null) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.writeBatch();
      });
    }
  }

  protected durable(): Promise<void> {
    if (this.failure !== null) return Promise.reject(new StoreError('IO', String(this.failure)));
    if (this.next !== null) return this.next.promise;
    return this.inFlight ?? RESOLVED;
  }

  /** Hands everything pending to LevelDB as one batch; the next batch waits for this one. */
  private writeBatch(): void {
    if (this.inFlight !== null || this.next === null) return;
    const done = this.next;
    this.next = null;
    let ops: BatchOp[];
    try {
      ops = this.collectOps();
    } catch (err) {
      this.fail(err, done);
      return;
    }
    const sync = this.syncAlways || this.syncRequested;
    this.syncRequested = false;
    this.inFlight = this.db.batch(ops, { sync }).then(
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
    // After a failed write the in-memory view is ahead of the disk: refuse further work.
    this.failure = err;
    done.reject(new StoreError('IO', String(err)));
    this.next?.reject(new StoreError('IO', String(err)));
    this.next = null;
  }

  private collectOps(): BatchOp[] {
    this.sealBuilding();
    const ops: BatchOp[] = [];
    const floor = this.msgs > 0 ? this.firstSeq : this.lastSeq + 1;
    for (const t of this.orphanTombs) ops.push({ type: 'del', key: tombKey(t) });
    this.orphanTombs = [];
    const retry: BlockEntry[] = [];
    for (const e of this.dirty) {
      if (e.live <= 0) {
        if (e.written) {
          ops.push({ type: 'del', key: e.key });
          for (const t of e.tombs) ops.push({ type: 'del', key: tombKey(t) });
        }
        e.tombs = [];
        e.removed = [];
        this.table.markDead(e);
        continue;
      }
      if (e.rewrite && e.block !== null) {
        const index = this.index;
        const rewritten = e.block.filtered((seq) => index.isLive(seq));
        this.table.uncache(e);
        e.block = rewritten;
        this.table.touch(e);
        ops.push({ type: 'put', key: e.key, value: rewritten.value() });
        for (const t of e.tombs) ops.push({ type: 'del', key: tombKey(t) });
        e.tombs = [];
        e.removed = [];
        e.rewrite = false;
        e.written = true;
        continue;
      }
      if (!e.written) {
        ops.push({ type: 'put', key: e.key, value: (e.block as Block).value() });
        e.written = true;
      }
      for (const s of e.removed) {
        if (s < floor) continue; // covered by the floor in this batch's meta
        ops.push({ type: 'put', key: tombKey(s), value: EMPTY });
        e.tombs.push(s);
      }
      e.removed = [];
      if (e.rewrite) retry.push(e); // content still loading: rewrite in a later batch
    }
    this.dirty.clear();
    for (const e of retry) this.dirty.add(e);
    ops.push({ type: 'put', key: META_KEY, value: encodeMeta({ floor, last: this.lastSeq, lastTs: this.lastTs }) });
    this.metaDirty = false;
    return ops;
  }

  // ---- reading ----------------------------------------------------------------------------------

  private loadBlock(e: BlockEntry): Promise<Block> {
    if (e.block !== null) return Promise.resolve(e.block);
    if (e.loading !== null) return e.loading;
    e.loading = this.db.get(e.key).then((buf) => {
      e.loading = null;
      if (e.block !== null) return e.block;
      if (buf === undefined) throw new StoreError('CORRUPT', `block ${e.first} missing`);
      const b = Block.parse(buf, e.first);
      if (!e.dead) {
        e.block = b;
        this.table.touch(e);
      }
      return b;
    });
    return e.loading;
  }

  protected async readRecords(seqs: readonly number[]): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const { index, subjects, table } = this;
    let e: BlockEntry | undefined;
    let block: Block | null = null;
    const cur = new RecordCursor(EMPTY);
    let curBuf: Buffer = EMPTY;
    let c = cur;
    for (const seq of seqs) {
      if (e === undefined || seq > e.last || seq < e.first || e.dead) {
        e = table.find(seq);
        if (e === undefined) continue;
        block = e.block ?? (await this.loadBlock(e));
        table.touch(e);
      }
      if (block === null) continue;
      const i = index.slot(seq);
      if (i < 0 || index.subj[i] === 0) continue; // removed while we waited for the block
      const off = block.offsetOf(seq);
      if (off < 0) continue;
      if (block.buf !== curBuf) {
        curBuf = block.buf;
        c = new RecordCursor(curBuf);
      }
      c.readAt(off);
      out.push({
        seq,
        subject: subjects.names[index.subj[i]],
        header: curBuf.subarray(c.headerStart, c.dataStart),
        data: curBuf.subarray(c.dataStart, c.end),
        timestampNs: index.ts[i],
      });
    }
    return out;
  }

  // ---- open / snapshot / restore ----------------------------------------------------------------

  /** Rebuilds the index: blocks from the floor on, minus tombstones. */
  private async load(): Promise<void> {
    const meta = decodeMeta(await this.db.get(META_KEY));
    const tombs = new Set<number>();
    for await (const key of this.db.keys({ gte: Buffer.from([TOMB_PREFIX]), lt: Buffer.from([TOMB_PREFIX + 1]) })) {
      tombs.add(keySeq(key));
    }
    const claimed = new Set<number>();
    const it = this.db.iterator({ gte: Buffer.from([BLOCK_PREFIX]), lt: Buffer.from([BLOCK_PREFIX + 1]) });
    try {
      for (;;) {
        const entries = await it.nextv(ITERATE_BATCH);
        if (entries.length === 0) break;
        for (const [key, value] of entries) this.loadBlockValue(keySeq(key), value, meta.floor, tombs, claimed);
      }
    } finally {
      await it.close();
    }
    for (const t of tombs) if (!claimed.has(t)) this.orphanTombs.push(t);
    if (meta.last > this.lastSeq) this.lastSeq = meta.last;
    if (meta.lastTs > this.lastTs) this.lastTs = meta.lastTs;
    if (this.msgs === 0) this.firstSeq = this.lastSeq > 0 ? this.lastSeq + 1 : 0;
    this.index.trimBelow(this.firstSeq);
    if (this.orphanTombs.length > 0 || this.dirty.size > 0) this.markDirty();
    // Limits may have changed while closed, and messages may have aged out.
    await this.updateLimits({});
  }

  private loadBlockValue(first: number, value: Buffer, floor: number, tombs: Set<number>, claimed: Set<number>): void {
    const block = Block.parse(value, first);
    const e = newEntry(first, Math.max(first, block.last), true, null);
    const cur = new RecordCursor(value);
    for (let off = 0; off < value.length; off = cur.end) {
      cur.readAt(off);
      const seq = cur.seq;
      if (tombs.has(seq)) {
        claimed.add(seq);
        e.tombs.push(seq);
        continue;
      }
      if (seq < floor) continue;
      this.recover(seq, cur.subject(), cur.headerLen, cur.dataLen, cur.ts(off));
      e.live++;
    }
    this.table.push(e);
    if (e.live === 0) {
      this.dirty.add(e);
    } else {
      e.block = block;
      this.table.touch(e);
    }
  }

  protected async wipeStorage(): Promise<void> {
    await this.durable();
    this.sealBuilding();
    this.dirty.clear();
    this.orphanTombs = [];
    this.table.clear();
    await this.db.clear();
  }

  protected async *snapshotSource(): AsyncGenerator<Buffer> {
    await this.durable();
    // One iterator = one LevelDB snapshot: meta, tombstones and blocks are a consistent cut.
    const it = this.db.iterator();
    try {
      let meta: Meta = { floor: 0, last: 0, lastTs: 0n };
      const tombs = new Set<number>();
      let pending: [Buffer, Buffer][] = [];
      for (;;) {
        const entries = await it.nextv(ITERATE_BATCH);
        if (entries.length === 0) break;
        let i = 0;
        for (; i < entries.length; i++) {
          const [key, value] = entries[i];
          if (key[0] === META_KEY[0] && key.length === 1) meta = decodeMeta(value);
          else if (key[0] === TOMB_PREFIX) tombs.add(keySeq(key));
          else break;
        }
        if (i < entries.length) {
          pending = entries.slice(i);
          break;
        }
      }
      const records = async function* (): AsyncGenerator<Buffer> {
        let batch = pending;
        while (batch.length > 0) {
          for (const [key, value] of batch) {
            if (key[0] !== BLOCK_PREFIX) continue;
            const cur = new RecordCursor(value);
            for (let off = 0; off < value.length; off = cur.end) {
              cur.readAt(off);
              if (cur.seq >= meta.floor && !tombs.has(cur.seq)) yield value.subarray(off, cur.end);
            }
          }
          batch = await it.nextv(ITERATE_BATCH);
        }
      };
      yield* this.frameSnapshot({ firstSeq: meta.floor, lastSeq: meta.last, lastTs: meta.lastTs }, records());
    } finally {
      await it.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stopAgeTimer();
    if (this.syncTimer !== null) clearInterval(this.syncTimer);
    try {
      if (this.failure === null) {
        this.syncRequested = true;
        if (this.unsynced) this.markDirty();
        await this.durable();
      }
    } finally {
      this.closed = true;
      await this.db.close();
    }
  }
}
