// Messages a stream stored that wait for the store to make them durable before they are acknowledged and
// announced, released in sequence order. One promise reaction per store flush (a group commit), not one
// per message: the per-message promise, closures and result object were a large share of the publish
// path's CPU and garbage.

/** Receives each message once durable (`stored`) or once its write failed (`failed`), in push order. */
export interface DurableSink {
  stored(seq: number, subject: string, reply: string | null): void;
  failed(reply: string | null, err: unknown): void;
}

/** The messages one store flush promise covers: those pushed while the store returned that promise. */
interface Group {
  readonly durable: Promise<void>;
  /** Queue position just past the last message in the group. */
  end: number;
  settled: boolean;
}

export class DurableQueue {
  // Parallel arrays reused from slot 0 whenever the queue drains: no object per message. Their length is
  // bounded by the messages stored but not yet durable (at most what publishers have in flight).
  private readonly seqs: number[] = [];
  private readonly subjects: string[] = [];
  private readonly replies: (string | null)[] = [];
  /** Positions count every message ever pushed; slot = position - base. */
  private base = 0;
  private head = 0;
  private tail = 0;
  private group: Group | null = null;

  constructor(private readonly sink: DurableSink) {}

  /**
   * Queues a message just appended; `durable` is what the store's flush() returned after the append, so
   * it resolves once this message (and every one before it) is durable.
   */
  push(seq: number, subject: string, reply: string | null, durable: Promise<void>): void {
    const at = this.tail++ - this.base;
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

  /** Flush promises settle in order, so everything up to the group's end is covered. */
  private release(g: Group, err: unknown): void {
    g.settled = true;
    if (this.group === g) this.group = null;
    // Bounded by the group's end; a sink call that pushes (a listener publishing into this stream) adds
    // past the end, so it waits for its own group.
    const end = Math.min(g.end, this.tail);
    while (this.head < end) {
      const at = this.head++ - this.base;
      const reply = this.replies[at];
      if (err === null) this.sink.stored(this.seqs[at], this.subjects[at], reply);
      else this.sink.failed(reply, err);
    }
    if (this.head === this.tail) this.base = this.tail;
  }
}
