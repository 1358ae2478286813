import type { Entry, SnapshotMeta } from './types.js';

/**
 * The node's log as the core sees it: everything after the last snapshot is held in memory (the driver
 * compacts through snapshots), and `unstableFrom` marks the first entry not yet known to be on disk.
 */
export class RaftLog {
  snapshotIndex: number;
  snapshotTerm: number;
  private entries: Entry[] = [];
  /** First index not known to be persisted; lastIndex() + 1 when everything is on disk. */
  unstableFrom: number;
  committed: number;
  applied: number;

  constructor(snapshotIndex: number, snapshotTerm: number, entries: readonly Entry[], committed: number) {
    this.snapshotIndex = snapshotIndex;
    this.snapshotTerm = snapshotTerm;
    this.entries = entries.filter((e) => e.index > snapshotIndex);
    this.unstableFrom = this.lastIndex() + 1;
    this.committed = Math.max(committed, snapshotIndex);
    this.applied = snapshotIndex;
  }

  firstIndex(): number {
    return this.snapshotIndex + 1;
  }

  lastIndex(): number {
    return this.snapshotIndex + this.entries.length;
  }

  lastTerm(): number {
    return this.entries.length > 0 ? this.entries[this.entries.length - 1]!.term : this.snapshotTerm;
  }

  /** Term at `index`, or undefined when compacted away or beyond the end. */
  term(index: number): number | undefined {
    if (index === this.snapshotIndex) return this.snapshotTerm;
    if (index < this.snapshotIndex || index > this.lastIndex()) return undefined;
    return this.entries[index - this.snapshotIndex - 1]!.term;
  }

  entry(index: number): Entry | undefined {
    if (index <= this.snapshotIndex) return undefined;
    return this.entries[index - this.snapshotIndex - 1];
  }

  matchTerm(index: number, term: number): boolean {
    return this.term(index) === term;
  }

  /** Entries in [lo, hi), bounded by maxBytes (always at least one entry). lo must be > snapshotIndex. */
  slice(lo: number, hi: number, maxBytes = Infinity, maxCount = Infinity): Entry[] {
    const from = lo - this.snapshotIndex - 1;
    const to = Math.min(hi, this.lastIndex() + 1) - this.snapshotIndex - 1;
    if (from < 0) throw new RangeError(`slice ${lo} below first index ${this.firstIndex()}`);
    if (maxBytes === Infinity && maxCount === Infinity) return this.entries.slice(from, to);
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = from; i < to && out.length < maxCount; i++) {
      const e = this.entries[i]!;
      bytes += e.data.length + 24;
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  /** Candidate's log (lastIndex, lastTerm) is at least as up to date as ours. */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const ourTerm = this.lastTerm();
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex());
  }

  /** Leader appends its own entries. */
  appendOwn(entries: readonly Entry[]): void {
    for (const e of entries) this.entries.push(e);
  }

  /**
   * Follower appends entries after (prevIndex, prevTerm), keeping existing matching entries (a reordered,
   * older append must not cut the log short). Returns the index the first conflict was truncated from (or 0).
   */
  appendAfter(entries: readonly Entry[]): number {
    let truncatedFrom = 0;
    let start = 0;
    // Skip entries we already hold (duplicates and reordered older appends): the common case is a pure append.
    while (start < entries.length) {
      const e = entries[start]!;
      if (e.index <= this.snapshotIndex || (e.index <= this.lastIndex() && this.term(e.index) === e.term)) start++;
      else break;
    }
    const firstNew = entries[start];
    if (firstNew && firstNew.index === this.lastIndex() + 1) {
      for (let i = start; i < entries.length; i++) this.entries.push(entries[i]!);
      this.unstableFrom = Math.min(this.unstableFrom, firstNew.index);
      return 0;
    }
    for (let i = start; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.index <= this.snapshotIndex) continue;
      const existing = this.term(e.index);
      if (existing === e.term) continue;
      if (existing !== undefined) {
        // Conflict: drop this entry and everything after it.
        this.entries.length = e.index - this.snapshotIndex - 1;
        if (truncatedFrom === 0) truncatedFrom = e.index;
        this.unstableFrom = Math.min(this.unstableFrom, e.index);
      }
      if (e.index !== this.lastIndex() + 1) throw new RangeError(`gap: appending ${e.index} after ${this.lastIndex()}`);
      this.entries.push(e);
      this.unstableFrom = Math.min(this.unstableFrom, e.index);
    }
    return truncatedFrom;
  }

  /** First index of the run of entries with `term` that contains `index` (for rejection hints). */
  firstIndexOfTermAt(index: number): number {
    const term = this.term(index);
    let i = index;
    while (i - 1 > this.snapshotIndex && this.term(i - 1) === term) i--;
    return i;
  }

  /** Last index holding an entry of `term`, or 0 when the log has none. */
  lastIndexOfTerm(term: number): number {
    for (let i = this.lastIndex(); i > this.snapshotIndex; i--) {
      const t = this.term(i)!;
      if (t === term) return i;
      if (t < term) return 0;
    }
    return 0;
  }

  unstableEntries(): Entry[] {
    if (this.unstableFrom > this.lastIndex()) return [];
    return this.slice(this.unstableFrom, this.lastIndex() + 1);
  }

  /** Entries up to (index, term) reached disk. Ignored when the log changed underneath. */
  stableTo(index: number, term: number): void {
    if (this.term(index) === term && index >= this.unstableFrom) this.unstableFrom = index + 1;
  }

  /** Entries to apply: committed, not yet applied, and on disk (or in the Ready being persisted). */
  committedToApply(): Entry[] {
    const hi = this.committed;
    if (hi <= this.applied) return [];
    return this.slice(Math.max(this.applied + 1, this.firstIndex()), hi + 1);
  }

  /** Drop the prefix up to `index` (already applied and snapshotted). */
  compact(index: number): void {
    if (index <= this.snapshotIndex) return;
    const term = this.term(index);
    if (term === undefined) throw new RangeError(`compact to ${index} beyond last index ${this.lastIndex()}`);
    this.entries.splice(0, index - this.snapshotIndex);
    this.snapshotIndex = index;
    this.snapshotTerm = term;
  }

  /** Replace the whole log with a snapshot. */
  restore(meta: SnapshotMeta): void {
    this.entries = [];
    this.snapshotIndex = meta.index;
    this.snapshotTerm = meta.term;
    this.committed = meta.index;
    this.unstableFrom = meta.index + 1;
  }
}
