/**
 * Everything both stores share: the in-memory index (sequence metadata + per-subject index), JetStream
 * limits with nats-server's semantics, purge/compact/delete, filtered scans and state. Subclasses say
 * how a record is kept (`keepRecord`/`forgetRecord`/`readRecords`) and when changes are durable.
 */
import { wallClockNs, type ClockNs } from './clock.js';
import { ExpiryTable, ReportedExpiries, type ExpiredMessage, type MessageTtlReader } from './message-expiry.js';
import type { MessageStore } from './message-store.js';
import { RecordCursor, recordLength, viewOf, writeRecord } from './record-codec.js';
import { SeqIndex } from './seq-index.js';
import {
  FRAME_END,
  FRAME_HEADER,
  FRAME_RECORDS,
  decodeHeader,
  encodeFrame,
  encodeHeader,
  readFrames,
} from './snapshot-codec.js';
import { StoreError } from './store-error.js';
import { SubjectFilter } from './subject-filter.js';
import { SubjectTable } from './subject-table.js';
import { nsToMs } from './time-units.js';
import {
  DEFAULT_LIMITS,
  type AppendInput,
  type AppendOptions,
  type AppendResult,
  type FilteredState,
  type PurgeOptions,
  type StoreLimits,
  type StoreState,
  type StoredMessage,
} from './types.js';

const EMPTY = new Uint8Array(0);
/** Snapshot records frames are cut at about this size. */
const SNAPSHOT_FRAME_BYTES = 1024 * 1024;
/** readRange reads at most this many messages per call whatever the caller asks. */
const MAX_READ_RANGE = 100_000;
/** One expiry pass looks at most at this many messages; the rest wait for the next pass, 1 ms later. */
const EXPIRY_PASS_MAX = 10_000;
const NS_PER_MS = 1_000_000n;
/** Messages read per step when TTLs are turned on for a stream that holds messages. */
const TTL_SCAN_STEP = 1024;
/** Reporting without a listener yet (the stream is still being set up): look again this much later. */
const NO_LISTENER_RETRY_NS = 250n * NS_PER_MS;

export interface StoreCoreOptions {
  limits?: Partial<StoreLimits>;
  /** Injected clock (ns) for tests; defaults to the wall clock. */
  clock?: ClockNs;
  /** Reads a message's TTL from its header (per-message TTL); absent: no message carries one. */
  messageTtl?: MessageTtlReader;
}

/** Memoises filter matches per subject id during one scan. */
class SubjectMatcher {
  private memo = new Map<number, boolean>();
  constructor(
    private readonly filter: SubjectFilter,
    private readonly subjects: SubjectTable,
  ) {}
  matches(id: number): boolean {
    if (this.filter.matchesAll) return true;
    let m = this.memo.get(id);
    if (m === undefined) {
      m = this.filter.matches(this.subjects.names[id]);
      this.memo.set(id, m);
    }
    return m;
  }
}

export abstract class StoreCore implements MessageStore {
  abstract readonly kind: 'file' | 'memory';
  protected readonly index = new SeqIndex();
  protected readonly subjects = new SubjectTable();
  protected cfg: StoreLimits;
  protected readonly clock: ClockNs;
  protected msgs = 0;
  protected bytes = 0;
  protected firstSeq = 0;
  protected lastSeq = 0;
  protected lastTs = 0n;
  protected closed = false;
  /** Set while the store is refusing writes after a failed write (until it has recovered). */
  protected writeFailure: StoreError | null = null;
  private ageTimer: NodeJS.Timeout | null = null;
  /** When the armed age timer fires (ns). */
  private ageTimerDueNs = 0n;
  /** The next expiry the last pass found (ns), or null: nothing due later. */
  private nextExpiryNs: bigint | null = null;
  private readonly ttlOf: MessageTtlReader | null;
  /** Expiry times of the messages whose header carries a TTL. */
  private readonly expiry = new ExpiryTable();
  /** With limits.expiryReports: messages reported due and not removed yet. */
  private readonly reported = new ReportedExpiries();
  private expiredListener: ((due: readonly ExpiredMessage[]) => void) | null = null;
  /**
   * The max_age scan past never-expiring and reported messages starts here: every live message below it
   * is one of those (the reported ones are retried from their own list), so a pass does not walk them again.
   */
  private ageScanFromSeq = 0;
  /** The wall-clock reading shared by this synchronous run's appends (see nowNs). */
  private tickNs: bigint | null = null;
  private readonly endTick = (): void => {
    this.tickNs = null;
  };

  constructor(opts: StoreCoreOptions = {}) {
    this.cfg = { ...DEFAULT_LIMITS, ...opts.limits };
    this.clock = opts.clock ?? wallClockNs;
    this.ttlOf = opts.messageTtl ?? null;
  }

  // ---- backend hooks -------------------------------------------------------------------------

