import type { SeededRandom } from '../seeded-random.js';
import type { Message, NodeId } from '../types.js';

export interface NetworkFaults {
  dropRate: number;
  duplicateRate: number;
  /** Each message is delayed by 0..maxDelayTicks ticks; differing delays reorder messages. */
  maxDelayTicks: number;
}

interface InFlight {
  deliverAt: number;
  seq: number;
  msg: Message;
}

/** A seeded lossy network: delay, drop, duplication, reordering and partitions. */
export class SimNetwork {
  faults: NetworkFaults;
  private queue: InFlight[] = [];
  private seq = 0;
  /** Partition: node -> side. Nodes on different sides cannot talk. Empty when healed. */
  private sides = new Map<NodeId, number>();

  constructor(
    private readonly random: SeededRandom,
    faults: NetworkFaults,
    private readonly maxQueued = 100_000,
  ) {
    this.faults = faults;
  }

  partition(sides: Map<NodeId, number>): void {
    this.sides = sides;
  }

  heal(): void {
    this.sides = new Map();
  }

  isPartitioned(): boolean {
    return this.sides.size > 0;
  }

  connected(a: NodeId, b: NodeId): boolean {
    return (this.sides.get(a) ?? 0) === (this.sides.get(b) ?? 0);
  }

  send(msg: Message, now: number): void {
    if (!this.connected(msg.from, msg.to)) return;
    if (this.queue.length >= this.maxQueued) return;
    if (this.random.chance(this.faults.dropRate)) return;
    this.queue.push({ deliverAt: now + this.random.int(this.faults.maxDelayTicks + 1), seq: this.seq++, msg });
    if (this.random.chance(this.faults.duplicateRate)) {
      this.queue.push({ deliverAt: now + this.random.int(this.faults.maxDelayTicks + 1), seq: this.seq++, msg });
    }
  }

  /** Messages due by `now`, in a random order (reordering even among same-tick messages). */
  takeDue(now: number): Message[] {
    const due: Message[] = [];
    const rest: InFlight[] = [];
    for (const f of this.queue) {
      if (f.deliverAt <= now && this.connected(f.msg.from, f.msg.to)) due.push(f.msg);
      else if (f.deliverAt > now) rest.push(f);
    }
    this.queue = rest;
    for (let i = due.length - 1; i > 0; i--) {
      const j = this.random.int(i + 1);
      const t = due[i]!;
      due[i] = due[j]!;
      due[j] = t;
    }
    return due;
  }

  pending(): number {
    return this.queue.length;
  }
}
