// Per-message expiry times (a stream's per-message TTLs), kept beside the sequence index. The expiry time is
// derived from what is stored (the message's timestamp plus the TTL its header carries), so it is the same
// after a restart and on every replica. A min-heap orders the times; entries of messages removed by other
// means are dropped lazily when they reach the top (and the heap is rebuilt when such dead entries dominate).

/** `header` → the message's TTL in ns: 0n none, negative: never expires (not even by max_age). */
export type MessageTtlReader = (header: Uint8Array) => bigint;

/** A live message due to expire, reported instead of removed (stores whose removals go through a log). */
export interface ExpiredMessage {
  seq: number;
  subject: string;
  /** Removing it would leave its subject without messages (counting the other reported ones as gone). */
  lastOfSubject: boolean;
}

/** Heap entries: expiry time and sequence in two parallel arrays. */
export class ExpiryTable {
  /** seq → expiry time (ns); NEVER for messages that never expire. */
  private readonly bySeq = new Map<number, bigint>();
  private heapAt: bigint[] = [];
  private heapSeq: number[] = [];
  private nevers = 0;

  static readonly NEVER = -1n;

  get size(): number {
    return this.bySeq.size;
  }

  /** Messages that never expire (max_age skips them). */
  get neverCount(): number {
    return this.nevers;
  }

  isNever(seq: number): boolean {
    return this.nevers > 0 && this.bySeq.get(seq) === ExpiryTable.NEVER;
  }

  add(seq: number, expiresNs: bigint): void {
    this.remove(seq);
    this.bySeq.set(seq, expiresNs);
    if (expiresNs === ExpiryTable.NEVER) {
      this.nevers++;
      return;
    }
    this.push(expiresNs, seq);
  }

  remove(seq: number): void {
    const at = this.bySeq.get(seq);
    if (at === undefined) return;
    this.bySeq.delete(seq);
    if (at === ExpiryTable.NEVER) this.nevers--;
    // Heap entry left behind; dropped when it surfaces. Rebuild once dead entries are most of the heap.
    if (this.heapAt.length > 1024 && this.heapAt.length > 2 * (this.bySeq.size - this.nevers)) this.rebuild();
  }

  clear(): void {
    this.bySeq.clear();
    this.heapAt = [];
    this.heapSeq = [];
    this.nevers = 0;
  }

  /** The earliest live expiry time, or null. */
  nextNs(): bigint | null {
    this.dropDead();
    return this.heapAt.length === 0 ? null : this.heapAt[0]!;
  }

  /** Takes up to `max` sequences due at `nowNs` out of the heap (they stay in the table until removed). */
  takeDue(nowNs: bigint, max: number): number[] {
    const out: number[] = [];
    while (out.length < max) {
      this.dropDead();
      if (this.heapAt.length === 0 || this.heapAt[0]! > nowNs) break;
      out.push(this.heapSeq[0]!);
      this.pop();
    }
    return out;
  }

  private dropDead(): void {
    while (this.heapAt.length > 0 && this.bySeq.get(this.heapSeq[0]!) !== this.heapAt[0]) this.pop();
  }

  private rebuild(): void {
    this.heapAt = [];
    this.heapSeq = [];
    for (const [seq, at] of this.bySeq) if (at !== ExpiryTable.NEVER) this.push(at, seq);
  }

  private push(at: bigint, seq: number): void {
    const a = this.heapAt;
    const s = this.heapSeq;
    let i = a.length;
    a.push(at);
    s.push(seq);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! < a[i]! || (a[p] === a[i] && s[p]! <= s[i]!)) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      [s[p], s[i]] = [s[i]!, s[p]!];
      i = p;
    }
  }

  private pop(): void {
    const a = this.heapAt;
    const s = this.heapSeq;
    const lastAt = a.pop()!;
    const lastSeq = s.pop()!;
    if (a.length === 0) return;
    a[0] = lastAt;
    s[0] = lastSeq;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && (a[l]! < a[m]! || (a[l] === a[m] && s[l]! < s[m]!))) m = l;
      if (r < a.length && (a[r]! < a[m]! || (a[r] === a[m] && s[r]! < s[m]!))) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i]!, a[m]!];
      [s[m], s[i]] = [s[i]!, s[m]!];
      i = m;
    }
  }
}

/**
 * The reported-but-not-yet-removed messages (nats-server's SDMMeta): a message is reported again only after
 * REPORT_RETRY_MS, and a subject's count of reported messages decides whether the next one is its last.
 */
export class ReportedExpiries {
  static readonly REPORT_RETRY_MS = 2000;
  private readonly bySeq = new Map<number, { subject: string; last: boolean; atMs: number }>();
  private readonly bySubject = new Map<string, number>();

  get size(): number {
    return this.bySeq.size;
  }

  /**
   * Whether `seq` is reported now (null: reported within the retry time) and whether it is its subject's
   * last. `subjectMsgs` is the subject's live message count.
   */
  decide(seq: number, subject: string, subjectMsgs: number, nowMs: number): { last: boolean } | null {
    const p = this.bySeq.get(seq);
    if (p !== undefined) {
      if (nowMs - p.atMs < ReportedExpiries.REPORT_RETRY_MS) return null;
      // Messages stored since on the subject make it not the last any more.
      if (p.last && subjectMsgs - (this.bySubject.get(subject) ?? 0) > 0) p.last = false;
      p.atMs = nowMs;
      return { last: p.last };
    }
    if (subjectMsgs === 0) return { last: false };
    const pending = this.bySubject.get(subject) ?? 0;
    const last = subjectMsgs - pending === 1;
    this.bySeq.set(seq, { subject, last, atMs: nowMs });
    this.bySubject.set(subject, pending + 1);
    return { last };
  }

  has(seq: number): boolean {
    return this.bySeq.has(seq);
  }

  /** Earliest time (ms) a reported message may be reported again, or null. */
  nextRetryMs(): number | null {
    let min: number | null = null;
    for (const p of this.bySeq.values()) if (min === null || p.atMs < min) min = p.atMs;
    return min === null ? null : min + ReportedExpiries.REPORT_RETRY_MS;
  }

  /** Reported sequences whose retry time has come, in order. */
  retryable(nowMs: number): number[] {
    const out: number[] = [];
    for (const [seq, p] of this.bySeq) if (nowMs - p.atMs >= ReportedExpiries.REPORT_RETRY_MS) out.push(seq);
    return out.sort((a, b) => a - b);
  }

  removed(seq: number): void {
    const p = this.bySeq.get(seq);
    if (p === undefined) return;
    this.bySeq.delete(seq);
    const n = (this.bySubject.get(p.subject) ?? 1) - 1;
    if (n <= 0) this.bySubject.delete(p.subject);
    else this.bySubject.set(p.subject, n);
  }

  clear(): void {
    this.bySeq.clear();
    this.bySubject.clear();
  }
}