  /** Bytes a message counts for in state.bytes and max_bytes (nats-server's per-store formula). */
  protected abstract accountedSize(subjectBytes: number, headerLen: number, dataLen: number): number;
  /** Keeps the record of a message just added to the index. */
  protected abstract keepRecord(seq: number, ts: bigint, subjectId: number, header: Uint8Array, data: Uint8Array): void;
  /** The index just dropped `seq`; `erase` asks for its bytes to be destroyed. */
  protected abstract forgetRecord(seq: number, erase: boolean): void;
  /** Every message was dropped at once (purge all / compact past the end). */
  protected abstract forgetAll(): void;
  /** first/last sequence changed without a record changing (skip, compact past the end). */
  protected abstract sequencesMoved(): void;
  /** A removal the caller asked for (not a limit): it must be as durable as an append. */
  protected explicitRemoval(): void {}
  /** Reads live messages, in the order given. */
  protected abstract readRecords(seqs: readonly number[]): Promise<StoredMessage[]>;
  /** Resolves when every change so far is durable. */
  protected abstract durable(): Promise<void>;
  /** Drops all stored data (restore). */
  protected abstract wipeStorage(): Promise<void>;
  /** Streams the raw records of the durable store for a snapshot. */
  protected abstract snapshotSource(): AsyncGenerator<Buffer>;

  // ---- limits ---------------------------------------------------------------------------------

  limits(): StoreLimits {
    return { ...this.cfg };
  }

  async updateLimits(limits: Partial<StoreLimits>): Promise<void> {
    this.assertOpen();
    const ttlsBefore = this.cfg.msgTtl;
    this.cfg = { ...this.cfg, ...limits };
    this.ageScanFromSeq = 0;
    if (!ttlsBefore && this.cfg.msgTtl) await this.readTtls();
    const perSubject = this.cfg.maxMsgsPerSubject;
    if (perSubject > 0) {
      const over: number[] = [];
      for (const [, id] of this.subjects.entries()) if (this.subjects.count[id] > perSubject) over.push(id);
      for (const id of over) this.enforcePerSubject(id);
    }
    this.enforceMsgAndByteLimits();
    this.expireAged();
    this.armAgeTimer();
    await this.durable();
  }

  // ---- append ---------------------------------------------------------------------------------

  append(subject: string, header: Uint8Array | undefined, data: Uint8Array, opts?: AppendOptions): Promise<AppendResult> {
    let res: AppendResult;
    try {
      this.assertWritable();
      const seq = this.appendNow(subject, header ?? EMPTY, data, opts?.seq, opts?.timestampNs, true);
      res = { seq, timestampNs: this.lastTs };
    } catch (err) {
      return Promise.reject(err);
    }
    return this.durable().then(() => res);
  }

  appendNoWait(subject: string, header: Uint8Array | undefined, data: Uint8Array, timestampNs?: bigint): number {
    this.assertWritable();
    return this.appendNow(subject, header ?? EMPTY, data, undefined, timestampNs, true);
  }

  appendBatch(msgs: readonly AppendInput[]): Promise<AppendResult[]> {
    const out: AppendResult[] = [];
    try {
      this.assertWritable();
      for (const m of msgs) {
        const seq = this.appendNow(m.subject, m.header ?? EMPTY, m.data, m.seq, m.timestampNs, true);
        out.push({ seq, timestampNs: this.lastTs });
      }
    } catch (err) {
      // What was applied before the failure stays; make it durable before reporting.
      return this.durable().then(() => Promise.reject(err));
    }
    return this.durable().then(() => out);
  }

  /**
   * Now in ns for a new message. With the wall clock, one reading serves every append of the current
   * synchronous run (a socket read's worth of publishes): a clock read and two BigInts per message cost
   * more than the rest of the index update. Timestamps stay non-decreasing in sequence order.
   */
  private nowNs(): bigint {
    if (this.clock !== wallClockNs) return this.clock();
    let now = this.tickNs;
    if (now === null) {
      now = this.clock();
      this.tickNs = now;
      queueMicrotask(this.endTick);
    }
    return now;
  }

