// Messages a stream stored that wait for the store to make them durable before they are acknowledged and
// announced, released in sequence order. One promise reaction per store flush (a group commit), not one
// per message: the per-message promise, closures and result object were a large share of the publish
// path's CPU and garbage.

import { storedMessagesPerTurn, type TurnBudget } from '../turn-budget.js';

/** Receives each message once durable (`stored`) or once its write failed (`failed`), in push order. */
export interface DurableSink {
  stored(seq: number, subject: string, reply: string | null): void;
  failed(seq: number, reply: string | null, err: unknown): void;
}

/** The messages one store flush promise covers: those pushed while the store returned that promise. */
interface Group {
  readonly durable: Promise<void>;
  /** Queue position just past the last message in the group. */
  end: number;
  settled: boolean;
}

/** Initial ring capacity (a power of two); it doubles when full. */
const INITIAL_SLOTS = 1024;

export class DurableQueue {
  // A ring of parallel arrays: no object per message. Its capacity is bounded by the messages stored but
  // not yet durable (at most what publishers have in flight), rounded up to a power of two.
  private seqs: number[] = new Array<number>(INITIAL_SLOTS).fill(0);
  private subjects: string[] = new Array<string>(INITIAL_SLOTS).fill('');
  private replies: (string | null)[] = new Array<string | null>(INITIAL_SLOTS).fill(null);
  private mask = INITIAL_SLOTS - 1;
  /** Positions count every message ever pushed; a position's slot is `position & mask`. */
  private head = 0;
  private tail = 0;
  private group: Group | null = null;

  /** Settled groups waiting for a turn with budget left, in settle order. */
  private readonly deferred: Array<{ group: Group; err: unknown }> = [];
  private deferredScheduled = false;

  constructor(
    private readonly sink: DurableSink,
    private readonly budget: TurnBudget = storedMessagesPerTurn,
  ) {}

  /**
   * Queues a message just appended; `durable` is what the store's flush() returned after the append, so
   * it resolves once this message (and every one before it) is durable.
   */
  push(seq: number, subject: string, reply: string | null, durable: Promise<void>): void {
    if (this.tail - this.head > this.mask) this.grow();
    const at = this.tail++ & this.mask;
    this.seqs[at] = seq;
    this.subjects[at] = subject;
    this.replies[at] = reply;
    const g = this.group;
    if (g !== null && g.durable === durable && !g.settled) {
      g.end = this.tail;
      return;
    }
    const next: Group = { durable, end: this.tail, settled: false };
    this.group = next;
    durable.then(
      () => this.release(next, null),
      (err: unknown) => this.release(next, err ?? new Error('store write failed')),
    );
  }

  get size(): number {
    return this.tail - this.head;
  }

  /**
   * A group's promise settled. Released now while the turn's budget lasts; otherwise (and while earlier
   * groups wait) in a later turn, in order, so a chain of resolved flushes cannot starve I/O.
   */
  private release(g: Group, err: unknown): void {
    if (this.deferred.length === 0 && this.budget.take(g.end - this.head)) return this.releaseNow(g, err);
    this.deferred.push({ group: g, err });
    this.scheduleDeferred();
  }

  private scheduleDeferred(): void {
    if (this.deferredScheduled) return;
    this.deferredScheduled = true;
    setImmediate(() => {
      this.deferredScheduled = false;
      const deferred = this.deferred;
      let i = 0;
      while (i < deferred.length && this.budget.take(deferred[i]!.group.end - this.head)) {
        const d = deferred[i++]!;
        this.releaseNow(d.group, d.err);
      }
      deferred.splice(0, i);
      if (deferred.length > 0) this.scheduleDeferred();
    });
  }

  /** Flush promises settle in order, so everything up to the group's end is covered. */
  private releaseNow(g: Group, err: unknown): void {
    g.settled = true;
    if (this.group === g) this.group = null;
    // Bounded by the group's end; a sink call that pushes (a listener publishing into this stream) adds
    // past the end, so it waits for its own group.
    const end = Math.min(g.end, this.tail);
    while (this.head < end) {
      const at = this.head++ & this.mask;
      const reply = this.replies[at];
      this.replies[at] = null; // the strings are garbage once answered
      if (err === null) this.sink.stored(this.seqs[at], this.subjects[at], reply);
      else this.sink.failed(this.seqs[at], reply, err);
    }
  }

  /** Doubles the ring, keeping every position's slot valid under the new mask. */
  private grow(): void {
    const slots = (this.mask + 1) * 2;
    const seqs = new Array<number>(slots).fill(0);
    const subjects = new Array<string>(slots).fill('');
    const replies = new Array<string | null>(slots).fill(null);
    const mask = slots - 1;
    for (let p = this.head; p < this.tail; p++) {
      seqs[p & mask] = this.seqs[p & this.mask];
      subjects[p & mask] = this.subjects[p & this.mask];
      replies[p & mask] = this.replies[p & this.mask];
    }
    this.seqs = seqs;
    this.subjects = subjects;
    this.replies = replies;
    this.mask = mask;
  }
}
