// One stream's replica on this node: the local Stream and store, driven by the stream's Raft group. The leader
// (once it has applied every entry of earlier terms) subscribes the subjects, sequences publishes and proposes
// them; every replica applies committed entries in log order at the leader's sequences; the leader acks after
// commit + apply. See README "Cluster" for the entry rules (idempotent replay, purge bounds, snapshots).
import { rm } from 'node:fs/promises';
import { type Clock, type ConfChange, type Entry, NONE, type NodeId, RaftNode, SnapshotNotHeldError, type StateMachine } from '@flotilla/raft';
import { FileStore, MemoryStore, type MessageStore } from '@flotilla/store';
import type { ApiError } from '../api/api-error.js';
import { messagesDir } from '../catalogue/stream-catalogue.js';
import { messageTtlNs } from '../stream/message-ttl.js';
import { Stream, storeLimitsOf, type StreamHost } from '../stream/stream.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type {
  ClusterEnvironment,
  ClusterObserver,
  ClusterPeer,
  RaftGroupStatus,
  StreamAssignment,
  StreamReplicaView,
} from './cluster-contracts.js';
import { EntryOp, decodeStreamEntry } from './stream-entry-codec.js';
import { clusterBlockOf, groupPeerInfos, groupRoleOf, type ReplicaClusterBlock } from './stream-replica-cluster-info.js';
import {
  CONSUMER_LEADER_ELECTED_PREFIX,
  STREAM_LEADER_ELECTED_PREFIX,
  STREAM_QUORUM_LOST_PREFIX,
  consumerLeaderElectedEvent,
  streamLeaderElectedEvent,
  streamQuorumLostEvent,
} from '../advisories/jetstream-events.js';
import { noReplacementPeerError, unavailableError } from './stream-replica-errors.js';
import { applyReplicatedBatch, applyReplicatedDelete, applyReplicatedMsg, applyReplicatedPurge } from './stream-replica-apply.js';
import { StreamPublisher } from './stream-replica-publisher.js';
import { decodeReplicaSnapshot, encodeReplicaSnapshot } from './stream-replica-snapshot.js';
import { CURRENT_WITHIN_ELECTIONS, DEFAULT_STREAM_RAFT_TIMINGS, sharedTicker, type StreamRaftTimings } from './stream-replica-timing.js';

/** What a replica needs from the node: a StreamHost plus the cluster plumbing and the consumer hooks. */
/** nats-server's lostQuorumAdvInterval, and the age a group must reach before it reports a lost quorum. */
const QUORUM_LOST_INTERVAL_MS = 10_000;
const QUORUM_LOST_GRACE_MS = 5_000;

export interface StreamReplicaHost extends StreamHost {
  readonly env: ClusterEnvironment;
  readonly observer?: ClusterObserver;
  /** The replica started (true) or stopped (false) serving as leader: start/stop consumers here. */
  leadershipChanged(replica: StreamReplica, leading: boolean): void;
  /** A committed consumer entry (proposed through `proposeConsumerEntry`), on every replica in log order. */
  applyConsumerEntry(replica: StreamReplica, payload: Buffer): Promise<void> | void;
  /**
   * The consumers' state for the group's snapshot, reflecting every consumer entry applied so far (the
   * snapshot waits for the promise; no entry is applied meanwhile). Without it snapshots carry no consumer state.
   */
  snapshotConsumers?(replica: StreamReplica): Uint8Array | Promise<Uint8Array>;
  /** A snapshot replaced this replica's state (lagging follower, or a memory stream's restart): take its consumers. */
  restoreConsumers?(replica: StreamReplica, data: Uint8Array): void | Promise<void>;
  /** Publishes an advisory when someone listens (the node counts it for metrics); absent: none is sent. */
  advisory?(subject: string, body: object): void;
  /** The stream's consumers held on this node (their leadership moves with the stream's). */
  storedConsumerNames?(stream: string): string[];
}