  /** Applies one append to the index and record keeper; returns its sequence, throws StoreError on a limit. */
  protected appendNow(
    subject: string,
    header: Uint8Array,
    data: Uint8Array,
    seq: number | undefined,
    ts: bigint | undefined,
    enforce: boolean,
  ): number {
    const cfg = this.cfg;
    const hdrLen = header.length;
    const dataLen = data.length;
    if (enforce && cfg.maxMsgSize > 0 && hdrLen + dataLen > cfg.maxMsgSize) throw new StoreError('MAX_MSG_SIZE');
    const subjects = this.subjects;
    let id = subjects.idOf(subject);
    const subjectBytes = id !== 0 ? subjects.byteLen[id] : Buffer.byteLength(subject);
    if (subjectBytes > 0xffff) throw new StoreError('MAX_MSG_SIZE', 'subject too long');
    const size = this.accountedSize(subjectBytes, hdrLen, dataLen);
    const perSubject = cfg.maxMsgsPerSubject;
    const atSubjectLimit = enforce && perSubject > 0 && id !== 0 && subjects.count[id] >= perSubject;
    if (enforce && cfg.discard === 'new') {
      if (atSubjectLimit && cfg.discardNewPerSubject) throw new StoreError('MAX_MSGS_PER_SUBJECT');
      if (cfg.maxMsgs > 0 && this.msgs >= cfg.maxMsgs && !atSubjectLimit) throw new StoreError('MAX_MSGS');
      // nats-server compares with >= here (a message that would exactly fill max_bytes is refused).
      if (cfg.maxBytes > 0 && this.bytes + size >= cfg.maxBytes) {
        if (!atSubjectLimit) throw new StoreError('MAX_BYTES');
        const oldest = subjects.first[id];
        if (!this.index.isLive(oldest) || this.index.sizeOf(oldest) < size) throw new StoreError('MAX_BYTES');
      }
    }
    const expected = this.lastSeq + 1;
    if (seq !== undefined && seq !== expected) {
      throw new StoreError('SEQUENCE_MISMATCH', `got ${seq}, expected ${expected}`);
    }
    const at = ts ?? this.nowNs();
    if (id === 0) id = subjects.intern(subject);
    if (this.msgs === 0) this.firstSeq = expected;
    this.index.add(expected, id, size, at, subjects.count[id] === 0 ? 0 : subjects.last[id]);
    // Only a TTL stream reads headers for a TTL: elsewhere Nats-TTL was refused at publish.
    const ttlDueNs = hdrLen > 0 && cfg.msgTtl && this.ttlOf !== null ? this.trackTtl(expected, at, header) : null;
    if (subjects.count[id] === 0) subjects.first[id] = expected;
    subjects.count[id]++;
    subjects.last[id] = expected;
    this.msgs++;
    this.bytes += size;
    this.lastSeq = expected;
    this.lastTs = at;
    this.keepRecord(expected, at, id, header, data);
    if (enforce) {
      if (perSubject > 0 && subjects.count[id] > perSubject) this.enforcePerSubject(id);
      this.enforceMsgAndByteLimits();
      if (cfg.maxAgeNs > 0n && this.ageTimer === null && this.msgs > 0) this.scheduleExpiry(this.index.tsOf(this.firstSeq) + cfg.maxAgeNs);
      if (ttlDueNs !== null && cfg.msgTtl) this.scheduleExpiry(ttlDueNs);
    }
    return expected;
  }

  /** TTLs were just turned on: the messages already stored get their expiry from their headers (nats-server's recoverTTLState). */
  private async readTtls(): Promise<void> {
    if (this.ttlOf === null || this.msgs === 0) return;
    const end = this.lastSeq;
    for (let from = this.firstSeq; from <= end; from += TTL_SCAN_STEP) {
      const seqs: number[] = [];
      for (let s = from; s < from + TTL_SCAN_STEP && s <= end; s++) if (this.index.isLive(s)) seqs.push(s);
      if (seqs.length === 0) continue;
      for (const m of await this.readRecords(seqs)) {
        // Removed while reading: no entry for it.
        if (m.header.length > 0 && this.index.isLive(m.seq)) this.trackTtl(m.seq, m.timestampNs, m.header);
      }
    }
  }

  /** Records the expiry of a message whose header carries a TTL; returns its expiry time (null: none, or never). */
  private trackTtl(seq: number, ts: bigint, header: Uint8Array): bigint | null {
    const ttlNs = this.ttlOf!(header);
    if (ttlNs === 0n) return null;
    if (ttlNs < 0n) {
      this.expiry.add(seq, ExpiryTable.NEVER);
      return null;
    }
    this.expiry.add(seq, ts + ttlNs);
    return ts + ttlNs;
  }

  /** Re-indexes a message found on disk at open (sequences arrive in increasing order). */
  protected recover(seq: number, subject: string, header: Uint8Array, dataLen: number, ts: bigint): void {
    const subjects = this.subjects;
    const id = subjects.intern(subject);
    const headerLen = header.length;
    const size = this.accountedSize(subjects.byteLen[id], headerLen, dataLen);
    if (this.msgs === 0) this.firstSeq = seq;
    this.index.add(seq, id, size, ts, subjects.count[id] === 0 ? 0 : subjects.last[id]);
    // The expiry comes from the stored message itself, so a restart keeps it exactly.
    if (headerLen > 0 && this.cfg.msgTtl && this.ttlOf !== null) this.trackTtl(seq, ts, header);
    if (subjects.count[id] === 0) subjects.first[id] = seq;
    subjects.count[id]++;
    subjects.last[id] = seq;
    this.msgs++;
    this.bytes += size;
    this.lastSeq = seq;
    this.lastTs = ts;
  }

