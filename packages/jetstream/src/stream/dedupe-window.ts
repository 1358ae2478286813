// Nats-Msg-Id de-duplication: ids seen within duplicate_window and the sequence each was stored at.
// A Map iterates in insertion order, which is time order, so expiry trims from the front.

interface DedupeEntry {
  seq: number;
  atMs: number;
}

export class DedupeWindow {
  private readonly ids = new Map<string, DedupeEntry>();

  constructor(private windowMs: number) {}

  setWindowMs(windowMs: number): void {
    this.windowMs = windowMs;
    this.expire(Date.now());
  }

  /** Sequence of the message stored with `id` within the window, or undefined. */
  find(id: string, nowMs: number = Date.now()): number | undefined {
    this.expire(nowMs);
    return this.ids.get(id)?.seq;
  }

  add(id: string, seq: number, atMs: number = Date.now()): void {
    if (this.windowMs <= 0) return;
    this.ids.delete(id); // re-insert at the back so the order stays by time
    this.ids.set(id, { seq, atMs });
  }

  /** Drops every id stored at `seq` or later (their write failed and was rolled back). */
  forgetFrom(seq: number): void {
    // Bounded by the map's size.
    for (const [id, e] of this.ids) if (e.seq >= seq) this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }

  clear(): void {
    this.ids.clear();
  }

  private expire(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    // Bounded by the map's size: each step removes one entry.
    for (const [id, e] of this.ids) {
      if (e.atMs > cutoff) break;
      this.ids.delete(id);
    }
  }
}
