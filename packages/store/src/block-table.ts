/**
 * FileStore's in-memory table of blocks (sorted by first sequence) and the byte-bounded LRU of block
 * contents. Entries whose content is not yet written (or awaits a rewrite) are pinned in memory.
 */
import type { Block } from './block.js';
import type { FrameLocation } from './segment-log.js';

export interface BlockEntry {
  first: number;
  last: number;
  /** Live messages in the block; 0 = delete it at the next flush. */
  live: number;
  block: Block | null;
  loading: Promise<Block> | null;
  /** Handed to the segment log (its location is known once the append returns). */
  written: boolean;
  loc: FrameLocation | null;
  dead: boolean;
  /** Removed since the last flush; those >= the floor become tombstones. */
  removed: number[];
  /** Tombstone keys stored for this block. */
  tombs: number[];
  /** Rewrite the block without its removed records (erase). */
  rewrite: boolean;
  /** Removed with erase since the block was last written: left out of the next copy whatever else holds. */
  erased: number[];
}

export function newEntry(first: number, last: number, loc: FrameLocation | null, block: Block | null): BlockEntry {
  return { first, last, live: 0, block, loading: null, written: loc !== null, loc, dead: false, removed: [], tombs: [], rewrite: false, erased: [] };
}

export class BlockTable {
  private entries: BlockEntry[] = [];
  /** Index of the first possibly-live entry (dead ones at the front are skipped, then trimmed). */
  private head = 0;
  private deadCount = 0;
  private readonly cache = new Set<BlockEntry>();
  private cachedBytes = 0;

  constructor(
    private readonly cacheBytes: number,
    /** Called when an entry's content leaves memory (eviction, death). */
    private readonly onDrop: (e: BlockEntry) => void,
  ) {}

  get size(): number {
    return this.entries.length - this.head - this.deadCount;
  }

  push(e: BlockEntry): void {
    this.entries.push(e);
  }

  /** The live entry whose range holds `seq`, if any. */
  find(seq: number): BlockEntry | undefined {
    const es = this.entries;
    let lo = this.head;
    let hi = es.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (es[mid].first <= seq) lo = mid + 1;
      else hi = mid - 1;
    }
    const e = hi >= this.head ? es[hi] : undefined;
    return e !== undefined && !e.dead && seq <= e.last ? e : undefined;
  }

  /** Up to `count` live entries after `e` (read-ahead). */
  following(e: BlockEntry, count: number): BlockEntry[] {
    const es = this.entries;
    let lo = this.head;
    let hi = es.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (es[mid].first <= e.first) lo = mid + 1;
      else hi = mid - 1;
    }
    const out: BlockEntry[] = [];
    for (let i = hi + 1; i < es.length && out.length < count; i++) if (!es[i].dead) out.push(es[i]);
    return out;
  }

  *live(): IterableIterator<BlockEntry> {
    for (let i = this.head; i < this.entries.length; i++) if (!this.entries[i].dead) yield this.entries[i];
  }

  markDead(e: BlockEntry): void {
    if (e.dead) return;
    e.dead = true;
    this.deadCount++;
    this.uncache(e);
    this.onDrop(e);
    e.block = null;
    while (this.head < this.entries.length && this.entries[this.head].dead) {
      this.head++;
      this.deadCount--;
    }
    // Drop dead slots once they dominate, so the array stays proportional to live blocks.
    if (this.head > 1024 && this.head > this.entries.length / 2) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    if (this.deadCount > 1024 && this.deadCount > this.size) {
      this.entries = this.entries.slice(this.head).filter((x) => !x.dead);
      this.head = 0;
      this.deadCount = 0;
    }
  }

  clear(): void {
    this.entries = [];
    this.head = 0;
    this.deadCount = 0;
    this.cache.clear();
    this.cachedBytes = 0;
  }

  /** Records that `e` holds its content in memory; evicts the least recently used unpinned blocks. */
  touch(e: BlockEntry): void {
    if (e.block === null) return;
    if (this.cache.has(e)) {
      this.cache.delete(e);
      this.cache.add(e);
      return;
    }
    this.cache.add(e);
    this.cachedBytes += e.block.memoryBytes();
    if (this.cachedBytes <= this.cacheBytes) return;
    for (const old of this.cache) {
      if (this.cachedBytes <= this.cacheBytes) break;
      if (old === e || old.loc === null || old.rewrite) continue;
      this.uncache(old);
      this.onDrop(old);
      old.block = null;
    }
  }

  /** Content size changed (rewrite) or the block is gone. */
  uncache(e: BlockEntry): void {
    if (!this.cache.delete(e)) return;
    this.cachedBytes -= e.block?.memoryBytes() ?? 0;
  }
}
