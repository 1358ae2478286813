import type { RaftTestBugs } from '../options.js';
import { RaftCore } from '../raft-core.js';
import { SeededRandom } from '../seeded-random.js';
import type { Entry, HardState, NodeId, Ready, Snapshot } from '../types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What survives a crash: only writes whose sync completed. */
export interface DurableState {
  hardState: HardState;
  snapshot: Snapshot | null;
  entries: Entry[];
}

/** The replicated state machine of the simulation: an append-only history folded into a hash. */
export interface SimStateMachine {
  lastIndex: number;
  hash: number;
}

export function foldHash(hash: number, entry: Entry): number {
  let h = (hash ^ entry.term) >>> 0;
  h = Math.imul(h ^ entry.index, 0x9e3779b1) >>> 0;
  for (let i = 0; i < entry.data.length; i++) h = Math.imul(h ^ entry.data[i]!, 0x01000193) >>> 0;
  return h;
}

export function encodeStateMachine(sm: SimStateMachine): Uint8Array {
  return encoder.encode(JSON.stringify(sm));
}

export function decodeStateMachine(data: Uint8Array): SimStateMachine {
  return JSON.parse(decoder.decode(data)) as SimStateMachine;
}

export interface NodeHooks {
  send(node: SimNode, messages: readonly Ready['messages'][number][]): void;
  applied(node: SimNode, entry: Entry, sm: SimStateMachine): void;
  restored(node: SimNode, sm: SimStateMachine): void;
}

export class SimNode {
  core: RaftCore | null = null;
  durable: DurableState = { hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] };
  sm: SimStateMachine = { lastIndex: 0, hash: 0 };
  private pending: { ready: Ready; syncAt: number } | null = null;
  private restarts = 0;

  constructor(
    readonly id: NodeId,
    private readonly peers: readonly NodeId[],
    private readonly seed: number,
    private readonly bugs: RaftTestBugs | undefined,
    private readonly hooks: NodeHooks,
    /** Small appends make followers acknowledge old-term entries apart from the new leader's no-op. */
    private readonly maxMsgEntries = 16,
  ) {}

  get alive(): boolean {
    return this.core !== null;
  }

  start(): void {
    this.restarts++;
    const snap = this.durable.snapshot;
    this.sm = snap ? decodeStateMachine(snap.data) : { lastIndex: 0, hash: 0 };
    if (snap) this.hooks.restored(this, this.sm);
    this.core = new RaftCore({
      id: this.id,
      group: 'sim',
      peers: this.peers,
      random: new SeededRandom((this.seed * 7919 + this.id * 104729 + this.restarts * 13) >>> 0),
      electionTicks: 10,
      heartbeatTicks: 1,
      maxInflight: 8,
      // Odd seeds let commits ride on the next append or heartbeat (as stream groups do).
      lazyCommit: this.seed % 2 === 1,
      maxMsgEntries: this.maxMsgEntries,
      maxSnapshotChunkBytes: 16,
      hardState: this.durable.hardState,
      snapshot: snap,
      entries: this.durable.entries,
      ...(this.bugs ? { testBugs: this.bugs } : {}),
    });
  }

  /** Power loss: everything not yet synced is gone. */
  crash(): void {
    this.core = null;
    this.pending = null;
  }

  /** Persist, send and apply Readies; `syncDelay` picks how many ticks a persist takes. */
  process(now: number, syncDelay: () => number): boolean {
    const core = this.core;
    if (!core) return false;
    let progressed = false;
    for (let round = 0; round < 4; round++) {
      if (this.pending) {
        if (this.pending.syncAt > now) return progressed;
        const ready = this.pending.ready;
        this.pending = null;
        this.persist(ready);
        this.hooks.send(this, ready.messagesAfterPersist);
        if (ready.snapshot) {
          this.sm = decodeStateMachine(ready.snapshot.data);
          this.hooks.restored(this, this.sm);
        }
        for (const e of ready.committedEntries) {
          if (e.index <= this.sm.lastIndex) continue;
          this.sm = { lastIndex: e.index, hash: this.sm.lastIndex + 1 === e.index ? foldHash(this.sm.hash, e) : -1 };
          this.hooks.applied(this, e, this.sm);
        }
        core.advance(ready);
        progressed = true;
      }
      if (!core.hasReady()) return progressed;
      const ready = core.ready();
      this.hooks.send(this, ready.messages);
      this.pending = { ready, syncAt: now + syncDelay() };
      progressed = true;
    }
    return progressed;
  }

  private persist(ready: Ready): void {
    const d = this.durable;
    if (ready.snapshot) {
      d.snapshot = ready.snapshot;
      d.entries = [];
    }
    const first = ready.entries[0];
    if (first) {
      const keep = d.entries.filter((e) => e.index < first.index);
      d.entries = keep.concat(ready.entries);
    }
    if (ready.hardState) d.hardState = ready.hardState;
  }

  /** Take a snapshot of the state machine and compact the log (durably, at once). */
  snapshotNow(): boolean {
    const core = this.core;
    if (!core || this.pending) return false;
    const index = this.sm.lastIndex;
    if (index <= core.log.snapshotIndex || index > core.log.applied) return false;
    const snap = core.compact(index, encodeStateMachine(this.sm));
    this.durable.snapshot = snap;
    this.durable.entries = this.durable.entries.filter((e) => e.index > index);
    return true;
  }
}
