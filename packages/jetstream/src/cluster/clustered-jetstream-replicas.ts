// The stream replicas on this node follow the catalogue: after every meta change one reconcile pass (never
// two at once) opens a replica for each assignment naming this node, updates changed ones, and destroys
// those whose assignment is gone or no longer names this node. Meta log replay at restart re-opens them.
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
  /** Close, keep data. */
  stop(): Promise<void>;
  /** Close and delete its data and Raft log. */
  destroy(): Promise<void>;
}

export interface ReplicaSetHost {
  readonly selfId: NodeId;
  readonly storeDir: string;
  readonly log: JetStreamLogger;
  /** The catalogue now. */
  assignments(): StreamAssignment[];
  open(assignment: StreamAssignment, dir: string): Promise<LocalReplica>;
  /** After open: register its stream (table, consumers). */
  added(replica: LocalReplica): Promise<void>;
  /** Before stop/destroy: unregister it; `destroyed` when its data goes too. */
  removing(replica: LocalReplica, destroyed: boolean): Promise<void>;
}

/** A failed open is retried after this long (the next meta change retries sooner). */
const RETRY_AFTER_MS = 2_000;
/** Reconcile passes run back to back at most this many times before yielding to a timer. */
const MAX_PASSES = 16;

export function replicaDir(storeDir: string, group: string): string {
  return join(storeDir, 'streams', group);
}

export class ReplicaSet {
  private readonly byGroup = new Map<string, LocalReplica>();
  private dirty = false;
  private running: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly host: ReplicaSetHost) {}

  /** Replicas open on this node. */
  all(): LocalReplica[] {
    return [...this.byGroup.values()];
  }

  byStream(name: string): LocalReplica | undefined {
    for (const r of this.byGroup.values()) if (r.name === name) return r;
    return undefined;
  }

  byGroupId(group: string): LocalReplica | undefined {
    return this.byGroup.get(group);
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
    await this.running;
    for (const r of [...this.byGroup.values()]) {
      this.byGroup.delete(r.assignment.group);
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
    const self = this.host.selfId;
    const wanted = new Map<string, StreamAssignment>();
    for (const a of this.host.assignments()) if (a.peers.includes(self)) wanted.set(a.group, a);
    for (const [group, r] of [...this.byGroup]) {
      if (wanted.has(group)) continue;
      this.byGroup.delete(group);
      try {
        await this.host.removing(r, true);
        await r.destroy();
        this.host.log.info({ stream: r.name, group }, 'stream replica removed');
      } catch (err) {
        this.host.log.error({ stream: r.name, group, err: String(err) }, 'stream replica removal failed');
      }
    }
    let failed = false;
    for (const [group, a] of wanted) {
      if (this.stopped) return;
      const open = this.byGroup.get(group);
      try {
        if (open === undefined) {
          const r = await this.host.open(a, replicaDir(this.host.storeDir, group));
          this.byGroup.set(group, r);
          await this.host.added(r);
          this.host.log.info({ stream: a.config.name, group, peers: a.peers }, 'stream replica opened');
        } else if (JSON.stringify(open.assignment) !== JSON.stringify(a)) {
          await open.update(a);
        }
      } catch (err) {
        failed = true;
        this.host.log.error({ stream: a.config.name, group, err: String(err) }, 'stream replica could not be opened or updated');
      }
    }
    if (failed && this.retryTimer === null && !this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.changed();
      }, RETRY_AFTER_MS);
      this.retryTimer.unref();
    }
  }
}
