import type { PersistedState, RaftLogStore } from './log-store.js';
import type { RaftOptions } from './options.js';
import { RaftCore } from './raft-core.js';
import { RaftError } from './raft-error.js';
import { type RandomSource, SeededRandom } from './seeded-random.js';
import { SnapshotNotHeldError, type StateMachine } from './state-machine.js';
import type { Transport } from './transport.js';
import { packProposals, unpackProposals } from './packed-proposals.js';
import { type ConfChange, type Entry, EntryType, type HardState, type Message, MessageType, NONE, type NodeId, type Ready, Role } from './types.js';

export class NotLeaderError extends Error {
  constructor(
    readonly leader: NodeId,
    reason = 'not leader',
  ) {
    super(leader !== NONE ? `${reason}; leader is ${leader}` : reason);
    this.name = 'NotLeaderError';
  }
}

/** Binds timers to the core; injectable so tests can drive time by hand. */
export interface Clock {
  every(intervalMs: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  every(intervalMs, fn) {
    const timer = setInterval(fn, intervalMs);
    timer.unref?.();
    return () => clearInterval(timer);
  },
};

export interface RaftNodeOptions {
  group: string;
  id: NodeId;
  /** Founding voters (used only when the store holds nothing for this group); [] to join an existing group. */
  peers: readonly NodeId[];
  store: RaftLogStore;
  transport: Transport;
  stateMachine: StateMachine;
  clock?: Clock;
  tickMs?: number;
  /** Take a snapshot (and compact the log) after this many applied entries. */
  snapshotEveryEntries?: number;
  /** ...or after this many bytes of applied entry data (bounds the in-memory log under big entries). */
  snapshotEveryBytes?: number;
  /**
   * Decides instead of the two limits above, given the entries and entry bytes applied since the last snapshot
   * (a state machine whose snapshot cost grows with its size can amortise it against the log's growth).
   */
  snapshotPolicy?: (appliedEntries: number, appliedBytes: number) => boolean;
  /** Bound on proposals awaiting their commit. */
  maxPendingProposals?: number;
  random?: RandomSource;
  raft?: Partial<Omit<RaftOptions, 'id' | 'group' | 'peers' | 'random' | 'hardState' | 'snapshot' | 'entries' | 'applied'>>;
  onLeaderChange?: (leader: NodeId, term: number) => void;
  onApplied?: (index: number) => void;
  onError?: (error: unknown) => void;
  /**
   * At start the state machine threw SnapshotNotHeldError for the stored snapshot: `logDiscarded` tells whether
   * the log was discarded to receive a complete snapshot, or kept because no other voter could send one.
   */
  onSnapshotNotHeld?: (info: { logDiscarded: boolean; snapshotIndex: number; lastIndex: number }) => void;
}

/** A tick this many intervals after the previous one is late (the timer could not fire on time). */
const LATE_TICK_INTERVALS = 2;
/** Heartbeat rounds whose sending time is kept; a quorum acknowledging only older ones holds no lease. */
const HEARTBEAT_ROUNDS_KEPT = 64;

/** Position of a log discarded at start (RaftNode.start). */
interface DiscardedLog {
  index: number;
  term: number;
}

/** Proposals appended together: settled when the last one applies (log matching vouches for the rest). */
interface PendingBatch {
  first: number;
  last: number;
  term: number;
  results: unknown[];
  failure: unknown;
  /** Part of the batch was replaced by a snapshot: outcome unknown. */
  broken: boolean;
  proposals: number;
  resolve: (results: unknown[]) => void;
  reject: (error: Error) => void;
}

interface PendingRead {
  resolve: () => void;
  reject: (error: Error) => void;
  index: number;
}

/**
 * The driver: persists each Ready through the RaftLogStore (the leader sends its appends before its own write
 * completes), sends messages through the Transport, applies committed entries to the StateMachine, ticks the
 * core on a clock, and settles proposals and reads.
 */
export class RaftNode {
  readonly core: RaftCore;
  private readonly options: RaftNodeOptions;
  /** Pending proposal batches in log order (the leader appends in index order). */
  private proposals: PendingBatch[] = [];
  private pendingProposalCount = 0;
  private readonly reads = new Map<number, PendingRead>();
  private readonly waitingApply: PendingRead[] = [];
  private nextReadId = 1;
  private processing = false;
  private scheduled = false;
  private stopped = false;
  private stopTicks: () => void = () => {};
  private stopListening: () => void = () => {};
  private reportedLeader: NodeId = NONE;
  private reportedTerm = -1;
  private lastSnapshotIndex: number;
  /** core.snapshot's data is a complete image (installed from a leader or expanded), not a stand-in. */
  private snapshotIsFull = false;
  /** A follower needs the snapshot while it is a stand-in: expand it before sending. */
  private expandWanted = false;
  /** Entry bytes applied since the last snapshot. */
  private appliedBytes = 0;
  private appliedHere: number;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};
  /** Store writes completed, for metrics. */
  writes = 0;
  /**
   * A hard state whose only change is the commit index, not yet written. Nothing needs the commit index on
   * disk before going on (a restart learns it again from the leader, or re-commits as leader), so it rides
   * along with the next entries write or is written at the next tick — never an extra write on the path
   * from commit to apply to the next append.
   */
  private unwrittenHardState: HardState | null = null;
  /** When (performance.now() ms) a message last arrived from each peer: `active` in cluster info. */
  private readonly heardAtMs = new Map<NodeId, number>();
  /** The end of a log discarded at start, until this node's log is as up to date again (see ignoresVote). */
  private discardedLog: DiscardedLog | null = null;
  /** When (performance.now() ms) the clock last ticked this node; -1 before the first tick. */
  private lastTickAtMs = -1;
  /**
   * When (performance.now() ms) each recent heartbeat round went to the transport, oldest first, at most
   * HEARTBEAT_ROUNDS_KEPT: the leader lease (holdsLease) runs from the sending of the round a quorum acknowledged.
   */
  private readonly heartbeatSentMs = new Map<number, number>();