  async skipMsgs(seq: number, count: number): Promise<void> {
    this.assertWritable();
    if (seq !== this.lastSeq + 1) throw new StoreError('SEQUENCE_MISMATCH', `got ${seq}, expected ${this.lastSeq + 1}`);
    if (count <= 0) return;
    this.lastSeq += count;
    if (this.msgs === 0) this.firstSeq = this.lastSeq + 1;
    this.sequencesMoved();
    this.explicitRemoval();
    await this.durable();
  }

  // ---- removal --------------------------------------------------------------------------------

  /** Drops one live message from the index and tells the record keeper. */
  protected removeSeq(seq: number, erase: boolean): void {
    const index = this.index;
    const id = index.subjOf(seq);
    const subjects = this.subjects;
    subjects.count[id]--;
    if (subjects.count[id] === 0) {
      subjects.release(id);
    } else {
      if (subjects.first[id] === seq) subjects.first[id] = index.nextOf(seq);
      if (subjects.last[id] === seq) subjects.last[id] = index.prevOf(seq);
    }
    this.bytes -= index.sizeOf(seq);
    if (this.expiry.size > 0) this.expiry.remove(seq);
    if (this.reported.size > 0) this.reported.removed(seq);
    index.remove(seq);
    this.msgs--;
    if (seq === this.firstSeq) this.advanceFirst();
    this.forgetRecord(seq, erase);
  }

  private advanceFirst(): void {
    if (this.msgs === 0) {
      this.firstSeq = this.lastSeq + 1;
    } else {
      let s = this.firstSeq + 1;
      while (!this.index.isLive(s)) s++; // terminates: msgs > 0 means a live seq <= lastSeq exists
      this.firstSeq = s;
    }
    this.index.trimBelow(this.firstSeq);
  }

  private enforcePerSubject(id: number): void {
    const max = this.cfg.maxMsgsPerSubject;
    const subjects = this.subjects;
    while (subjects.count[id] > max) this.removeSeq(subjects.first[id], false);
  }

  private enforceMsgAndByteLimits(): void {
    const cfg = this.cfg;
    // Like nats-server (2.10+), only discard old trims; discard new refuses up front instead.
    if (cfg.discard !== 'old') return;
    if (cfg.maxMsgs > 0) while (this.msgs > cfg.maxMsgs) this.removeSeq(this.firstSeq, false);
    if (cfg.maxBytes > 0) while (this.bytes > cfg.maxBytes && this.msgs > 0) this.removeSeq(this.firstSeq, false);
  }

  /**
   * One expiry pass: messages past max_age (from the front: timestamps follow sequence order; ones whose TTL
   * says never are skipped) and messages whose TTL has run out. With limits.expiryReports they are reported
   * to the expiry listener instead (its removals go through the stream's log), each again after
   * ReportedExpiries.REPORT_RETRY_MS while it stays. Sets nextExpiryNs; returns the number removed.
   */
  protected expireAged(): number {
    this.nextExpiryNs = null;
    const cfg = this.cfg;
    if (this.msgs === 0) return 0;
    const maxAge = cfg.maxAgeNs;
    const ttls = cfg.msgTtl && this.expiry.size > this.expiry.neverCount;
    const reporting = cfg.expiryReports;
    if (maxAge <= 0n && !ttls && !(reporting && this.reported.size > 0)) return 0;
    const now = this.clock();
    if (reporting && this.expiredListener === null) {
      this.nextExpiryNs = now + NO_LISTENER_RETRY_NS;
      return 0;
    }
    const nowMs = Number(now / NS_PER_MS);
    const due: ExpiredMessage[] = [];
    let removed = 0;
    let next: bigint | null = null;
    const sooner = (t: bigint): void => {
      if (next === null || t < next) next = t;
    };
    let budget = EXPIRY_PASS_MAX;
    if (maxAge > 0n) {
      const cutoff = now - maxAge;
      const skipNevers = cfg.msgTtl && this.expiry.neverCount > 0;
      if (!reporting && !skipNevers) {
        while (this.msgs > 0 && this.index.tsOf(this.firstSeq) <= cutoff) {
          this.removeSeq(this.firstSeq, false);
          removed++;
        }
        if (this.msgs > 0) sooner(this.index.tsOf(this.firstSeq) + maxAge);
      } else {
        let s = Math.max(this.firstSeq, this.ageScanFromSeq);
        for (; s <= this.lastSeq && budget > 0; budget--) {
          if (!this.index.isLive(s)) {
            s++;
            continue;
          }
          const ts = this.index.tsOf(s);
          if (ts > cutoff) {
            sooner(ts + maxAge);
            break;
          }
          const at = s++;
          if (skipNevers && this.expiry.isNever(at)) continue;
          if (reporting) {
            if (!this.reported.has(at)) this.report(at, nowMs, due);
          } else {
            this.removeSeq(at, false);
            removed++;
          }
        }
        this.ageScanFromSeq = s;
        if (budget === 0) sooner(now + NS_PER_MS);
      }
    }
    if (ttls && budget > 0) {
      const seqs = this.expiry.takeDue(now, budget);
      for (const s of seqs) {
        if (!this.index.isLive(s)) this.expiry.remove(s);
        else if (reporting) {
          if (!this.reported.has(s)) this.report(s, nowMs, due);
        } else {
          this.removeSeq(s, false);
          removed++;
        }
      }
      const t = this.expiry.nextNs();
      if (t !== null) sooner(t);
      if (seqs.length === budget) sooner(now + NS_PER_MS);
    }
    if (reporting && this.reported.size > 0) {
      for (const s of this.reported.retryable(nowMs)) {
        if (!this.index.isLive(s)) this.reported.removed(s);
        else this.report(s, nowMs, due);
      }
      const retryMs = this.reported.nextRetryMs();
      if (retryMs !== null) sooner(BigInt(retryMs) * NS_PER_MS);
    }
    this.nextExpiryNs = next;
    if (due.length > 0) {
      due.sort((a, b) => a.seq - b.seq);
      try {
        this.expiredListener!(due);
      } catch {
        // The listener's failure must not stop expiry; the messages are reported again after the retry time.
      }
    }
    return removed;
  }

