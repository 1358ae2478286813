// Work that must not interleave (a catalogue change, a Raft group's log writes) runs through a promise chain:
// each task starts once the one before it settled; a failed task does not stop the ones after it.

/** One chain. `pending` counts tasks queued or running, for callers that refuse work beyond a bound. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  get pending(): number {
    return this.queued;
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    this.queued++;
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined).finally(() => this.queued--);
    return run;
  }

  /** Settles once every task queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}

/** One chain per key; a key's chain is forgotten once it drains. */
export class KeyedSerialQueue<K> {
  private readonly tails = new Map<K, Promise<void>>();

  /**
   * `gate`: what the task waits for instead of the key's previous task itself (say, that task or a time
   * bound, whichever comes first).
   */
  run<T>(key: K, task: () => Promise<T>, gate?: (previous: Promise<void>) => Promise<unknown>): Promise<T> {
    const tail = this.tails.get(key) ?? Promise.resolve();
    const run = (gate === undefined ? tail : gate(tail)).then(task, task);
    const next = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return run;
  }

  /** Settles once every task queued for `key` so far has settled. */
  async idle(key: K): Promise<void> {
    await this.tails.get(key);
  }

  /** Settles once every task queued for any key so far has settled. */
  async idleAll(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
