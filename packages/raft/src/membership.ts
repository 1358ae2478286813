import { ConfChangeType, type ConfChange, type Entry, EntryType, type MembershipConfig, type NodeId } from './types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeConfChange(change: ConfChange): Uint8Array {
  return encoder.encode(JSON.stringify(change));
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  const parsed = JSON.parse(decoder.decode(data)) as ConfChange;
  return parsed.voters ? { type: parsed.type, nodeId: parsed.nodeId, voters: parsed.voters } : { type: parsed.type, nodeId: parsed.nodeId };
}

/** Returns the config after `change`, or an error string when the change is not allowed. */
export function applyConfChange(config: MembershipConfig, change: ConfChange): MembershipConfig | string {
  const { voters, learners } = config;
  const id = change.nodeId;
  switch (change.type) {
    case ConfChangeType.Bootstrap:
      if (voters.length > 0 || learners.length > 0) return 'group is already bootstrapped';
      return { voters: [...(change.voters ?? [])].sort((a, b) => a - b), learners: [] };
    case ConfChangeType.AddLearner:
      if (voters.includes(id) || learners.includes(id)) return `node ${id} is already a member`;
      return { voters, learners: [...learners, id].sort((a, b) => a - b) };
    case ConfChangeType.Promote:
      if (!learners.includes(id)) return `node ${id} is not a learner`;
      return { voters: [...voters, id].sort((a, b) => a - b), learners: learners.filter((x) => x !== id) };
    case ConfChangeType.Remove:
      if (!voters.includes(id) && !learners.includes(id)) return `node ${id} is not a member`;
      if (voters.length === 1 && voters[0] === id) return 'cannot remove the last voter';
      return { voters: voters.filter((x) => x !== id), learners: learners.filter((x) => x !== id) };
  }
}

/**
 * Single-server membership change: a config takes effect as soon as its entry is in the log (committed or
 * not), so the history keeps every config entry above the snapshot and can roll back on truncation.
 */
export class MembershipHistory {
  private base: MembershipConfig;
  private baseIndex: number;
  private readonly changes: { index: number; config: MembershipConfig }[] = [];

  constructor(base: MembershipConfig, baseIndex: number) {
    this.base = base;
    this.baseIndex = baseIndex;
  }

  current(): MembershipConfig {
    return this.changes.length > 0 ? this.changes[this.changes.length - 1]!.config : this.base;
  }

  /** Index of the newest config entry (the base snapshot index when none is in the log). */
  lastChangeIndex(): number {
    return this.changes.length > 0 ? this.changes[this.changes.length - 1]!.index : this.baseIndex;
  }

  configAt(index: number): MembershipConfig {
    let config = this.base;
    for (const change of this.changes) {
      if (change.index > index) break;
      config = change.config;
    }
    return config;
  }

  /** Record appended entries (in index order). Invalid changes are skipped, identically on every node. */
  appended(entries: readonly Entry[]): void {
    for (const entry of entries) {
      if (entry.type !== EntryType.ConfChange) continue;
      const next = applyConfChange(this.current(), decodeConfChange(entry.data));
      if (typeof next !== 'string') this.changes.push({ index: entry.index, config: next });
    }
  }

  /** The log lost every entry from `index` on. */
  truncatedFrom(index: number): void {
    while (this.changes.length > 0 && this.changes[this.changes.length - 1]!.index >= index) this.changes.pop();
  }

  /** Entries up to `index` were compacted into a snapshot whose config is `config`. */
  compactedTo(index: number, config: MembershipConfig): void {
    this.base = config;
    this.baseIndex = index;
    while (this.changes.length > 0 && this.changes[0]!.index <= index) this.changes.shift();
  }

  /** The log was replaced by a snapshot. */
  reset(config: MembershipConfig, index: number): void {
    this.base = config;
    this.baseIndex = index;
    this.changes.length = 0;
  }
}

export function isVoter(config: MembershipConfig, id: NodeId): boolean {
  return config.voters.includes(id);
}

export function quorumOf(config: MembershipConfig): number {
  return Math.floor(config.voters.length / 2) + 1;
}
