// The stream replicas on this node follow the catalogue: after every meta change one reconcile pass (never
// two at once) opens a replica for each assignment naming this node, updates changed ones, and destroys
// those whose stream is gone. A replica whose stream moved off this node (peer removal, fewer replicas) keeps
// running until its group no longer needs it: the leader removes it from the Raft group only after the new
// member caught up, and until then it may count for the quorum. Meta log replay at restart re-opens them.
import { join } from 'node:path';
import type { NodeId } from '@flotilla/raft';
import type { ApiError } from '../api/api-error.js';
import type { JetStreamLogger } from '../message-bus.js';
import type { Stream } from '../stream/stream.js';
import type { StreamAssignment, StreamReplicaView } from './cluster-contracts.js';

/** A replica as the meta layer drives it (implemented by StreamReplica). */
export interface LocalReplica extends StreamReplicaView {
  readonly stream: Stream;
  update(assignment: StreamAssignment): Promise<void>;
  stepDown(): ApiError | null;
  /** A leadership transfer is under way (requests wait: the target may already answer them). */
  readonly handingOverLeadership?: boolean;
  /** Close, keep data. */
  stop(): Promise<void>;
  /** Close and delete its data and Raft log. */
  destroy(): Promise<void>;
}

/** `R`: the replicas it opens (StreamReplica on a node; fakes in tests). */
export interface ReplicaSetHost<R extends LocalReplica = LocalReplica> {
  readonly selfId: NodeId;
  readonly storeDir: string;
  readonly log: JetStreamLogger;
  /** The catalogue now. */
  assignments(): StreamAssignment[];
  open(assignment: StreamAssignment, dir: string): Promise<R>;
  /** After open: register its stream (table, consumers). */
  added(replica: R): Promise<void>;
  /** Before stop/destroy: unregister it; `destroyed` when its data goes too. */
  removing(replica: R, destroyed: boolean): Promise<void>;
  /** After an update whose config differs from `previous` (its running consumers are told, as alone). */
  configChanged?(replica: R, previous: StreamAssignment): void;
}

/** A failed open is retried after this long (the next meta change retries sooner). */
const RETRY_AFTER_MS = 2_000;
/** A replica leaving its group is checked this often… */
const LEAVING_CHECK_MS = 500;
/** …and closed once it does not lead and has not heard from a leader for this long (it was removed)… */
const LEAVING_SILENCE_MS = 2_000;
/** …or at the latest after this long. */
const LEAVING_MAX_MS = 120_000;
/** Replicas opened (or updated) concurrently within one reconcile pass. */
const PARALLEL_OPENS = 8;
/** Reconcile passes run back to back at most this many times before yielding to a timer. */
const MAX_PASSES = 16;

export function replicaDir(storeDir: string, group: string): string {
  return join(storeDir, 'streams', group);
}