  private constructor(options: RaftNodeOptions, core: RaftCore) {
    this.options = options;
    this.core = core;
    this.lastSnapshotIndex = core.log.snapshotIndex;
    this.appliedHere = core.log.applied;
  }

  /**
   * Index of the last entry the state machine has applied. The core's `log.applied` moves only at
   * advance(), after the Ready's write: this one moves as each entry is applied, which may be a whole write
   * (an fsync) earlier.
   */
  get appliedIndex(): number {
    return this.appliedHere;
  }

  static async start(options: RaftNodeOptions): Promise<RaftNode> {
    const persisted = await options.store.load(options.group);
    let core = coreOf(options, persisted);
    let discarded: DiscardedLog | null = null;
    if (persisted.snapshot) {
      try {
        await options.stateMachine.restore(persisted.snapshot.data);
      } catch (error) {
        if (!(error instanceof SnapshotNotHeldError)) throw error;
        discarded = await discardUnheldLog(options, core);
        if (discarded) core = coreOf(options, await options.store.load(options.group));
      }
    }
    const node = new RaftNode(options, core);
    node.discardedLog = discarded;
    node.stopListening = options.transport.listen(options.group, options.id, (m) => {
      if (node.stopped) return;
      node.heardAtMs.set(m.from, performance.now());
      if (node.ignoresVote(m)) return;
      node.core.step(m);
      node.schedule();
    });
    node.stopTicks = (options.clock ?? realClock).every(options.tickMs ?? 100, () => node.tick());
    node.schedule();
    return node;
  }

  get id(): NodeId {
    return this.options.id;
  }

  /**
   * Entries of a discarded log may have been committed with this node's acknowledgement: until its log is as up
   * to date again, a (pre-)vote request from a candidate behind them is dropped (as if lost), so no leader
   * lacking them is elected with this node's vote. Only in memory: a restart before catching up forgets it.
   */
  private ignoresVote(m: Message): boolean {
    const d = this.discardedLog;
    if (d === null || (m.type !== MessageType.Vote && m.type !== MessageType.PreVote)) return false;
    const log = this.core.log;
    if (log.lastTerm() > d.term || (log.lastTerm() === d.term && log.lastIndex() >= d.index)) {
      this.discardedLog = null;
      return false;
    }
    return !(m.logTerm > d.term || (m.logTerm === d.term && m.index >= d.index));
  }

  status(): { id: NodeId; role: Role; term: number; leader: NodeId; commit: number; applied: number; lastIndex: number } {
    const c = this.core;
    return { id: this.id, role: c.role, term: c.term, leader: c.leader, commit: c.log.committed, applied: c.log.applied, lastIndex: c.log.lastIndex() };
  }

