// LevelDB side of the WAL-backed Raft log store: batches already durable in the WAL are applied to LevelDB
// unsynced, in order, several at a time (after a short delay), each LevelDB batch tagged with the WAL sequence
// number of the last batch it holds. One LevelDB write per several Raft writes instead of one each: on this
// machine a thread-pool round trip costs tens of microseconds of CPU, and the WAL write is the only one a
// synced write has to wait for.
import type { Level } from 'level';
import { WAL_SEQ_KEY, encodeSeq, type BatchOp } from './wal-codec.js';

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface LevelApplierOptions {
  /** Ops wait at most this long for company before they are applied. */
  delayMs: number;
  /** Pending ops of this many bytes are applied at once. */
  maxPendingBytes: number;
  /** Test hook: drop the ops instead of applying them. */
  skip: () => boolean;
}

export class LevelApplier {
  private pending: BatchOp[] = [];
  private pendingBytes = 0;
  /** WAL sequence number of the last batch added. */
  private pendingSeq: number;
  private waiters: Waiter[] = [];
  private syncWanted = false;
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;
  /** LevelDB batches written. */
  batches = 0;

  /** `lastSeq`: the WAL batch LevelDB holds last (from recovery). */
  constructor(
    private readonly db: Level<Uint8Array, Uint8Array>,
    lastSeq: number,
    private readonly options: LevelApplierOptions,
  ) {
    this.pendingSeq = lastSeq;
  }

  /** Bytes of ops not yet handed to LevelDB. */
  get backlogBytes(): number {
    return this.pendingBytes;
  }

  /** Queues the ops of WAL batch `seq` (batches come in sequence order). */
  add(ops: readonly BatchOp[], seq: number): void {
    if (this.failure) throw this.failure;
    for (const op of ops) {
      this.pending.push(op);
      this.pendingBytes += op.key.length + (op.type === 'put' ? op.value.length : 0);
    }
    this.pendingSeq = seq;
    if (this.pendingBytes >= this.options.maxPendingBytes) this.start();
    else if (this.timer === null && this.inFlight === null) this.timer = setTimeout(() => this.start(), this.options.delayMs);
  }

  /** Resolves once every op added so far is in LevelDB (durably with `sync`, with every earlier batch). */
  caughtUp(sync = false): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (sync) this.syncWanted = true;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.start();
    return done;
  }

  private start(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // One LevelDB batch at a time; whatever arrives meanwhile goes into the next.
    if (this.inFlight !== null) return;
    const ops = this.pending;
    const waiters = this.waiters;
    const sync = this.syncWanted;
    if (ops.length === 0 && !sync) {
      for (const w of waiters) w.resolve();
      this.waiters = [];
      return;
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.waiters = [];
    this.syncWanted = false;
    // A synced write with nothing pending still makes the earlier unsynced batches durable.
    if (ops.length > 0 || sync) ops.push({ type: 'put', key: WAL_SEQ_KEY, value: encodeSeq(this.pendingSeq) });
    this.batches++;
    const write = this.options.skip() ? Promise.resolve() : this.db.batch(ops, { sync });
    this.inFlight = write.then(
      () => {
        this.inFlight = null;
        for (const w of waiters) w.resolve();
        if (this.waiters.length > 0 || this.syncWanted || this.pendingBytes >= this.options.maxPendingBytes) this.start();
        else if (this.pending.length > 0) this.timer = setTimeout(() => this.start(), this.options.delayMs);
      },
      (error: unknown) => {
        this.inFlight = null;
        this.failure = error;
        for (const w of [...waiters, ...this.waiters]) w.reject(error);
        this.waiters = [];
      },
    );
  }
}