export interface StreamReplicaOptions {
  timings?: Partial<StreamRaftTimings>;
  /** Snapshot (and compact the Raft log) after this many applied entries (default 8192)... */
  snapshotEveryEntries?: number;
  /** ...or this many bytes of applied entries (default 64 MiB), whichever comes first. */
  snapshotEveryBytes?: number;
  /**
   * This node is added to an existing group. Without it only the assignment's first peer founds a group
   * (writes the bootstrap entry when its log is empty); the others always wait for the leader's log.
   */
  joining?: boolean;
  /** File streams: fsync period of the message store (the Raft log is the durable record). */
  storeSyncIntervalMs?: number;
  /** Tests: drive ticks by hand. */
  clock?: Clock;
}

/** The env's test knobs (`streamSnapshotEveryEntries`) may lower this so end-to-end tests compact. */
const DEFAULT_SNAPSHOT_EVERY_ENTRIES = 8192;
/** The Raft log is held in memory until a snapshot: this bounds it under heavy publishing. */
const DEFAULT_SNAPSHOT_EVERY_BYTES = 64 * 1024 * 1024;
/** A snapshot (a copy of the store) waits until the log since the last one is at least store bytes / this. */
const SNAPSHOT_COST_RATIO = 2;
/** ...but never lets the log since the last snapshot grow beyond this. */
const MAX_LOG_BYTES_BEFORE_SNAPSHOT = 256 * 1024 * 1024;
const DEFAULT_STORE_SYNC_INTERVAL_MS = 1000;
/**
 * Applied messages wait this long for company before the message store writes them (the Raft log is the
 * durable record and replays what a crash lost): one store write per batch of publishes instead of one per
 * publish — fewer thread-pool round trips and less disk traffic beside the Raft log's synced writes.
 */
const STORE_WRITE_DELAY_MS = 50;
/** A member this few entries behind the commit index (appends in flight) still counts as `current`. */
const CURRENT_MAX_LAG_ENTRIES = 64;
/** Membership reconciliation: at most this many steps per run (each waits for a commit or a short pause). */
const MAX_MEMBERSHIP_STEPS = 64;
/** A run that ended with steps left is retried after this long (while this node leads). */
const MEMBERSHIP_RETRY_MS = 2000;

export class StreamReplica implements StreamReplicaView {
  readonly stream: Stream;
  private raftNode: RaftNode | null = null;
  private readonly publisher: StreamPublisher;
  private current: StreamAssignment;
  private readonly timings: StreamRaftTimings;
  private readonly selfId: NodeId;
  private readonly openedAtMs = performance.now();
  private serving = false;
  /** Leader of this term: serve once this index (the term's first entry, at least) is applied. */
  private serveAfterIndex = 0;
  private transferTimer: NodeJS.Timeout | null = null;
  /**
   * A step-down is under way: publishing is paused, but this replica still answers the stream's requests (and
   * its consumers run) until the Raft leadership actually moves, so no request falls into a gap between leaders.
   */
  private handingOver = false;
  /** Term in which this replica started serving (a leadership regained in a later term serves afresh). */
  private servingTerm = 0;
  /** performance.now() of the replica's start and of the last QUORUM_LOST advisory (nats-server: one per 10 s, none in the first 5 s). */
  private readonly startedAtMs = performance.now();
  private quorumLostSentMs = -Infinity;
  /** When (performance.now() ms) this replica began serving as leader; whether a transfer elected it. */
  private servingSinceMs = -Infinity;
  /** Wall-clock time this node began serving as leader: ClusterInfo's `leader_since` (2.11+). */
  private servingSinceWallMs = 0;
  private servingByTransfer = false;
  /** When (performance.now() ms) this replica last lost leadership while handing it over. */
  private handedOverAtMs = -Infinity;
  private leaderChanges = 0;
  private startingUp = true;
  /** The store found damage at open and waits for the leader's complete image (see repairPlan). */
  private storeDamaged = false;
  private stopped = false;
  private membershipRun: Promise<void> | null = null;
  private membershipDirty = false;

