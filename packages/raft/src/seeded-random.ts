/** Randomness is injected so the core stays deterministic under a seed. */
export interface RandomSource {
  /** Uniform integer in [0, bound). */
  int(bound: number): number;
}

/** mulberry32: tiny, fast, good enough for timeouts and fault injection. */
export class SeededRandom implements RandomSource {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }
}