  private report(seq: number, nowMs: number, into: ExpiredMessage[]): void {
    const id = this.index.subjOf(seq);
    const subject = this.subjects.names[id]!;
    const d = this.reported.decide(seq, subject, this.subjects.count[id], nowMs);
    if (d !== null) into.push({ seq, subject, lastOfSubject: d.last });
  }

  /**
   * Hands due messages to `listener` instead of removing them, while limits.expiryReports is set. Setting a
   * listener (again) reports everything due at once, whatever was reported before: a node that has just
   * become the one to act need not wait out the retry time.
   */
  onExpired(listener: ((due: readonly ExpiredMessage[]) => void) | null): void {
    this.expiredListener = listener;
    if (listener === null) return;
    this.reported.clear();
    this.ageScanFromSeq = 0;
    if (this.cfg.expiryReports) this.armAgeTimer();
  }

  /** Runs an expiry pass soon (limits changed, messages moved, the store opened). */
  protected armAgeTimer(): void {
    this.stopAgeTimer();
    if (this.msgs === 0 || this.closed) return;
    if (this.cfg.maxAgeNs > 0n || (this.cfg.msgTtl && this.expiry.size > 0) || this.reported.size > 0) this.scheduleExpiry(this.clock());
  }

  /** Arms the age timer for `dueNs` unless it already fires earlier. */
  private scheduleExpiry(dueNs: bigint): void {
    if (this.closed) return;
    if (this.ageTimer !== null) {
      if (this.ageTimerDueNs <= dueNs) return;
      clearTimeout(this.ageTimer);
    }
    const delayMs = Math.max(1, Math.ceil(nsToMs(Number(dueNs - this.clock()))));
    this.ageTimerDueNs = dueNs;
    this.ageTimer = setTimeout(this.onAgeTimer, delayMs);
    this.ageTimer.unref();
  }

  private readonly onAgeTimer = (): void => {
    this.ageTimer = null;
    if (this.closed) return;
    if (this.expireAged() > 0) this.durable().catch(() => undefined);
    if (this.nextExpiryNs !== null) this.scheduleExpiry(this.nextExpiryNs);
  };

  protected stopAgeTimer(): void {
    if (this.ageTimer !== null) clearTimeout(this.ageTimer);
    this.ageTimer = null;
  }

  async delete(seq: number, opts?: { erase?: boolean }): Promise<boolean> {
    this.assertWritable();
    if (!this.index.isLive(seq)) return false;
    this.removeSeq(seq, opts?.erase ?? true);
    this.explicitRemoval();
    await this.durable();
    return true;
  }

  async purge(opts: PurgeOptions = {}): Promise<number> {
    this.assertWritable();
    const filter = new SubjectFilter(opts.filter);
    const below = opts.seq ?? 0;
    const keep = opts.keep ?? 0;
    if (filter.matchesAll) {
      if (keep === 0 && below === 0) return this.purgeAll();
      if (below > 1) return this.compact(below);
    }
    let maxPurge = Number.MAX_SAFE_INTEGER;
    if (keep > 0) {
      const total = this.filteredState(filter.source, 1).msgs;
      if (keep >= total) return 0;
      maxPurge = total - keep;
    }
    const toRemove: number[] = [];
    if (this.msgs > 0) {
      const end = below > 0 ? Math.min(below - 1, this.lastSeq) : this.lastSeq;
      const matcher = new SubjectMatcher(filter, this.subjects);
      let start = this.firstSeq;
      let stop = end;
      if (filter.isLiteral) {
        const id = this.subjects.idOf(filter.source);
        if (id === 0) return 0;
        start = this.subjects.first[id];
        stop = Math.min(end, this.subjects.last[id]);
      }
      const index = this.index;
      for (let s = start; s <= stop && toRemove.length < maxPurge; s++) {
        const id = index.subjOf(s);
        if (id !== 0 && matcher.matches(id)) toRemove.push(s);
      }
    }
    for (const s of toRemove) this.removeSeq(s, false);
    this.explicitRemoval();
    await this.durable();
    return toRemove.length;
  }