  isLeader(): boolean {
    return this.core.role === Role.Leader;
  }

  /**
   * Leader, and no other node can be leader now: a quorum acknowledged a heartbeat sent less than the core's
   * lease (electionTicks − 1 ticks, wall time) ago, and no hand-over is under way. A leader whose event loop was
   * starved may still think it leads after the others elected a successor; this is what tells it not to answer
   * for the group meanwhile. Sending times are taken before the transport sends, so the lease errs short.
   */
  holdsLease(nowMs: number = performance.now()): boolean {
    const basis = this.core.leaseBasis();
    if (basis === 'always') return true;
    if (basis === 'none' || basis === 0) return false;
    const sentMs = this.heartbeatSentMs.get(basis);
    return sentMs !== undefined && nowMs - sentMs < this.core.leaseTicks() * (this.options.tickMs ?? 100);
  }

  /**
   * A clock tick. One that comes more than LATE_TICK_INTERVALS intervals after the last means this node's event
   * loop was busy and messages may be waiting unread (the timers phase runs before the poll phase): the core
   * ticks after this turn's I/O (setImmediate), so a leader's quorum check counts the answers that came in time,
   * and a follower's election timeout the heartbeats — and a leader deposed meanwhile learns it first.
   */
  tick(): void {
    if (this.stopped) return;
    const nowMs = performance.now();
    const late = this.lastTickAtMs >= 0 && nowMs - this.lastTickAtMs > LATE_TICK_INTERVALS * (this.options.tickMs ?? 100);
    this.lastTickAtMs = nowMs;
    if (late) setImmediate(() => this.tickCore());
    else this.tickCore();
  }

  private tickCore(): void {
    if (this.stopped) return;
    if (this.unwrittenHardState !== null && !this.processing) this.writeDeferredHardState();
    this.core.tick();
    // Most ticks change nothing: skip the setImmediate so thousands of idle groups stay cheap.
    if (this.core.hasReady()) this.schedule();
  }

  /** Campaign now instead of after an election timeout (a freshly created group's founder). */
  campaign(): void {
    if (this.stopped) return;
    this.core.campaignNow();
    this.schedule();
  }

  /** Milliseconds since a message last arrived from `peer` (Infinity if never). */
  peerSilenceMs(peer: NodeId, nowMs: number = performance.now()): number {
    const at = this.heardAtMs.get(peer);
    return at === undefined ? Infinity : Math.max(0, nowMs - at);
  }

  /** Leader only: each member's replicated (match) index; empty on other roles. */
  peerMatch(): Map<NodeId, number> {
    return this.core.peerMatch();
  }

  get stoppedOrFailed(): boolean {
    return this.stopped;
  }

  /** Resolves with the state machine's result once the entry is applied here; rejects with NotLeaderError. */
  async propose(data: Uint8Array): Promise<{ index: number; result: unknown }> {
    if (data.length === 0) throw new RangeError('empty proposals are reserved for leader no-ops');
    const { first, results } = await this.track(1, 1, () => this.core.propose(data));
    return { index: first, result: results[0] };
  }

  /**
   * Propose many items at once; resolves with their results (in order) once all are applied here. By default
   * they are packed into ONE log entry (EntryType.Batch; the state machine still sees one apply per item, all
   * with that entry's index); with `pack: false` each item is its own entry, sent in one append.
   */
  async proposeBatch(items: readonly Uint8Array[], options: { pack?: boolean } = {}): Promise<{ first: number; results: unknown[] }> {
    if (items.some((d) => d.length === 0)) throw new RangeError('empty proposals are reserved for leader no-ops');
    if (options.pack === false || items.length === 1) return this.track(items.length, items.length, () => this.core.proposeBatch(items));
    return this.track(1, items.length, () => this.core.proposePacked(packProposals(items)));
  }

  async changeMembership(change: ConfChange): Promise<{ index: number }> {
    const { first } = await this.track(1, 1, () => this.core.proposeConfChange(change));
    return { index: first };
  }

  transferLeadership(to: NodeId): boolean {
    const ok = this.core.transferLeadership(to);
    this.schedule();
    return ok;
  }

