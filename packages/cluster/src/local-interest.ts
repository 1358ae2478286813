// How many local subscriptions this node has on each (subject, queue), and how many of them are clients':
// what it tells its peers.
import type { InterestEntry } from './wire.js';

export class LocalInterest {
  private readonly counts = new Map<string, InterestEntry>();

  /** One more subscription (`client`: a client connection's, not an internal one); returns the entry to announce. */
  add(subject: string, queue: string | null, client: boolean): InterestEntry {
    const q = queue ?? '';
    const key = interestKey(subject, q);
    const entry = this.counts.get(key);
    const next = { subject, queue: q, count: (entry?.count ?? 0) + 1, clients: (entry?.clients ?? 0) + (client ? 1 : 0) };
    this.counts.set(key, next);
    return next;
  }

  /** One fewer; returns the entry to announce (count 0 = gone), or null if there was none. */
  remove(subject: string, queue: string | null, client: boolean): InterestEntry | null {
    const q = queue ?? '';
    const key = interestKey(subject, q);
    const entry = this.counts.get(key);
    if (entry === undefined) return null;
    const count = entry.count - 1;
    if (count <= 0) {
      this.counts.delete(key);
      return { subject, queue: q, count: 0, clients: 0 };
    }
    const next = { subject, queue: q, count, clients: Math.max(0, entry.clients - (client ? 1 : 0)) };
    this.counts.set(key, next);
    return next;
  }

  /** Everything, for the full sync a peer gets when its link comes up. */
  snapshot(): InterestEntry[] {
    return [...this.counts.values()];
  }

  get size(): number {
    return this.counts.size;
  }
}

export function interestKey(subject: string, queue: string): string {
  // A space can appear in neither a subject nor a queue name.
  return `${subject} ${queue}`;
}