  private async purgeAll(): Promise<number> {
    const purged = this.msgs;
    this.dropEverything(this.lastSeq + 1);
    this.explicitRemoval();
    await this.durable();
    return purged;
  }

  /** Empties the index; the next sequence stays `nextSeq` (purge never resets sequences). */
  private dropEverything(nextSeq: number): void {
    this.subjects.clear();
    this.index.reset(nextSeq);
    this.msgs = 0;
    this.bytes = 0;
    this.lastSeq = Math.max(this.lastSeq, nextSeq - 1);
    this.firstSeq = nextSeq;
    this.expiry.clear();
    this.reported.clear();
    this.ageScanFromSeq = 0;
    this.forgetAll();
    this.stopAgeTimer();
  }

  async compact(seq: number): Promise<number> {
    this.assertWritable();
    if (seq <= 0) return this.purgeAll();
    if (seq > this.lastSeq) {
      const purged = this.msgs;
      this.dropEverything(seq);
      this.sequencesMoved();
      this.explicitRemoval();
      await this.durable();
      return purged;
    }
    let purged = 0;
    while (this.msgs > 0 && this.firstSeq < seq) {
      this.removeSeq(this.firstSeq, false);
      purged++;
    }
    this.armAgeTimer();
    this.explicitRemoval();
    await this.durable();
    return purged;
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** Live and not past max_age (expired messages are never returned, even before the timer runs). */
  protected visible(seq: number, cutoff: bigint | null): boolean {
    if (this.index.subjOf(seq) === 0) return false;
    return cutoff === null || this.index.tsOf(seq) > cutoff;
  }

  protected ageCutoff(): bigint | null {
    // With per-message TTLs some old messages never expire: visibility then follows removal (as nats-server).
    return this.cfg.maxAgeNs > 0n && !this.cfg.msgTtl ? this.clock() - this.cfg.maxAgeNs : null;
  }

  async get(seq: number): Promise<StoredMessage | null> {
    this.assertOpen();
    if (!this.visible(seq, this.ageCutoff())) return null;
    const [msg] = await this.readRecords([seq]);
    return msg ?? null;
  }

  async lastBySubject(filterText: string): Promise<StoredMessage | null> {
    const seq = this.lastMatchingSeq(new SubjectFilter(filterText));
    return seq === 0 ? null : this.get(seq);
  }

  private lastMatchingSeq(filter: SubjectFilter): number {
    if (this.msgs === 0) return 0;
    const subjects = this.subjects;
    if (filter.isLiteral) {
      const id = subjects.idOf(filter.source);
      return id === 0 ? 0 : subjects.last[id];
    }
    if (!filter.matchesAll && subjects.size < this.lastSeq - this.firstSeq + 1) {
      let best = 0;
      for (const [name, id] of subjects.entries()) {
        if (subjects.last[id] > best && filter.matches(name)) best = subjects.last[id];
      }
      return best;
    }
    const matcher = new SubjectMatcher(filter, subjects);
    for (let s = this.lastSeq; s >= this.firstSeq; s--) {
      const id = this.index.subjOf(s);
      if (id !== 0 && matcher.matches(id)) return s;
    }
    return 0;
  }

  async nextMatching(filterText: string, startSeq: number): Promise<StoredMessage | null> {
    this.assertOpen();
    const filter = new SubjectFilter(filterText);
    const seq = this.nextMatchingSeq(filter, new SubjectMatcher(filter, this.subjects), startSeq, this.ageCutoff());
    if (seq === 0) return null;
    const [msg] = await this.readRecords([seq]);
    return msg ?? null;
  }

  /** First visible sequence >= start matching, 0 if none. */
  private nextMatchingSeq(filter: SubjectFilter, matcher: SubjectMatcher, start: number, cutoff: bigint | null): number {
    if (this.msgs === 0) return 0;
    let s = Math.max(start, this.firstSeq);
    let stop = this.lastSeq;
    const index = this.index;
    if (filter.isLiteral) {
      const id = this.subjects.idOf(filter.source);
      if (id === 0) return 0;
      stop = this.subjects.last[id];
      if (s <= this.subjects.first[id]) s = this.subjects.first[id];
    }
    for (; s <= stop; s++) {
      const id = index.subjOf(s);
      if (id !== 0 && matcher.matches(id)) {
        // Timestamps follow sequence order, so an expired match means later ones may still be fresh.
        if (cutoff !== null && index.tsOf(s) <= cutoff) continue;
        return s;
      }
    }
    return 0;
  }

  async readRange(startSeq: number, maxMsgs: number, filterText?: string): Promise<StoredMessage[]> {
    this.assertOpen();
    const filter = new SubjectFilter(filterText);
    const matcher = new SubjectMatcher(filter, this.subjects);
    const cutoff = this.ageCutoff();
    const limit = Math.min(maxMsgs, MAX_READ_RANGE);
    const seqs: number[] = [];
    const index = this.index;
    if (filter.matchesAll) {
      for (let s = Math.max(startSeq, this.firstSeq); s <= this.lastSeq && seqs.length < limit; s++) {
        if (index.subjOf(s) !== 0 && (cutoff === null || index.tsOf(s) > cutoff)) seqs.push(s);
      }
    } else {
      let s = startSeq;
      while (seqs.length < limit) {
        const found = this.nextMatchingSeq(filter, matcher, s, cutoff);
        if (found === 0) break;
        seqs.push(found);
        s = found + 1;
      }
    }
    return seqs.length === 0 ? [] : this.readRecords(seqs);
  }

  seqFromTime(timestampNs: bigint): number {
    if (this.msgs === 0) return this.lastSeq + 1;
    const index = this.index;
    // Timestamps rise with sequence: binary search over the window, stepping over holes.
    let lo = this.firstSeq;
    let hi = this.lastSeq;
    let found = this.lastSeq + 1;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      let s = mid;
      while (s <= hi && !index.isLive(s)) s++;
      if (s > hi) {
        hi = mid - 1;
        continue;
      }
      if (index.tsOf(s) >= timestampNs) {
        found = s;
        hi = mid - 1;
      } else {
        lo = s + 1;
      }
    }
    return found;
  }