  private constructor(
    private readonly host: StreamReplicaHost,
    assignment: StreamAssignment,
    dir: string,
    store: MessageStore,
    private readonly options: StreamReplicaOptions,
  ) {
    this.current = assignment;
    this.selfId = host.env.self.raftNodeId;
    this.timings = { ...DEFAULT_STREAM_RAFT_TIMINGS, ...options.timings };
    // The composition of a replica: its Stream writes through the group (the publisher is its StreamWriter,
    // made by the Stream's constructor through this factory; the replica drives its leadership).
    let publisher: StreamPublisher | null = null;
    this.stream = new Stream(host, assignment.config, assignment.created, dir, store, (stream) => {
      publisher = new StreamPublisher(
        stream,
        host,
        {
          proposeBatch: (items) => (this.raftNode ? this.raftNode.proposeBatch(items) : Promise.reject(unavailableError())),
          lastIndex: () => this.raftNode?.core.log.lastIndex() ?? 0,
        },
        {
          ackBeforeCommit: host.env.testKnobs?.pubAckBeforeCommit === true,
          log: host.log,
          committed: (seconds) => host.observer?.proposalCommitted?.(assignment.group, seconds),
        },
      );
      return publisher;
    });
    this.publisher = publisher!;
  }

  /** Opens the store in `dir`, replays the Raft log (and snapshot), and joins the group. */
  static async open(host: StreamReplicaHost, assignment: StreamAssignment, dir: string, options: StreamReplicaOptions = {}): Promise<StreamReplica> {
    const cfg = assignment.config;
    const store = await openReplicaStore(cfg, dir, options.storeSyncIntervalMs ?? DEFAULT_STORE_SYNC_INTERVAL_MS);
    try {
      const damaged = await StreamReplica.repairPlan(host, assignment, store);
      // Every replica starts its new store the same way, so first_seq needs no entry.
      if (cfg.first_seq !== undefined && cfg.first_seq > 1 && store.state().last_seq === 0) await store.skipMsgs(1, cfg.first_seq - 1);
      const replica = new StreamReplica(host, assignment, dir, store, options);
      replica.storeDamaged = damaged;
      await replica.stream.start(false);
      await replica.startRaft();
      return replica;
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * A file store that found damage at open holds holes the other replicas do not have. With a Raft snapshot the
   * store is kept and marked damaged: restoring the snapshot at startup then refuses (SnapshotNotHeldError), the
   * log is discarded and the leader sends the complete image. Without one the log holds every entry since the
   * stream began: the store is emptied and the log replays into it. Returns whether the mark is set.
   */
  private static async repairPlan(host: StreamReplicaHost, assignment: StreamAssignment, store: MessageStore): Promise<boolean> {
    const runs = store.damageFound?.() ?? 0;
    if (runs === 0) return false;
    const persisted = await host.env.raftStore.load(assignment.group);
    const fields = { stream: assignment.config.name, group: assignment.group, damagedRuns: runs };
    if (persisted.snapshot !== undefined && persisted.snapshot !== null) {
      host.log.warn(fields, 'stream store damaged; fetching the complete image from the leader');
      return true;
    }
    host.log.warn(fields, 'stream store damaged; rebuilding it from the Raft log');
    await store.restore(new MemoryStore({ limits: store.limits() }).snapshot());
    return false;
  }

  private async startRaft(): Promise<void> {
    const { env } = this.host;
    const founder = this.options.joining !== true && (this.current.founder ?? this.current.peers[0]) === this.selfId;
    const sm: StateMachine = {
      apply: (entry) => this.applyEntry(entry),
      snapshot: () => this.takeSnapshot(),
      restore: (data) => this.restoreSnapshot(data),
    };
    // File streams compact with a stand-in (their flushed store holds the state); the complete image is
    // made only when a follower needs it. Memory streams keep complete snapshots: nothing else survives a restart.
    if (this.stream.store.kind === 'file') sm.fullSnapshot = () => this.fullImage();
    const node = await RaftNode.start({
      group: this.current.group,
      id: this.selfId,
      peers: founder ? this.current.peers : [],
      store: env.raftStore,
      transport: env.transport,
      stateMachine: sm,
      clock: this.options.clock ?? sharedTicker,
      tickMs: this.timings.tickMs,
      snapshotPolicy: (entries, bytes) => this.snapshotDue(entries, bytes),
      // lazyCommit: followers' state is read only through the leader (API, direct get, consumers), so commits
      // ride on the next append or heartbeat — one message and one answer per follower fewer per publish.
      raft: { electionTicks: this.timings.electionTicks, heartbeatTicks: this.timings.heartbeatTicks, preVote: true, checkQuorum: true, lazyCommit: true },
      onLeaderChange: (leader, term) => this.leaderChanged(leader, term),
      onApplied: (index) => this.applied(index),
      onSnapshotNotHeld: ({ logDiscarded, snapshotIndex, lastIndex }) => {
        const fields = { stream: this.name, group: this.current.group, storeLastSeq: this.stream.store.state().last_seq, snapshotIndex, lastIndex };
        if (logDiscarded) this.host.log.warn(fields, 'stream store behind its Raft snapshot; discarding the Raft log to receive a complete snapshot from the leader');
        else this.host.log.error(fields, 'stream store behind its Raft snapshot and no other replica to copy from; this replica misses messages');
      },
      onError: (error) => {
        this.host.log.error({ stream: this.name, group: this.current.group, err: String(error) }, 'stream raft node failed');
        this.unserve();
      },
    });
    this.raftNode = node;
    this.startingUp = false;
    // A brand-new group: its founder campaigns at once instead of waiting out an election timeout.
    if (founder && node.core.term <= 1 && node.core.log.lastIndex() <= 1) node.campaign();
  }

  private get raft(): RaftNode {
    if (this.raftNode === null) throw new Error('stream replica not started');
    return this.raftNode;
  }

  get name(): string {
    return this.stream.name;
  }

  get assignment(): StreamAssignment {
    return this.current;
  }

  // ---- state machine ----------------------------------------------------------------------------

  private applyEntry(entry: Entry): unknown {
    const e = decodeStreamEntry(entry.data);
    let result: unknown;
    switch (e.op) {
      case EntryOp.Msg:
        result = applyReplicatedMsg(this.stream, this.host.log, e.msg);
        break;
      case EntryOp.Purge:
        result = applyReplicatedPurge(this.stream, e.purge);
        break;
      case EntryOp.Delete:
        result = applyReplicatedDelete(this.stream, e.seq, e.erase);
        break;
      case EntryOp.Consumer:
        result = this.host.applyConsumerEntry(this, e.payload);
        break;
      case EntryOp.Batch:
        result = applyReplicatedBatch(this.stream, this.host.log, e.msgs);
        break;
    }
    // Followers drop results: a failure must be logged here rather than surface as an unhandled rejection.
    if (result instanceof Promise) {
      result.catch((err: unknown) => this.host.log.error({ stream: this.name, err: String(err) }, 'stream entry apply failed'));
    }
    return result;
  }

  /**
   * File streams: after the entry/byte limits (a stand-in costs nothing). Memory streams copy the whole store,
   * so the log must also have grown by a fair share of it since the last snapshot (copying stays proportional
   * to what was written); past MAX_LOG_BYTES_BEFORE_SNAPSHOT of log it is taken regardless.
   */
  private snapshotDue(entries: number, bytes: number): boolean {
    const everyEntries = this.options.snapshotEveryEntries ?? this.host.env.testKnobs?.streamSnapshotEveryEntries ?? DEFAULT_SNAPSHOT_EVERY_ENTRIES;
    const everyBytes = this.options.snapshotEveryBytes ?? DEFAULT_SNAPSHOT_EVERY_BYTES;
    if (entries < everyEntries && bytes < everyBytes) return false;
    if (this.stream.store.kind === 'file' || bytes >= MAX_LOG_BYTES_BEFORE_SNAPSHOT) return true;
    return bytes * SNAPSHOT_COST_RATIO >= this.stream.store.state().bytes;
  }

  /**
   * Compaction snapshot: a stand-in for file streams, a complete image for memory. The store is synced first
   * (not just written: it syncs on an interval): the log entries this snapshot lets go of must be on disk in it.
   */
  private async takeSnapshot(): Promise<Uint8Array> {
    if (this.stream.store.kind !== 'file') return this.fullImage();
    const store = this.stream.store;
    await store.sync();
    const consumers = (await this.host.snapshotConsumers?.(this)) ?? new Uint8Array(0);
    return encodeReplicaSnapshot(store.state().last_seq, consumers, null);
  }

  /** The store's whole content and the consumers' state now (see README for the size limits). */
  private async fullImage(): Promise<Uint8Array> {
    const store = this.stream.store;
    await store.flush();
    const chunks: Uint8Array[] = [];
    for await (const chunk of store.snapshot()) chunks.push(chunk);
    const consumers = (await this.host.snapshotConsumers?.(this)) ?? new Uint8Array(0);
    return encodeReplicaSnapshot(store.state().last_seq, consumers, chunks);
  }

  private async restoreSnapshot(data: Uint8Array): Promise<void> {
    const snap = decodeReplicaSnapshot(data);
    const store = this.stream.store;
    // At startup our own snapshot is restored: the file store was flushed before it was taken, so a store
    // at or past its last sequence already holds it (later entries replay idempotently).
    if (this.startingUp && store.kind === 'file' && !this.storeDamaged && store.state().last_seq >= snap.lastSeq) return;
    const image = snap.storeBytes;
    if (image === null) {
      if (this.startingUp && this.storeDamaged) throw new SnapshotNotHeldError(`stream store damaged at open; its Raft snapshot at ${snap.lastSeq}`);
      // A stand-in whose state this store does not hold (its files were lost). RaftNode discards the log so the
      // leader sends a complete image, or (no other voter: R1) starts from the log as it is.
      if (this.startingUp) throw new SnapshotNotHeldError(`stream store at ${store.state().last_seq}, its Raft snapshot at ${snap.lastSeq}`);
      this.host.log.error({ stream: this.name, storeLastSeq: store.state().last_seq, snapshotLastSeq: snap.lastSeq }, 'stream snapshot without messages received from the leader; this replica misses messages');
      return;
    }
    await store.restore(
      (async function* () {
        yield image;
      })(),
    );
    this.storeDamaged = false;
    await this.stream.storeReplaced();
    if (snap.consumers.length > 0) await this.host.restoreConsumers?.(this, snap.consumers);
  }

  // ---- leadership -------------------------------------------------------------------------------

  private leaderChanged(leader: NodeId, term: number): void {
    this.leaderChanges++;
    this.guarded('observer', () => this.host.observer?.leaderChanged?.(this.current.group, leader, term));
    if (leader === this.selfId && this.raftNode !== null) {
      // Led again in a new term without a report in between: the old term's serving state does not carry over.
      if (this.serving && term !== this.servingTerm) this.unserve();
      if (!this.serving) {
        this.serveAfterIndex = this.raftNode.core.log.lastIndex();
        this.maybeServe();
      }
    } else {
      // Check-quorum made this serving leader a follower in its own term with no leader: it lost its quorum.
      if (this.serving && leader === 0 && term === this.servingTerm) this.guarded('advisory', () => this.quorumLostAdvisory());
      this.serveAfterIndex = 0;
      this.unserve();
      // A hand-over happened (or leadership went elsewhere): nothing left to give up on.
      if (this.transferTimer !== null) {
        clearTimeout(this.transferTimer);
        this.transferTimer = null;
      }
    }
  }

  private applied(index: number): void {
    if (this.serveAfterIndex > 0 && index >= this.serveAfterIndex) this.maybeServe();
  }

  private maybeServe(): void {
    const node = this.raftNode;
    if (this.stopped || this.serving || node === null || this.transferTimer !== null) return;
    if (!node.isLeader() || this.serveAfterIndex === 0 || node.core.log.applied < this.serveAfterIndex) return;
    this.serving = true;
    this.servingTerm = node.core.term;
    this.servingSinceMs = performance.now();
    this.servingSinceWallMs = Date.now();
    this.servingByTransfer = node.core.electedByTransfer();
    this.handingOver = false;
    this.host.log.info({ stream: this.name, group: this.current.group, term: node.core.term }, 'JetStream cluster new stream leader');
    this.publisher.activate();
    this.stream.setServing(true);
    this.guarded('leadershipChanged', () => this.host.leadershipChanged(this, true));
    this.guarded('advisory', () => this.leaderElectedAdvisory());
    this.reconcileMembership();
  }

  /** `$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.<stream>`, throttled and not right after start, as nats-server's. */
  private quorumLostAdvisory(): void {
    const now = performance.now();
    if (this.host.advisory === undefined || now - this.startedAtMs < QUORUM_LOST_GRACE_MS || now - this.quorumLostSentMs < QUORUM_LOST_INTERVAL_MS) return;
    this.quorumLostSentMs = now;
    const body = streamQuorumLostEvent(this.name, groupPeerInfos(this.selfId, this.status(), this.peersById()), this.host.domain);
    this.host.advisory(`${STREAM_QUORUM_LOST_PREFIX}${this.name}`, body);
  }

  /** `$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>` once this node serves as the leader (nats-server's moment). */
  private leaderElectedAdvisory(): void {
    if (this.host.advisory === undefined) return;
    const subject = `${STREAM_LEADER_ELECTED_PREFIX}${this.name}`;
    const names = this.peersById();
    const leader = names.get(this.selfId)?.name ?? '';
    const replicas = groupPeerInfos(this.selfId, this.status(), names);
    this.host.advisory(subject, streamLeaderElectedEvent(this.name, leader, replicas, this.host.domain));
    // Consumers are led by the stream's leader (they replicate through its group): each is elected with it.
    for (const consumer of this.host.storedConsumerNames?.(this.name) ?? []) {
      this.host.advisory(`${CONSUMER_LEADER_ELECTED_PREFIX}${this.name}.${consumer}`, consumerLeaderElectedEvent(this.name, consumer, leader, replicas, this.host.domain));
    }
  }

  private unserve(): void {
    if (this.handingOver) this.handedOverAtMs = performance.now();
    this.handingOver = false;
    if (!this.serving) return;
    this.serving = false;
    this.host.log.info({ stream: this.name, group: this.current.group }, 'stream leadership given up');
    this.stream.setServing(false);
    this.publisher.deactivate();
    this.guarded('leadershipChanged', () => this.host.leadershipChanged(this, false));
  }

  /** Host callbacks run inside the Raft driver: an exception there must not stop the group. */
  private guarded(what: string, fn: () => unknown): void {
    try {
      const r = fn();
      if (r instanceof Promise) r.catch((err: unknown) => this.host.log.error({ stream: this.name, what, err: String(err) }, 'stream replica callback failed'));
    } catch (err) {
      this.host.log.error({ stream: this.name, what, err: String(err) }, 'stream replica callback failed');
    }
  }

  isLeader(): boolean {
    return this.serving && this.raftNode !== null && this.raftNode.isLeader();
  }

  /**
   * Serving for less than `graceMs` after a transfer elected it: a request arriving now may have been answered
   * by the predecessor just before it handed over (it answers or asks again whatever it saw).
   */
  takingOver(graceMs: number, nowMs: number = performance.now()): boolean {
    return this.serving && this.servingByTransfer && nowMs - this.servingSinceMs < graceMs;
  }

  /** Handed leadership over less than `windowMs` ago: it covers what its successor leaves to it (takingOver). */
  handedOverWithin(windowMs: number, nowMs: number = performance.now()): boolean {
    return !this.serving && nowMs - this.handedOverAtMs < windowMs;
  }

  /** Leads and no other member can lead now (its Raft leader lease): it may answer API requests. */
  holdsLease(): boolean {
    return this.isLeader() && this.raftNode!.holdsLease();
  }

  /** A STREAM.LEADER.STEPDOWN transfer is under way: the target may lead (and answer requests) any moment. */
  get handingOverLeadership(): boolean {
    return this.handingOver;
  }

  /**
   * The group's leader as requests see it. A Raft leader not serving yet (still applying its predecessors'
   * entries, one commit round after its election) counts as none here, so this member answers STREAM.INFO
   * with its own view meanwhile: its followers already follow it and stay silent.
   */
  leaderId(): NodeId {
    const leader = this.raftNode?.core.leader ?? NONE;
    return leader === this.selfId && !this.serving ? NONE : leader;
  }

  /**
   * STREAM.LEADER.STEPDOWN: hand leadership to the most caught-up member heard from recently (a random one
   * among equals). Publishing stops at
   * once (clients get no-responders and retry against the new leader); requests are still answered here until
   * the leadership has moved (or the hand-over is given up), and a repeated request meanwhile answers success.
   */
  stepDown(): ApiError | null {
    const node = this.raftNode;
    if (node === null || !node.isLeader()) return unavailableError();
    if (this.handingOver) return null;
    const others = node.core.config().voters.filter((v) => v !== this.selfId);
    if (others.length === 0) return null; // R1: nothing to hand over (nats-server 2.9.10 answers success)
    const match = node.peerMatch();
    const windowMs = this.currentWindowMs();
    const live = others.filter((p) => node.peerSilenceMs(p) < windowMs);
    if (live.length === 0) return noReplacementPeerError();
    // The most caught-up member; among equals any (as nats-server), so repeated step-downs visit every replica.
    const best = Math.max(...live.map((p) => match.get(p) ?? 0));
    const top = live.filter((p) => (match.get(p) ?? 0) === best);
    const target = top[Math.floor(Math.random() * top.length)]!;
    const serving = this.serving;
    if (serving) this.pausePublishing();
    if (!node.transferLeadership(target)) {
      if (serving) this.resumePublishing();
      return noReplacementPeerError();
    }
    // Raft drops the transfer after an election timeout; serve publishes again soon after, if still leader.
    const giveUpMs = this.timings.tickMs * (this.timings.electionTicks + 2);
    if (this.transferTimer !== null) clearTimeout(this.transferTimer);
    this.transferTimer = setTimeout(() => {
      this.transferTimer = null;
      if (this.raftNode?.isLeader() !== true) return;
      if (this.handingOver) this.resumePublishing();
      else if (!this.serving) {
        this.serveAfterIndex = this.raftNode.core.log.lastIndex();
        this.maybeServe();
      }
    }, giveUpMs);
    this.transferTimer.unref();
    return null;
  }

  private pausePublishing(): void {
    this.handingOver = true;
    this.stream.setServing(false);
    this.publisher.deactivate();
    this.host.log.info({ stream: this.name, group: this.current.group }, 'stream leader handing over');
  }

  private resumePublishing(): void {
    if (!this.handingOver || !this.serving || this.stopped) return;
    this.handingOver = false;
    this.publisher.activate();
    this.stream.setServing(true);
    this.host.log.info({ stream: this.name, group: this.current.group }, 'stream leader hand-over given up; publishing again');
  }

  /** A consumer-replication entry through this stream's group; resolves once committed and applied here. */
  proposeConsumerEntry(payload: Buffer): Promise<void> {
    return this.publisher.proposeRaw(payload);
  }

  // ---- assignment changes -----------------------------------------------------------------------

  /** New config and/or peers from the meta catalogue. Peer changes are made by the leader, one at a time. */
  async update(assignment: StreamAssignment): Promise<void> {
    const old = this.current;
    this.current = assignment;
    if (JSON.stringify(old.config) !== JSON.stringify(assignment.config)) await this.stream.updateConfig(assignment.config);
    if (JSON.stringify(old.peers) !== JSON.stringify(assignment.peers)) this.reconcileMembership();
  }

  private reconcileMembership(): void {
    if (this.membershipRun !== null) {
      this.membershipDirty = true;
      return;
    }
    this.membershipRun = this.runMembership().finally(() => {
      this.membershipRun = null;
      if (this.stopped) return;
      if (this.membershipDirty) {
        this.membershipDirty = false;
        this.reconcileMembership();
      } else if (this.raftNode?.isLeader() === true && this.nextMembershipChange() !== null) {
        // Steps left (a learner still catching up, say): try again later rather than spin.
        setTimeout(() => this.reconcileMembership(), MEMBERSHIP_RETRY_MS).unref();
      }
    });
  }

  private async runMembership(): Promise<void> {
    const pauseMs = this.timings.tickMs * 2;
    for (let step = 0; step < MAX_MEMBERSHIP_STEPS && !this.stopped; step++) {
      const node = this.raftNode;
      if (node === null || !node.isLeader()) return;
      const change = this.nextMembershipChange();
      if (change === 'wait') {
        await sleep(pauseMs);
        continue;
      }
      if (change === null) return;
      try {
        await node.changeMembership(change);
        this.host.log.info({ stream: this.name, change: change.type, node: change.nodeId }, 'stream group membership changed');
      } catch {
        await sleep(pauseMs);
      }
    }
  }

  /** Add missing peers first (as learners, promoted once caught up), then remove others, self last. */
  private nextMembershipChange(): ConfChange | 'wait' | null {
    const config = this.raft.core.config();
    const wanted = new Set(this.current.peers);
    const members = [...config.voters, ...config.learners];
    const missing = this.current.peers.find((p) => !members.includes(p));
    if (missing !== undefined) return { type: 'addLearner', nodeId: missing };
    if (config.learners.some((l) => wanted.has(l))) return 'wait';
    const extra = members.find((m) => !wanted.has(m) && m !== this.selfId);
    if (extra !== undefined) return { type: 'remove', nodeId: extra };
    if (!wanted.has(this.selfId) && members.includes(this.selfId)) return { type: 'remove', nodeId: this.selfId };
    return null;
  }

  // ---- monitoring -------------------------------------------------------------------------------

  status(): RaftGroupStatus {
    const node = this.raft;
    const st = node.status();
    const config = node.core.config();
    const peers = this.peersById();
    const leading = st.role === 'leader';
    const match = leading ? node.peerMatch() : new Map<NodeId, number>();
    const now = performance.now();
    const windowMs = this.currentWindowMs();
    const replicas: RaftGroupStatus['replicas'] = [];
    for (const id of [...config.voters, ...config.learners]) {
      if (id === this.selfId) continue;
      const silence = node.peerSilenceMs(id, now);
      const activeAgoMs = Number.isFinite(silence) ? silence : now - this.openedAtMs;
      const lag = leading ? Math.max(0, st.commit - (match.get(id) ?? 0)) : 0;
      const heard = silence < windowMs;
      // Under load a healthy follower trails the commit index by the appends in flight to it.
      const current = leading ? heard && lag <= CURRENT_MAX_LAG_ENTRIES : id === st.leader && heard;
      const peer = peers.get(id);
      replicas.push({ raftNodeId: id, name: peer?.name ?? String(id), current, offline: peer !== undefined && !peer.active, activeAgoMs, lag });
    }
    return {
      group: this.current.group,
      kind: 'stream',
      stream: this.name,
      role: groupRoleOf(st.role),
      term: st.term,
      commit: st.commit,
      applied: st.applied,
      leader: st.leader,
      leaderChanges: this.leaderChanges,
      replicas,
    };
  }

  clusterInfo(): ReplicaClusterBlock {
    // As leaderId(): a leader not serving yet answers as a member that sees no leader (no `leader` in the block),
    // so nobody (the create path's probe included) takes its answer for a serving leader's.
    const status = { ...this.status(), leader: this.leaderId() };
    const leaderSinceMs = this.serving && status.leader === this.selfId ? this.servingSinceWallMs : undefined;
    return clusterBlockOf(this.host.env.clusterName, this.selfId, status, this.peersById(), leaderSinceMs);
  }

  private peersById(): Map<NodeId, ClusterPeer> {
    const out = new Map<NodeId, ClusterPeer>();
    for (const p of this.host.env.peers()) out.set(p.raftNodeId, p);
    return out;
  }

  private currentWindowMs(): number {
    return this.timings.tickMs * this.timings.electionTicks * CURRENT_WITHIN_ELECTIONS;
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  /** Leaves the group on this node for now; data and Raft log stay for a restart. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.transferTimer !== null) clearTimeout(this.transferTimer);
    this.transferTimer = null;
    this.unserve();
    await this.raftNode?.stop();
    this.stream.stop();
    await this.membershipRun?.catch(() => undefined);
    await this.stream.store.flush().catch(() => undefined);
    await this.stream.store.close().catch(() => undefined);
  }

  /** Stops and deletes the stream's data and this group's Raft log on this node. */
  async destroy(): Promise<void> {
    await this.stop();
    await this.host.env.raftStore.drop(this.current.group);
    await rm(this.stream.dir, { recursive: true, force: true });
  }
}

function openReplicaStore(cfg: StreamConfig, dir: string, syncIntervalMs: number): Promise<MessageStore> {
  const limits = storeLimitsOf(cfg);
  if (cfg.storage === 'memory') return Promise.resolve(new MemoryStore({ limits, messageTtl: messageTtlNs }));
  // A failed write is not rolled back: the store must not fall behind what the group applied (the log replays it after a restart).
  return FileStore.open({ dir: messagesDir(dir), limits, messageTtl: messageTtlNs, sync: { intervalMs: syncIntervalMs }, writeDelayMs: STORE_WRITE_DELAY_MS, recoverFailedWrites: false });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
