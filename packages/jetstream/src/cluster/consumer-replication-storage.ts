// The leader's ConsumerStorage for a replicated stream: instead of files, a consumer's config, state and
// removal become consumer entries proposed to the stream's Raft group. State changes are coalesced like
// FileConsumerStorage's writes — one proposal in flight, each carrying the newest whole state, at most one
// every STATE_PROPOSE_INTERVAL_MS unless someone waits — and flush() (which ack-sync replies wait on)
// resolves once everything so far is committed by a quorum and applied here.
import { scheduleWrite } from '../consumer/coalesced-timer.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';
import type { ConsumerMeta, ConsumerStorage } from '../consumer/consumer-storage.js';
import { encodeConsumerEntry } from './consumer-replication-entry.js';

/** What consumer replication needs from the stream's Raft group (the stream replica provides it). */
export interface ConsumerReplicationGroup {
  /** Resolves after the entry is committed and applied on this node; rejects when it cannot be (not leader). */
  proposeConsumerEntry(payload: Buffer): Promise<void>;
  /** ConsumerInfo's `cluster` block: the stream replica's (consumers run on the stream leader). */
  clusterInfo(): object;
  /** CONSUMER.LEADER.STEPDOWN: hand the stream's leadership to another replica. */
  stepDown(): Promise<void>;
}

/** Minimum gap between two state proposals unless a caller waits (ack-sync, create). */
const STATE_PROPOSE_INTERVAL_MS = 20;
/** After a failed proposal (no quorum yet), try again this much later while still open. */
const RETRY_AFTER_MS = 250;
/** close() gives a last state proposal this long (shutdown must not hang without a quorum). */
const CLOSE_FLUSH_TIMEOUT_MS = 1000;

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class ReplicatedConsumerStorage implements ConsumerStorage {
  private dirty = false;
  private inFlight: Promise<void> | null = null;
  /** Served by the proposal in flight (its state already holds their changes). */
  private inFlightWaiters: Waiter[] = [];
  /** Served by the next proposal. */
  private nextWaiters: Waiter[] = [];
  private cancelScheduled: (() => void) | null = null;
  private lastProposeMs = 0;
  private closed = false;

  constructor(
    private readonly group: ConsumerReplicationGroup,
    readonly consumerName: string,
    private readonly read: () => ConsumerStateSnapshot,
    private readonly onError: (err: unknown) => void,
  ) {}

  saveMeta(meta: ConsumerMeta): Promise<void> {
    return this.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'meta', meta }));
  }

  stateChanged(): void {
    if (this.closed) return;
    this.dirty = true;
    this.schedule(false);
  }

  flush(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('consumer storage closed'));
    if (!this.dirty) {
      if (this.inFlight === null) return Promise.resolve();
      return new Promise((resolve, reject) => this.inFlightWaiters.push({ resolve, reject }));
    }
    const p = new Promise<void>((resolve, reject) => this.nextWaiters.push({ resolve, reject }));
    this.schedule(true);
    return p;
  }

  async remove(): Promise<void> {
    this.stop(new Error('consumer removed'));
    await this.inFlight?.catch(() => undefined);
    await this.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'remove', name: this.consumerName }));
  }

  async close(): Promise<void> {
    const wasDirty = this.dirty;
    this.stop(new Error('consumer stopped'));
    await this.inFlight?.catch(() => undefined);
    if (!wasDirty) return;
    // Best effort: a follower-to-be or a node without quorum refuses or never commits it.
    await boundedMs(this.propose(this.read()), CLOSE_FLUSH_TIMEOUT_MS).catch(() => undefined);
  }

  abandon(): void {
    this.stop(new Error('consumer released'));
  }

  /** Stop proposing; nobody waiting is told the pending state committed. */
  private stop(reason: Error): void {
    this.closed = true;
    this.dirty = false;
    this.cancelScheduled?.();
    this.cancelScheduled = null;
    const waiters = this.nextWaiters;
    this.nextWaiters = [];
    for (const w of waiters) w.reject(reason);
  }

  private schedule(urgent: boolean): void {
    if (this.inFlight !== null || this.closed) return;
    if (this.cancelScheduled !== null) {
      if (!urgent) return;
      this.cancelScheduled();
    }
    const waitMs = urgent ? 0 : Math.max(0, this.lastProposeMs + STATE_PROPOSE_INTERVAL_MS - Date.now());
    this.scheduleIn(waitMs);
  }

  private scheduleIn(waitMs: number): void {
    this.cancelScheduled = scheduleWrite(waitMs, () => this.startProposal());
  }

  private startProposal(): void {
    this.cancelScheduled = null;
    if (this.inFlight !== null || this.closed || !this.dirty) return;
    this.dirty = false;
    this.inFlightWaiters = this.nextWaiters;
    this.nextWaiters = [];
    this.lastProposeMs = Date.now();
    this.inFlight = this.propose(this.read()).then(
      () => this.proposalDone(null),
      (err: unknown) => this.proposalDone(err ?? new Error('proposal failed')),
    );
  }

  /** Settles the proposal's waiters and clears `inFlight` in one step (a flush in between would be lost). */
  private proposalDone(err: unknown): void {
    const waiters = this.inFlightWaiters;
    this.inFlightWaiters = [];
    this.inFlight = null;
    for (const w of waiters) {
      if (err === null) w.resolve();
      else w.reject(err);
    }
    if (this.closed) return;
    if (err !== null) {
      this.onError(err);
      // The state is still unreplicated: keep it dirty and retry while this node leads.
      this.dirty = true;
      if (this.cancelScheduled === null) this.scheduleIn(RETRY_AFTER_MS);
    } else if (this.dirty) {
      this.schedule(this.nextWaiters.length > 0);
    }
  }

  private propose(state: ConsumerStateSnapshot): Promise<void> {
    return this.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'state', name: this.consumerName, state }));
  }
}

function boundedMs<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}