  lastSeqsPerSubject(filterText: string): number[] {
    const filter = new SubjectFilter(filterText);
    const out: number[] = [];
    for (const [name, id] of this.subjects.entries()) if (filter.matches(name)) out.push(this.subjects.last[id]);
    return out.sort((a, b) => a - b);
  }

  lastSeqForSubject(subject: string): number {
    const id = this.subjects.idOf(subject);
    return id === 0 ? 0 : this.subjects.last[id];
  }

  state(opts?: { deleted?: boolean }): StoreState {
    const hasMsgs = this.msgs > 0;
    const st: StoreState = {
      messages: this.msgs,
      bytes: this.bytes,
      first_seq: this.firstSeq,
      first_ts: hasMsgs ? this.index.tsOf(this.firstSeq) : 0n,
      last_seq: this.lastSeq,
      last_ts: this.lastTs,
      num_subjects: this.subjects.size,
      num_deleted: hasMsgs ? this.lastSeq - this.firstSeq + 1 - this.msgs : 0,
    };
    if (opts?.deleted) {
      const deleted: number[] = [];
      if (hasMsgs) for (let s = this.firstSeq; s <= this.lastSeq; s++) if (!this.index.isLive(s)) deleted.push(s);
      st.deleted = deleted;
    }
    return st;
  }

  filteredState(filterText: string, startSeq: number): FilteredState {
    const none: FilteredState = { msgs: 0, first: 0, last: 0 };
    if (this.msgs === 0) return none;
    const filter = new SubjectFilter(filterText);
    const subjects = this.subjects;
    const start = Math.max(startSeq, this.firstSeq);
    if (start > this.lastSeq) return none;
    if (start <= this.firstSeq) {
      if (filter.matchesAll) return { msgs: this.msgs, first: this.firstSeq, last: this.lastMatchingSeq(filter) };
      if (filter.isLiteral) {
        const id = subjects.idOf(filter.source);
        return id === 0 ? none : { msgs: subjects.count[id], first: subjects.first[id], last: subjects.last[id] };
      }
      if (subjects.size < this.msgs) {
        const out: FilteredState = { msgs: 0, first: 0, last: 0 };
        for (const [name, id] of subjects.entries()) {
          if (!filter.matches(name)) continue;
          out.msgs += subjects.count[id];
          if (out.first === 0 || subjects.first[id] < out.first) out.first = subjects.first[id];
          if (subjects.last[id] > out.last) out.last = subjects.last[id];
        }
        return out;
      }
    }
    const matcher = new SubjectMatcher(filter, subjects);
    const out: FilteredState = { msgs: 0, first: 0, last: 0 };
    let s = start;
    let stop = this.lastSeq;
    if (filter.isLiteral) {
      const id = subjects.idOf(filter.source);
      if (id === 0) return none;
      s = Math.max(s, subjects.first[id]);
      stop = subjects.last[id];
    }
    for (; s <= stop; s++) {
      const id = this.index.subjOf(s);
      if (id === 0 || !matcher.matches(id)) continue;
      out.msgs++;
      if (out.first === 0) out.first = s;
      out.last = s;
    }
    return out;
  }

  subjectCounts(filterText?: string): Map<string, number> {
    const filter = new SubjectFilter(filterText);
    const out = new Map<string, number>();
    for (const [name, id] of this.subjects.entries()) if (filter.matches(name)) out.set(name, this.subjects.count[id]);
    return out;
  }

