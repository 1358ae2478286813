// What one leaf link has told the other side it is interested in: a count per `subject` or
// `subject queue` key (the LS+ / LS- key), from the account's subscriptions other than the link's own.
// Emits LS+ on the first and, for queue groups, on every change of weight; LS- on the last.
import type { Subscription } from '../subscription.js';

export function interestKey(subject: string, queue: string | null): string {
  return queue === null ? subject : `${subject} ${queue}`;
}

export class LeafInterest {
  private readonly counts = new Map<string, number>();

  /** where LS+ / LS- lines go (collected at first, then the socket) */
  constructor(public write: (line: string) => void) {}

  add(subject: string, queue: string | null, n = 1): void {
    const key = interestKey(subject, queue);
    const count = (this.counts.get(key) ?? 0) + n;
    this.counts.set(key, count);
    if (queue !== null) this.write(`LS+ ${key} ${count}\r\n`);
    else if (count === n) this.write(`LS+ ${key}\r\n`);
  }

  remove(subject: string, queue: string | null): void {
    const key = interestKey(subject, queue);
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count < 0) return;
    if (count === 0) {
      this.counts.delete(key);
      this.write(`LS- ${key}\r\n`);
    } else {
      this.counts.set(key, count);
      if (queue !== null) this.write(`LS+ ${key} ${count}\r\n`);
    }
  }

  addSub(sub: Subscription): void {
    this.add(sub.subject, sub.queue);
  }

  removeSub(sub: Subscription): void {
    this.remove(sub.subject, sub.queue);
  }

  get size(): number {
    return this.counts.size;
  }
}