  /** Linearizable read barrier: resolves once this leader's state machine reflects every committed write. */
  readBarrier(): Promise<void> {
    const requestId = this.nextReadId++;
    if (!this.core.readIndex(requestId)) return Promise.reject(new NotLeaderError(this.core.leader));
    return new Promise((resolve, reject) => {
      this.reads.set(requestId, { resolve, reject, index: 0 });
      this.schedule();
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopTicks();
    this.stopListening();
    await this.idle;
    if (this.unwrittenHardState !== null) {
      const hardState = this.unwrittenHardState;
      this.unwrittenHardState = null;
      await this.options.store.write({ group: this.options.group, snapshot: null, entries: [], hardState, sync: false }).catch(() => undefined);
    }
    const err = new RaftError('STOPPED');
    for (const p of this.proposals) p.reject(err);
    for (const r of this.reads.values()) r.reject(err);
    for (const r of this.waitingApply) r.reject(err);
    this.proposals = [];
    this.pendingProposalCount = 0;
    this.reads.clear();
    this.waitingApply.length = 0;
  }

  private track(
    entryCount: number,
    proposalCount: number,
    propose: () => ReturnType<RaftCore['propose']>,
  ): Promise<{ first: number; results: unknown[] }> {
    if (this.stopped) return Promise.reject(new RaftError('STOPPED'));
    if (this.pendingProposalCount + proposalCount > (this.options.maxPendingProposals ?? 1_000_000)) {
      return Promise.reject(new RaftError('TOO_MANY_PENDING_PROPOSALS'));
    }
    const result = propose();
    if (!result.ok) return Promise.reject(new NotLeaderError(result.leader, result.reason));
    const first = result.index - entryCount + 1;
    // Batches of an earlier term whose indexes our new entries now occupy were overwritten: they can never
    // commit. Settle them now, so the pending list stays in index order and results match their batches.
    while (this.proposals.length > 0 && this.proposals[this.proposals.length - 1]!.last >= first) {
      this.settleBatch(this.proposals.pop()!, false);
    }
    return new Promise((resolve, reject) => {
      this.proposals.push({
        first,
        last: result.index,
        term: this.core.term,
        results: [],
        failure: undefined,
        broken: false,
        proposals: proposalCount,
        resolve: (results) => resolve({ first, results }),
        reject,
      });
      this.pendingProposalCount += proposalCount;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.processing || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.process();
    });
  }

  private async process(): Promise<void> {
    if (this.processing || this.stopped) return;
    this.processing = true;
    this.idle = new Promise((resolve) => (this.markIdle = resolve));
    try {
      // Bounded so one busy group cannot starve the event loop.
      for (let round = 0; round < 64 && this.core.hasReady() && !this.stopped; round++) {
        await this.handleReady(this.core.ready());
      }
      await this.maybeSnapshot();
      if (this.expandWanted && !this.stopped) await this.expandSnapshot();
    } catch (error) {
      this.stopped = true;
      this.stopTicks();
      this.stopListening();
      this.options.onError?.(error);
    } finally {
      this.processing = false;
      this.markIdle();
      this.reportLeader();
      if (!this.stopped && this.core.hasReady()) this.schedule();
    }
  }

  private noteHeartbeatRounds(messages: readonly Message[]): void {
    let nowMs = -1;
    for (const m of messages) {
      if (m.type !== MessageType.Heartbeat || this.heartbeatSentMs.has(m.context)) continue;
      if (nowMs < 0) nowMs = performance.now();
      this.heartbeatSentMs.set(m.context, nowMs);
      if (this.heartbeatSentMs.size > HEARTBEAT_ROUNDS_KEPT) this.heartbeatSentMs.delete(this.heartbeatSentMs.keys().next().value!);
    }
  }

  private async handleReady(ready: Ready): Promise<void> {
    const { transport, store, stateMachine, group } = this.options;
    let messages = ready.messages;
    if (stateMachine.fullSnapshot && !this.snapshotIsFull && messages.some((m) => m.type === MessageType.SnapshotChunk)) {
      // A stand-in must not leave this node: hold the chunks back and send the complete image instead.
      messages = messages.filter((m) => m.type !== MessageType.SnapshotChunk);
      this.expandWanted = true;
    }
    this.noteHeartbeatRounds(messages);
    transport.send(messages);
    // Committed entries below this Ready's first entry were written by earlier Readies (anything rewritten since
    // would be in this one): apply them while this write is in flight.
    let applied = 0;
    if (!ready.snapshot) {
      const firstWritten = ready.entries[0]?.index ?? Infinity;
      while (applied < ready.committedEntries.length && ready.committedEntries[applied]!.index < firstWritten) {
        this.applyEntry(ready.committedEntries[applied]!);
        applied++;
      }
    }
    if (ready.hardState) this.unwrittenHardState = ready.hardState;
    const commitOnly = ready.snapshot === null && ready.entries.length === 0 && !ready.mustSync;
    if (!commitOnly && (ready.snapshot || ready.entries.length > 0 || this.unwrittenHardState !== null)) {
      const hardState = this.unwrittenHardState;
      this.unwrittenHardState = null;
      await store.write({ group, snapshot: ready.snapshot, entries: ready.entries, hardState, sync: ready.mustSync });
      this.writes++;
    }
    transport.send(ready.messagesAfterPersist);
    if (ready.snapshot) {
      await stateMachine.restore(ready.snapshot.data);
      this.snapshotIsFull = true;
      this.lastSnapshotIndex = ready.snapshot.meta.index;
      this.appliedHere = ready.snapshot.meta.index;
      this.appliedBytes = 0;
      this.failProposalsUpTo(ready.snapshot.meta.index);
    }
    for (let i = applied; i < ready.committedEntries.length; i++) this.applyEntry(ready.committedEntries[i]!);
    this.core.advance(ready);
    for (const rs of ready.readStates) {
      const read = this.reads.get(rs.requestId);
      if (!read) continue;
      this.reads.delete(rs.requestId);
      read.index = rs.index;
      this.waitingApply.push(read);
    }
    this.settleReads();
    const last = ready.committedEntries[ready.committedEntries.length - 1];
    if (last) this.options.onApplied?.(last.index);
    this.reportLeader();
  }

  /** The commit index alone changed and the node is idle: write it now, in order with later writes. */
  private writeDeferredHardState(): void {
    const hardState = this.unwrittenHardState!;
    this.unwrittenHardState = null;
    this.options.store.write({ group: this.options.group, snapshot: null, entries: [], hardState, sync: false }).then(
      () => this.writes++,
      (error: unknown) => {
        if (this.stopped) return;
        this.stopped = true;
        this.stopTicks();
        this.stopListening();
        this.options.onError?.(error);
      },
    );
  }

  private applyEntry(entry: Entry): void {
    this.appliedHere = entry.index;
    this.appliedBytes += entry.data.length;
    const results: unknown[] = [];
    let failure: unknown;
    const sm = this.options.stateMachine;
    if (entry.type === EntryType.Normal && entry.data.length > 0) {
      try {
        results.push(sm.apply(entry));
      } catch (error) {
        failure = error ?? new Error('apply failed');
      }
    } else if (entry.type === EntryType.Batch) {
      for (const data of unpackProposals(entry.data)) {
        try {
          results.push(sm.apply({ index: entry.index, term: entry.term, type: EntryType.Normal, data }));
        } catch (error) {
          results.push(undefined);
          failure ??= error ?? new Error('apply failed');
        }
      }
    }
    const index = entry.index;
    // Batches entirely below this index can no longer complete in order (log replaced): settle them.
    while (this.proposals.length > 0 && this.proposals[0]!.last < index) this.settleBatch(this.proposals.shift()!, false);
    const batch = this.proposals[0];
    if (!batch || batch.first > index) return;
    for (const r of results) batch.results.push(r);
    if (failure !== undefined && batch.failure === undefined) batch.failure = failure;
    if (index === batch.last) this.settleBatch(this.proposals.shift()!, batch.term === entry.term);
  }

  private settleBatch(batch: PendingBatch, committedAsProposed: boolean): void {
    this.pendingProposalCount -= batch.proposals;
    if (!committedAsProposed || batch.broken) batch.reject(new NotLeaderError(this.core.leader, 'proposal lost to a leader change'));
    else if (batch.failure !== undefined) batch.reject(batch.failure instanceof Error ? batch.failure : new Error(String(batch.failure)));
    else batch.resolve(batch.results);
  }

  private failProposalsUpTo(index: number): void {
    while (this.proposals.length > 0 && this.proposals[0]!.first <= index) {
      const batch = this.proposals[0]!;
      if (batch.last <= index) {
        this.proposals.shift();
        batch.broken = true;
        this.settleBatch(batch, false);
      } else {
        batch.broken = true;
        return;
      }
    }
  }

  private settleReads(): void {
    const applied = this.core.log.applied;
    for (let i = this.waitingApply.length - 1; i >= 0; i--) {
      const read = this.waitingApply[i]!;
      if (read.index <= applied) {
        this.waitingApply.splice(i, 1);
        read.resolve();
      }
    }
  }

  private async maybeSnapshot(): Promise<void> {
    const every = this.options.snapshotEveryEntries ?? 10_000;
    const everyBytes = this.options.snapshotEveryBytes ?? Infinity;
    const applied = this.core.log.applied;
    const policy = this.options.snapshotPolicy;
    const due = policy ? policy(applied - this.lastSnapshotIndex, this.appliedBytes) : applied - this.lastSnapshotIndex >= every || this.appliedBytes >= everyBytes;
    if (!due) return;
    if (this.core.hasReady() || applied <= this.core.log.snapshotIndex) return;
    const data = await this.options.stateMachine.snapshot();
    if (this.core.log.applied !== applied || applied <= this.core.log.snapshotIndex) return;
    const snap = this.core.compact(applied, data);
    this.lastSnapshotIndex = applied;
    this.appliedBytes = 0;
    this.snapshotIsFull = false;
    await this.options.store.compact(this.options.group, snap);
  }

  /** Replaces the stand-in snapshot by a complete image of the state now (no entry is applied meanwhile). */
  private async expandSnapshot(): Promise<void> {
    this.expandWanted = false;
    const snap = this.core.snapshot;
    const full = this.options.stateMachine.fullSnapshot;
    if (!snap || this.snapshotIsFull || !full) return;
    const data = await full.call(this.options.stateMachine);
    if (this.core.snapshot !== snap || this.stopped) return;
    this.core.snapshot = { meta: snap.meta, data };
    this.snapshotIsFull = true;
    this.core.snapshotDataReplaced();
  }

  private reportLeader(): void {
    const { leader, term, role } = this.core;
    if (leader === this.reportedLeader && term === this.reportedTerm) return;
    this.reportedLeader = leader;
    this.reportedTerm = term;
    if (role !== Role.Leader) {
      // Reads confirmed only by a leader are void once it is no longer leader.
      const err = new NotLeaderError(leader, 'leadership changed');
      for (const r of this.reads.values()) r.reject(err);
      this.reads.clear();
    }
    this.options.onLeaderChange?.(leader, term);
  }
}

/**
 * The state machine cannot stand on its own snapshot (its state was lost): replaying the entries after it would
 * leave it silently incomplete. With another voter in the group, empty the log with commit 0 (all an empty log
 * supports), never forgetting a vote: the term moves one up with no vote in it. The bump is what gets the
 * snapshot sent: a leader of the old term counts this node's lost entries as matched and ignores its rejections
 * (it would never send the snapshot); answered from a higher term it steps down, and the next leader starts from
 * a fresh view of every follower, finds this one behind its compacted log and sends a complete snapshot. As the
 * only voter (R1) nobody can send one, so the log stays and the machine goes on with what it has (emptying it
 * would lose the entries too).
 */
async function discardUnheldLog(options: RaftNodeOptions, core: RaftCore): Promise<DiscardedLog | null> {
  const info = { snapshotIndex: core.log.snapshotIndex, lastIndex: core.log.lastIndex() };
  if (!core.config().voters.some((v) => v !== options.id)) {
    options.onSnapshotNotHeld?.({ logDiscarded: false, ...info });
    return null;
  }
  await options.store.reset(options.group, { term: core.term + 1, vote: NONE, commit: 0 });
  options.onSnapshotNotHeld?.({ logDiscarded: true, ...info });
  return { index: core.log.lastIndex(), term: core.log.lastTerm() };
}

/** The core over a group's persisted state. */
function coreOf(options: RaftNodeOptions, persisted: PersistedState): RaftCore {
  return new RaftCore({
    ...options.raft,
    id: options.id,
    group: options.group,
    // A log emptied by a reset (term > 0) is not a new group: it waits for the leader instead of bootstrapping.
    peers: persisted.hardState.term === 0 ? options.peers : [],
    random: options.random ?? new SeededRandom((Date.now() ^ (options.id * 2654435761)) >>> 0),
    hardState: persisted.hardState,
    snapshot: persisted.snapshot,
    entries: persisted.entries,
  });
}