  // ---- snapshot / restore ---------------------------------------------------------------------

  async *snapshot(): AsyncGenerator<Uint8Array> {
    this.assertOpen();
    yield* this.snapshotSource();
  }

  /** Frames records (already record-encoded buffers) for a snapshot stream. */
  protected async *frameSnapshot(
    header: { firstSeq: number; lastSeq: number; lastTs: bigint },
    records: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): AsyncGenerator<Buffer> {
    yield encodeHeader(header);
    let parts: Buffer[] = [];
    let bytes = 0;
    for await (const r of records) {
      parts.push(r);
      bytes += r.length;
      if (bytes >= SNAPSHOT_FRAME_BYTES) {
        yield encodeFrame(FRAME_RECORDS, Buffer.concat(parts, bytes));
        parts = [];
        bytes = 0;
      }
    }
    if (bytes > 0) yield encodeFrame(FRAME_RECORDS, Buffer.concat(parts, bytes));
    yield encodeFrame(FRAME_END, Buffer.alloc(0));
  }

  /** Empties the in-memory view: no message, no subject, sequences from the start. */
  protected forgetMessages(): void {
    this.subjects.clear();
    this.index.reset(1);
    this.expiry.clear();
    this.reported.clear();
    this.ageScanFromSeq = 0;
    this.msgs = 0;
    this.bytes = 0;
    this.firstSeq = 0;
    this.lastSeq = 0;
    this.lastTs = 0n;
  }

  /** Encodes one live message as a record (MemoryStore snapshots). */
  protected encodeLive(seq: number, header: Uint8Array, data: Uint8Array): Buffer {
    const id = this.index.subjOf(seq);
    const subject = this.subjects.bytes[id];
    const buf = Buffer.allocUnsafe(recordLength(subject.length, header.length, data.length));
    writeRecord(viewOf(buf), buf, 0, seq, this.index.tsOf(seq), subject, header, data);
    return buf;
  }

  async restore(source: AsyncIterable<Uint8Array>): Promise<void> {
    this.assertWritable();
    await this.durable();
    this.stopAgeTimer();
    await this.wipeStorage();
    this.forgetMessages();
    let sawHeader = false;
    let sawEnd = false;
    let lastTs = 0n;
    let endSeq = 0;
    for await (const { kind, payload } of readFrames(source)) {
      if (kind === FRAME_HEADER) {
        const h = decodeHeader(payload);
        sawHeader = true;
        lastTs = h.lastTs;
        // Sequences before the first message are consumed, like a compact.
        if (h.firstSeq > 1) {
          this.lastSeq = h.firstSeq - 1;
          this.firstSeq = h.firstSeq;
          this.index.reset(h.firstSeq);
        }
        endSeq = h.lastSeq;
      } else if (kind === FRAME_RECORDS) {
        if (!sawHeader) throw new StoreError('CORRUPT', 'snapshot records before header');
        const cur = new RecordCursor(payload);
        for (let off = 0; off < payload.length; off = cur.end) {
          cur.readAt(off);
          if (!cur.sound(off)) throw new StoreError('CORRUPT', `snapshot record ${cur.seq} fails its checksum`);
          if (cur.seq <= this.lastSeq) throw new StoreError('CORRUPT', `snapshot sequence ${cur.seq} out of order`);
          if (cur.seq > this.lastSeq + 1) {
            this.lastSeq = cur.seq - 1;
            if (this.msgs === 0) this.firstSeq = cur.seq;
            this.sequencesMoved();
          }
          this.appendNow(
            cur.subject(),
            payload.subarray(cur.headerStart, cur.dataStart),
            payload.subarray(cur.dataStart, cur.dataEnd),
            cur.seq,
            cur.ts(off),
            false,
          );
        }
        await this.durable();
      } else if (kind === FRAME_END) {
        sawEnd = true;
      }
    }
    if (!sawHeader || !sawEnd) throw new StoreError('CORRUPT', 'incomplete snapshot');
    if (endSeq > this.lastSeq) {
      this.lastSeq = endSeq;
      if (this.msgs === 0) this.firstSeq = this.lastSeq + 1;
      this.sequencesMoved();
    }
    this.lastTs = lastTs;
    this.sequencesMoved();
    this.explicitRemoval();
    this.expireAged();
    this.armAgeTimer();
    await this.durable();
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  flush(): Promise<void> {
    return this.durable();
  }

  sync(): Promise<void> {
    return this.flush();
  }

  abstract close(): Promise<void>;

  protected assertOpen(): void {
    if (this.closed) throw new StoreError('CLOSED');
  }

  /** Mutations are refused while a failed write is being recovered from. */
  protected assertWritable(): void {
    if (this.closed) throw new StoreError('CLOSED');
    if (this.writeFailure !== null) throw this.writeFailure;
  }
}