export class ReplicaSet<R extends LocalReplica = LocalReplica> {
  private readonly byGroup = new Map<string, R>();
  /** Replicas whose stream moved off this node, still serving their group until it lets them go. */
  private readonly leaving = new Map<string, { replica: R; sinceMs: number }>();
  private leavingTimer: NodeJS.Timeout | null = null;
  /** Leaving replicas their group has let go: destroyed at the start of the next pass. */
  private letGo: R[] = [];
  private dirty = false;
  private running: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly host: ReplicaSetHost<R>) {}

  /** Replicas open on this node (those leaving their group included). */
  all(): R[] {
    return [...this.byGroup.values(), ...[...this.leaving.values()].map((l) => l.replica)];
  }

  byStream(name: string): R | undefined {
    for (const r of this.all()) if (r.name === name) return r;
    return undefined;
  }

  byGroupId(group: string): R | undefined {
    return this.byGroup.get(group) ?? this.leaving.get(group)?.replica;
  }

  /** Schedules a reconcile pass (coalesced). */
  changed(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.running === null) this.running = this.run();
  }

  /** Resolves once no reconcile is pending or running. */
  async settled(): Promise<void> {
    for (let i = 0; i < MAX_PASSES && this.running !== null; i++) await this.running;
  }

  /** Stops every replica (data kept). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    if (this.leavingTimer !== null) clearInterval(this.leavingTimer);
    await this.running;
    for (const r of [...this.all(), ...this.letGo.splice(0)]) {
      this.byGroup.delete(r.assignment.group);
      this.leaving.delete(r.assignment.group);
      await this.host.removing(r, false).catch(() => undefined);
      await r.stop().catch((err: unknown) => this.host.log.warn({ stream: r.name, err: String(err) }, 'replica stop failed'));
    }
  }

  private async run(): Promise<void> {
    try {
      for (let pass = 0; pass < MAX_PASSES && this.dirty && !this.stopped; pass++) {
        this.dirty = false;
        await this.reconcile();
      }
    } finally {
      this.running = null;
      if (this.dirty && !this.stopped) this.running = this.run();
    }
  }

  private async reconcile(): Promise<void> {
    for (const r of this.letGo.splice(0)) await this.destroy(r);
    const self = this.host.selfId;
    const wanted = new Map<string, StreamAssignment>();
    const current = new Map<string, StreamAssignment>();
    for (const a of this.host.assignments()) {
      current.set(a.group, a);
      if (a.peers.includes(self)) wanted.set(a.group, a);
    }
    for (const [group, l] of [...this.leaving]) {
      if (!wanted.has(group)) continue;
      // Placed here again before it left: it simply stays.
      this.leaving.delete(group);
      this.byGroup.set(group, l.replica);
    }
    for (const [group, r] of [...this.byGroup]) {
      if (wanted.has(group)) continue;
      this.byGroup.delete(group);
      const still = current.get(group);
      if (still !== undefined) {
        // Moved off this node: the group's leader takes it out once the new member caught up.
        this.leaving.set(group, { replica: r, sinceMs: Date.now() });
        await this.update(r, still).catch((err: unknown) => this.host.log.warn({ stream: r.name, err: String(err) }, 'leaving replica update failed'));
        this.watchLeaving();
        continue;
      }
      await this.destroy(r);
    }
    for (const [group, l] of [...this.leaving]) {
      const still = current.get(group);
      if (still === undefined) {
        this.leaving.delete(group);
        await this.destroy(l.replica);
      } else if (l.replica.assignment !== still && JSON.stringify(l.replica.assignment) !== JSON.stringify(still)) {
        await this.update(l.replica, still).catch(() => undefined);
      }
    }
    let failed = false;
    const work = [...wanted].filter(([group, a]) => {
      const open = this.byGroup.get(group);
      return open === undefined || (open.assignment !== a && JSON.stringify(open.assignment) !== JSON.stringify(a));
    });
    // Opens (store + Raft log replay) run a few at a time: a restart with many streams is I/O bound.
    for (let i = 0; i < work.length && !this.stopped; i += PARALLEL_OPENS) {
      const results = await Promise.all(work.slice(i, i + PARALLEL_OPENS).map(([group, a]) => this.openOrUpdate(group, a)));
      if (results.includes(false)) failed = true;
    }
    this.checkLeaving();
    if (failed && this.retryTimer === null && !this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.changed();
      }, RETRY_AFTER_MS);
      this.retryTimer.unref();
    }
  }

  /** false when it failed (logged; retried later). */
  private async openOrUpdate(group: string, a: StreamAssignment): Promise<boolean> {
    const open = this.byGroup.get(group);
    try {
      if (open === undefined) {
        const r = await this.host.open(a, replicaDir(this.host.storeDir, group));
        this.byGroup.set(group, r);
        await this.host.added(r);
        this.host.log.info({ stream: a.config.name, group, peers: a.peers }, 'stream replica opened');
      } else {
        await this.update(open, a);
      }
      return true;
    } catch (err) {
      this.host.log.error({ stream: a.config.name, group, err: String(err) }, 'stream replica could not be opened or updated');
      return false;
    }
  }

  private async update(r: R, a: StreamAssignment): Promise<void> {
    const previous = r.assignment;
    await r.update(a);
    if (JSON.stringify(previous.config) !== JSON.stringify(a.config)) this.host.configChanged?.(r, previous);
  }

  private async destroy(r: R): Promise<void> {
    const group = r.assignment.group;
    try {
      await this.host.removing(r, true);
      await r.destroy();
      this.host.log.info({ stream: r.name, group }, 'stream replica removed');
    } catch (err) {
      this.host.log.error({ stream: r.name, group, err: String(err) }, 'stream replica removal failed');
    }
  }

  private watchLeaving(): void {
    if (this.leavingTimer !== null || this.stopped) return;
    this.leavingTimer = setInterval(() => this.checkLeaving(), LEAVING_CHECK_MS);
    this.leavingTimer.unref();
  }

  /** Closes leaving replicas their group has let go (no leader heard for a while), or that waited too long. */
  private checkLeaving(): void {
    if (this.leaving.size === 0) {
      if (this.leavingTimer !== null) clearInterval(this.leavingTimer);
      this.leavingTimer = null;
      return;
    }
    const now = Date.now();
    for (const [group, l] of this.leaving) {
      if (now - l.sinceMs < LEAVING_SILENCE_MS) continue;
      if (now - l.sinceMs < LEAVING_MAX_MS && !isLetGo(l.replica)) continue;
      this.leaving.delete(group);
      // Destroyed by the next reconcile pass, so it never overlaps an open or update.
      this.letGo.push(l.replica);
      this.changed();
    }
  }
}

/** Not leading, and no leader heard from lately: the group has removed this member. */
function isLetGo(r: LocalReplica): boolean {
  if (r.isLeader()) return false;
  const leader = r.leaderId();
  if (leader === 0) return true;
  const seen = r.status().replicas.find((x) => x.raftNodeId === leader);
  return seen === undefined || seen.activeAgoMs >= LEAVING_SILENCE_MS;
}
