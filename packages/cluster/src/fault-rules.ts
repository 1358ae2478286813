// Test and chaos hook: per-peer drop, delay and partition rules. Only consulted when the node was started
// with faults enabled; otherwise every rule stays empty and links never look at it.

export interface FaultState {
  partitioned: string[];
  dropRate: Record<string, number>;
  delayMs: Record<string, number>;
}

export class FaultRules {
  /** peer server names this node refuses to link with */
  readonly partitioned = new Set<string>();
  /** peer server name -> probability in [0, 1] that a routed or Raft frame to or from it is dropped */
  readonly dropRate = new Map<string, number>();
  /** peer server name -> delay added to every batch sent to it */
  readonly delayMs = new Map<string, number>();

  constructor(private readonly random: () => number = Math.random) {}

  isPartitioned(peerName: string): boolean {
    return this.partitioned.has(peerName);
  }

  /** true when a droppable frame exchanged with `peerName` should be lost */
  shouldDrop(peerName: string): boolean {
    const rate = this.dropRate.get(peerName);
    return rate !== undefined && rate > 0 && this.random() < rate;
  }

  delayFor(peerName: string): number {
    return this.delayMs.get(peerName) ?? 0;
  }

  clear(): void {
    this.partitioned.clear();
    this.dropRate.clear();
    this.delayMs.clear();
  }

  state(): FaultState {
    return {
      partitioned: [...this.partitioned].sort(),
      dropRate: Object.fromEntries(this.dropRate),
      delayMs: Object.fromEntries(this.delayMs),
    };
  }
}
