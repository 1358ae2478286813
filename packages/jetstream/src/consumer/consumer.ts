// One consumer: its state machine plus the delivery engine (pull requests or a push deliver subject),
// ack processing, redelivery timers, flow control and heartbeats.
import { formatTimeNs, nowNs } from '../api/time-format.js';
import { subjectMatchesFilter } from '@flotilla/protocol';
import { bigNsToMs, nsToMs, type StoredMessage } from '@flotilla/store';
import type { BusMessage } from '../message-bus.js';
import type { JetStreamContext } from '../jetstream-context.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import { AckReplyReader, ackReplyPrefix, formatAckReply } from './ack-reply.js';
import type { Clock } from './clock.js';
import { consumerFilters, isPushConfig, orderedConfig, type ConsumerConfig } from './consumer-config.js';
import { ConsumerState, type ApplyResult, type ConsumerEntry, type ConsumerStateSnapshot } from './consumer-state.js';
import type { ConsumerMeta, ConsumerStorage } from './consumer-state-placement.js';
import { goDuration } from './consumer-errors.js';
import { ackKind, parseNakDelayMs } from './ack-body.js';
import { startPosition } from './start-position.js';
import { FlowControlWindow } from './flow-control.js';
import { PullRequestQueue, parsePullRequest, type PullRequest } from './pull-request.js';
import { randomId } from './random-id.js';
import { ackSampled, CONSUMER_ACK_METRIC_PREFIX, consumerAckMetricEvent, samplePercentOf } from '../advisories/jetstream-events.js';
import * as S from './status-headers.js';
import { dynamicMetadata, requiredApiLevelError } from '../api/api-level.js';
import { isPausedAt, pauseAdvisory, pauseInfo, pauseUntilMs } from './consumer-pause.js';
import {
  PinnedClient,
  overflowAllows,
  pinDecision,
  pinnedAdvisory,
  pullPriorityRefusal,
  unpinnedAdvisory,
} from './priority-groups.js';

/** What the consumer needs from its owner (the ConsumerService). */
export interface ConsumerHost {
  ctx: JetStreamContext;
  clock: Clock;
  /** Messages this consumer settled (acked/termed; ack none: delivered) — retention decides removal. */
  settled(consumer: Consumer, seqs: readonly number[], subjects: ReadonlyMap<number, string>): void;
  /** The consumer saw no interest for inactive_threshold. */
  inactive(consumer: Consumer): void;
  /** Cluster: ConsumerInfo's `cluster` block (undefined on a single node: none is shown). */
  clusterInfo?(consumer: Consumer): object | undefined;
  /** CONSUMER.RESET moved the ack floor forward past `fromSeq`: interest retention may remove what nobody needs. */
  skippedForward?(consumer: Consumer, fromSeq: number): Promise<void>;
}

/** New messages read ahead per store read. */
const READ_AHEAD = 256;
/** Read-ahead messages taken when the next read-ahead starts in the background. */
const PREFETCH_AT = READ_AHEAD / 2;
/** Deliveries per pump turn before yielding the event loop. */
const MAX_DELIVERIES_PER_TURN = 4096;
/** Delivery rounds per turn, even when rounds deliver nothing (a kick re-armed while dropping candidates). */
const MAX_ROUNDS_PER_TURN = 64;
/** How often a push consumer without interest looks again. */
const INTEREST_POLL_MS = 100;
/** deliverPaced: the candidate waits for its pacing time. */
const PACED = -1;

interface Candidate {
  msg: StoredMessage;
  count: number;
  redelivery: boolean;
  /** From the last_per_subject start list (counted there, not in numPending). */
  lastPerSubject?: boolean;
}

export class Consumer {
  readonly state: ConsumerState;
  filters: string[];
  private readonly ackPrefix: string;
  /** Scratch for onAck's subject tokens (acks are handled one at a time, synchronously). */
  private readonly ackTokens = new AckReplyReader();
  private readonly waiting: PullRequestQueue | null;
  private unsubscribers: Array<() => void> = [];
  private closed = false;

  // Delivery engine.
  private pumping = false;
  private kickAgain = false;
  /** Set by deliverInMemory: the next candidate has to be read from the store (the async pump's work). */
  private storeNeeded = false;
  /** Read-ahead messages; those before readAheadPos are taken (no shift() per message). */
  private readAhead: StoredMessage[] = [];
  private readAheadPos = 0;
  private readonly readyScratch: Candidate = { msg: null as unknown as StoredMessage, count: 1, redelivery: false };
  /** The read-ahead after this one, read while this one is delivered (startPrefetch). */
  private prefetch: { from: number; read: Promise<StoredMessage[]> } | null = null;
  private readonly redeliverQueue: number[] = [];
  private readonly queuedForRedelivery = new Set<number>();
  private readonly nakDeadlines = new Map<number, number>();
  /** Subjects of pending messages, kept only when retention needs them. */
  private readonly pendingSubjects: Map<number, string> | null;
  /** Matching messages at or after state.sseq not yet delivered (nats-server's npc). */
  private numPending = 0;
  /** last_per_subject start: the sequences still to deliver before normal order resumes. */
  private lastPerSubject: number[] = [];
  private lastPerSubjectResume = 0;

  // Timers.
  private cancelAckTimer: (() => void) | null = null;
  private ackTimerAtMs = 0;
  private cancelWaitTimer: (() => void) | null = null;
  private cancelHeartbeat: (() => void) | null = null;
  private cancelInterestPoll: (() => void) | null = null;
  private cancelPacing: (() => void) | null = null;
  private cancelInactive: (() => void) | null = null;
  /** Runs at pause_until: the pause advisory, then deliveries resume. */
  private cancelPauseTimer: (() => void) | null = null;
  /** headRequest found requests but the priority rules passed over each of them. */
  private requestsPassedOver = false;
  /** pinned_client policy: the group's pin (the leader's alone). */
  private readonly pin: PinnedClient;

  // Push flow control, pacing and activity.
  private readonly flowControl: FlowControlWindow;
  private nextSendAtMs = 0;
  private lastReplayTsNs = 0n;
  private lastReplaySentMs = 0;
  private lastDeliveryMs: number;
  private lastActivityMs: number;
  private noInterestSinceMs = 0;
  private pushBound = false;

  constructor(
    private readonly host: ConsumerHost,
    readonly stream: StreamHandle,
    readonly name: string,
    public config: ConsumerConfig,
    readonly created: string,
    private readonly storage: ConsumerStorage,
  ) {
    this.state = new ConsumerState(config.ack_policy);
    this.filters = consumerFilters(config);
    this.ackPrefix = ackReplyPrefix(stream.name, name);
    this.flowControl = new FlowControlWindow(`$JS.FC.${stream.name}.${name}.`);
    this.waiting = isPushConfig(config) ? null : new PullRequestQueue(config.max_waiting ?? 512);
    this.pendingSubjects = stream.config.retention === 'limits' ? null : new Map();
    this.lastDeliveryMs = host.clock.nowMs();
    this.lastActivityMs = this.lastDeliveryMs;
    this.pin = new PinnedClient(host.clock, (group) => {
      this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.${this.stream.name}.${this.name}`, unpinnedAdvisory(this.advisoryBase(), group, 'timeout'));
      this.kick();
    });
  }

  get isPush(): boolean {
    return this.waiting === null;
  }
  get isDurable(): boolean {
    return this.config.durable_name !== undefined;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  private get ctx(): JetStreamContext {
    return this.host.ctx;
  }
  private get clock(): Clock {
    return this.host.clock;
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  /** Sets the start position from deliver_policy (new consumers) or restores saved state. */
  async initPosition(saved: ConsumerStateSnapshot | null): Promise<void> {
    if (saved) {
      this.state.restore(saved);
      const nowMs = this.clock.nowMs();
      for (const [, p] of this.state.pending) if (p.tsMs > nowMs) p.tsMs = nowMs;
    } else {
      const start = await startPosition(this.stream.store, this.config, this.filters);
      this.state.sseq = start.sseq;
      this.state.asflr = start.sseq - 1;
      this.lastPerSubject = start.lastPerSubject;
      const n = start.lastPerSubject.length;
      this.lastPerSubjectResume = n > 0 ? start.lastPerSubject[n - 1]! + 1 : 0;
    }
    this.recountPending();
  }

  saveMeta(): Promise<void> {
    return this.storage.saveMeta(this.meta());
  }

  /** What identifies and configures this consumer (meta.json, the `meta` replication entry). */
  meta(): ConsumerMeta {
    return { stream_name: this.stream.name, name: this.name, created: this.created, config: this.config };
  }

  /** Subscribes for acks (and flow control) and starts delivering. */
  start(): void {
    const bus = this.ctx.bus;
    this.unsubscribers.push(bus.subscribe(`${this.ackPrefix}>`, (m) => this.onAck(m)));
    if (this.isPush) {
      this.unsubscribers.push(bus.subscribe(`$JS.FC.${this.stream.name}.${this.name}.*`, (m) => this.onFlowControlReply(m)));
      this.pushBound = bus.hasClientInterest(this.config.deliver_subject!);
      if (this.config.idle_heartbeat) this.scheduleHeartbeat();
    }
    this.scheduleAckTimer();
    this.scheduleInactivityCheck();
    this.schedulePauseEnd();
    this.kick();
  }

  /** Stops timers and subscriptions; `deleted` also answers waiting pulls with 409 Consumer Deleted. */
  async close(deleted: boolean): Promise<void> {
    if (!this.shutdown(deleted ? S.CONSUMER_DELETED : null)) return;
    if (deleted) await this.storage.remove();
    else await this.storage.close();
  }

  /**
   * Cluster: this node stops running the consumer (leadership moved, or the stream goes away) and stores
   * nothing more; waiting pulls get `status` (409 Leadership Change / 409 Consumer Deleted).
   */
  release(status: Uint8Array): void {
    if (this.shutdown(status)) this.storage.abandon();
  }

  /** Stops subscriptions and timers, answers waiting pulls with `status`; false if already closed. */
  private shutdown(status: Uint8Array | null): boolean {
    if (this.closed) return false;
    this.closed = true;
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
    for (const c of [this.cancelAckTimer, this.cancelWaitTimer, this.cancelHeartbeat, this.cancelInterestPoll, this.cancelPacing, this.cancelInactive, this.cancelPauseTimer]) c?.();
    this.pin.unassign();
    if (this.waiting) {
      for (const req of this.waiting.clear()) {
        if (status !== null) this.ctx.bus.publish(req.reply, null, status, EMPTY);
      }
    }
    return true;
  }

  /** Config change from an update (allowed fields only; validated by the caller). */
  updateConfig(next: ConsumerConfig): void {
    const prevDeliver = this.config.deliver_subject;
    const prevPauseMs = pauseUntilMs(this.config.pause_until);
    const prevPolicy = this.config.priority_policy;
    this.config = next;
    if (next.priority_policy !== prevPolicy) this.pin.unassign();
    if (pauseUntilMs(next.pause_until) !== prevPauseMs) {
      // As 2.14's updateConfig: the pause changed (CONSUMER.PAUSE, or an update with pause_until).
      this.schedulePauseEnd();
      this.sendPauseAdvisory();
    }
    if (next.deliver_subject !== prevDeliver) this.pushBound = this.ctx.bus.hasClientInterest(next.deliver_subject!);
    const filters = consumerFilters(next);
    if (filters.join('\u0000') !== this.filters.join('\u0000')) {
      // New filters (2.10 allows it): read ahead again from the current position with them.
      this.filters = filters;
      this.dropReadAhead();
      this.recountPending();
    }
    this.scheduleInactivityCheck();
    this.kick();
  }

  // ---- info ---------------------------------------------------------------------------------------

  info(): Record<string, unknown> {
    if (!this.closed) this.recountPending();
    const st = this.state;
    const delivered: Record<string, unknown> = { consumer_seq: st.dseq - 1, stream_seq: st.sseq - 1 };
    if (st.lastDeliveredMs > 0) delivered['last_active'] = new Date(st.lastDeliveredMs).toISOString();
    const ackFloor: Record<string, unknown> = { consumer_seq: st.adflr, stream_seq: st.asflr };
    if (st.lastAckedMs > 0) ackFloor['last_active'] = new Date(st.lastAckedMs).toISOString();
    const out: Record<string, unknown> = {
      stream_name: this.stream.name,
      name: this.name,
      created: this.created,
      config: { ...orderedConfig(this.config), metadata: dynamicMetadata(this.config.metadata) },
      delivered,
      ack_floor: ackFloor,
      num_ack_pending: st.pending.size,
      num_redelivered: st.redelivered.size,
      num_waiting: this.waiting ? this.liveWaitingCount() : 0,
      num_pending: this.numPending + this.lastPerSubject.length,
    };
    const cluster = this.host.clusterInfo?.(this);
    if (cluster) out['cluster'] = cluster;
    if (this.isPush && this.ctx.bus.hasClientInterest(this.config.deliver_subject!)) out['push_bound'] = true;
    Object.assign(out, pauseInfo(this.config.pause_until, this.clock.nowMs()));
    out['ts'] = formatTimeNs(nowNs());
    // 2.14 reports the first (its only) group.
    const group = this.config.priority_groups?.[0];
    if (group !== undefined) out['priority_groups'] = [this.pin.state(group)];
    return out;
  }

  // ---- pause and pin ------------------------------------------------------------------------------

  /** While paused nothing is delivered (pull requests wait); at the deadline the advisory, then delivery. */
  private schedulePauseEnd(): void {
    this.cancelPauseTimer?.();
    this.cancelPauseTimer = null;
    if (this.closed) return;
    const untilMs = pauseUntilMs(this.config.pause_until);
    const now = this.clock.nowMs();
    if (untilMs === 0 || now >= untilMs) return;
    this.cancelPauseTimer = this.clock.setTimer(() => {
      this.cancelPauseTimer = null;
      // A timer may fire a little early: look again.
      if (this.clock.nowMs() < untilMs) return this.schedulePauseEnd();
      this.sendPauseAdvisory();
      this.kick();
    }, untilMs - now);
  }

  private sendPauseAdvisory(): void {
    this.ctx.advisory(
      `$JS.EVENT.ADVISORY.CONSUMER.PAUSE.${this.stream.name}.${this.name}`,
      pauseAdvisory(this.advisoryBase(), this.config.pause_until, this.clock.nowMs()),
    );
  }

  private isPaused(): boolean {
    return this.config.pause_until !== undefined && isPausedAt(this.config.pause_until, this.clock.nowMs());
  }

  /**
   * `$JS.API.CONSUMER.RESET` (2.14's resetStartingSeq): back to the ack floor (`seq` 0) or to `seq` where the
   * deliver policy allows it; resolves with the sequence once the state is stored (cluster: committed), or
   * with the reason it is refused.
   */
  async reset(seq: number): Promise<{ resetSeq: number } | { refused: string }> {
    const cfg = this.config;
    let target = seq;
    if (seq === 0) target = this.state.asflr + 1;
    else if (cfg.deliver_policy === 'by_start_sequence') {
      if (seq < (cfg.opt_start_seq ?? 0)) return { refused: 'below start seq' };
    } else if (cfg.deliver_policy === 'by_start_time') {
      const from = this.stream.store.seqFromTime(BigInt(Date.parse(cfg.opt_start_time!)) * 1_000_000n);
      if (seq < from) return { refused: 'below start time' };
    } else if (cfg.deliver_policy !== 'all') return { refused: 'not allowed' };
    if (target <= 0) target = 1;
    const previousFloor = this.state.asflr;
    this.state.apply({ op: 'reset', sseq: target });
    this.redeliverQueue.length = 0;
    this.queuedForRedelivery.clear();
    this.nakDeadlines.clear();
    this.pendingSubjects?.clear();
    this.lastPerSubject = [];
    this.dropReadAhead();
    this.recountPending();
    this.storage.stateChanged();
    await this.flushState();
    this.kick();
    // 2.14 checks an interest stream's state after a reset (checkStateForInterestStream).
    if (target - 1 > previousFloor) await this.host.skippedForward?.(this, previousFloor + 1);
    return { resetSeq: target };
  }

  /** `$JS.API.CONSUMER.UNPIN`: false when `group` is not one of the consumer's. */
  unpin(group: string): boolean {
    if (!(this.config.priority_groups ?? []).includes(group)) return false;
    this.pin.unassign();
    this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.${this.stream.name}.${this.name}`, unpinnedAdvisory(this.advisoryBase(), group, 'admin'));
    this.kick();
    return true;
  }

  private liveWaitingCount(): number {
    let n = 0;
    const now = this.clock.nowMs();
    for (const r of this.waiting!.all()) if (r.expiresAtMs === 0 || r.expiresAtMs > now) n++;
    return n;
  }

  /** True when a deliver subject has a subscriber right now (push re-bind checks). */
  hasDeliveryInterest(): boolean {
    return this.isPush && this.ctx.bus.hasClientInterest(this.config.deliver_subject!);
  }

  /** nats-server's needAck for interest retention. */
  needsAck(sseq: number, subject: string): boolean {
    if (!this.matches(subject)) return false;
    return this.state.needsAck(sseq);
  }

  matches(subject: string): boolean {
    const f = this.filters;
    if (f.length === 0) return true;
    for (let i = 0; i < f.length; i++) if (subjectMatchesFilter(subject, f[i]!)) return true;
    return false;
  }

  // ---- stream events ------------------------------------------------------------------------------

  onStored(seq: number, subject: string): void {
    if (this.closed || seq < this.state.sseq || !this.matches(subject)) return;
    if (this.lastPerSubject.length === 0) this.numPending++;
    this.kick();
  }

  /** Purge / delete: move past vanished messages and recount. */
  onPurged(): void {
    const st = this.stream.store.state();
    const first = st.messages > 0 ? st.first_seq : st.last_seq + 1;
    if (this.state.sseq < first) this.apply({ op: 'skip', sseq: first });
    this.dropReadAhead();
    this.lastPerSubject = this.lastPerSubject.filter((s) => s >= first);
    this.recountPending();
    this.kick();
  }

  private recountPending(): void {
    const store = this.stream.store;
    const from = this.lastPerSubject.length > 0 ? this.lastPerSubject[this.lastPerSubject.length - 1]! + 1 : this.state.sseq;
    if (from < 1) return;
    if (this.filters.length === 0) {
      this.numPending = store.filteredState('', from).msgs;
    } else {
      let n = 0;
      for (const f of this.filters) n += store.filteredState(f, from).msgs;
      this.numPending = n;
    }
  }

  // ---- state changes -------------------------------------------------------------------------------

  apply(entry: ConsumerEntry): ApplyResult {
    const result = this.state.apply(entry);
    this.storage.stateChanged();
    return result;
  }

  flushState(): Promise<void> {
    return this.storage.flush();
  }

  /** Stores the current state now (cluster: a new consumer's start position reaches the followers). */
  persistState(): Promise<void> {
    this.storage.stateChanged();
    return this.storage.flush();
  }

  // ---- pull requests ------------------------------------------------------------------------------

  /** `CONSUMER.MSG.NEXT` (or `+NXT`): validates and queues a request (§12). */
  onPullRequest(reply: string | null, body: Uint8Array, header: Uint8Array | null = null): void {
    if (reply === null || this.closed) return;
    const bus = this.ctx.bus;
    if (this.waiting === null) {
      bus.publish(reply, null, S.CONSUMER_IS_PUSH, EMPTY);
      return;
    }
    // 2.14's processNextMsgReq: a pull that needs a newer API level is answered with a status, not queued.
    if (header !== null && requiredApiLevelError(header) !== null) {
      bus.publish(reply, null, S.REQUIRED_API_LEVEL, EMPTY);
      return;
    }
    const parsed = parsePullRequest(body);
    if ('error' in parsed) {
      bus.publish(reply, null, S.status(400, `Bad Request - ${parsed.error}`), EMPTY);
      return;
    }
    const cfg = this.config;
    const batch = parsed.batch <= 0 ? 1 : parsed.batch;
    if (cfg.max_batch && batch > cfg.max_batch) {
      bus.publish(reply, null, S.status(409, `Exceeded MaxRequestBatch of ${cfg.max_batch}`), EMPTY);
      return;
    }
    if (parsed.expiresNs > 0 && cfg.max_expires && parsed.expiresNs > cfg.max_expires) {
      bus.publish(reply, null, S.status(409, `Exceeded MaxRequestExpires of ${goDuration(cfg.max_expires)}`), EMPTY);
      return;
    }
    if (parsed.maxBytes > 0 && cfg.max_bytes && parsed.maxBytes > cfg.max_bytes) {
      bus.publish(reply, null, S.status(409, `Exceeded MaxRequestMaxBytes of ${cfg.max_bytes}`), EMPTY);
      return;
    }
    const refusal = pullPriorityRefusal(cfg, parsed.priority, this.pin.id);
    if (refusal !== null) {
      bus.publish(reply, null, S.status(refusal.code, refusal.text), EMPTY);
      return;
    }
    // The pin's holder pulled again: it keeps the pin for another priority_timeout.
    if (this.pin.id !== '' && parsed.priority !== undefined && parsed.priority.id === this.pin.id) {
      this.pin.touch(parsed.priority.group, cfg.priority_timeout ?? 0);
    }
    const now = this.clock.nowMs();
    this.lastActivityMs = now;
    if (this.waiting.isFull()) this.expireWaiting(now, false);
    if (parsed.noWait) {
      const available = this.numPending + this.lastPerSubject.length + this.redeliverQueue.length;
      if (available === 0 && parsed.expiresNs === 0) {
        bus.publish(reply, null, S.NO_MESSAGES, EMPTY);
        return;
      }
      if (available > 0 && available < this.waiting.pendingBatch()) {
        bus.publish(reply, null, S.REQUESTS_PENDING, EMPTY);
        return;
      }
    }
    const heartbeatMs = Math.floor(nsToMs(parsed.heartbeatNs));
    const req: PullRequest = {
      reply,
      batch,
      maxBytes: parsed.maxBytes,
      noWait: parsed.noWait,
      expiresAtMs: parsed.expiresNs > 0 ? now + nsToMs(parsed.expiresNs) : 0,
      heartbeatMs,
      nextHeartbeatAtMs: heartbeatMs > 0 ? now + heartbeatMs : 0,
      delivered: 0,
      receivedAtMs: now,
    };
    if (parsed.priority !== undefined && cfg.priority_policy !== undefined) req.priority = parsed.priority;
    const added = cfg.priority_policy === 'prioritized' ? this.waiting.addSorted(req) : this.waiting.add(req);
    if (!added) {
      bus.publish(reply, null, S.EXCEEDED_MAX_WAITING, EMPTY);
      return;
    }
    if (req.expiresAtMs > 0 || req.heartbeatMs > 0) this.scheduleWaitTimer();
    this.kick();
  }

  /**
   * Expires timed-out requests (408 with the unfilled batch), drops those whose reply lost interest, sends
   * due heartbeats. `endOfStream` also ends no_wait requests that already got messages.
   */
  private expireWaiting(now: number, endOfStream: boolean): void {
    const q = this.waiting;
    if (!q || q.length === 0) return;
    const bus = this.ctx.bus;
    for (const req of [...q.all()]) {
      if (req.expiresAtMs > 0 && now >= req.expiresAtMs) {
        bus.publish(req.reply, null, S.requestTimeout(req.batch, req.maxBytes), EMPTY);
        q.remove(req);
        continue;
      }
      // A no_wait request that got messages ends at the end of the stream; one with `expires` and
      // nothing yet waits for its expiry, as on nats-server.
      if (req.noWait && endOfStream && (req.delivered > 0 || req.expiresAtMs === 0)) {
        bus.publish(req.reply, null, req.delivered > 0 ? S.requestTimeout(req.batch, req.maxBytes) : S.NO_MESSAGES, EMPTY);
        q.remove(req);
        continue;
      }
      if (!bus.hasInterest(req.reply)) {
        q.remove(req);
        continue;
      }
      if (req.heartbeatMs > 0 && now >= req.nextHeartbeatAtMs) {
        bus.publish(req.reply, null, S.idleHeartbeat(this.state.dseq - 1, this.state.sseq - 1), EMPTY);
        req.nextHeartbeatAtMs = now + req.heartbeatMs;
      }
    }
  }

  private scheduleWaitTimer(): void {
    if (!this.waiting || this.closed) return;
    this.cancelWaitTimer?.();
    this.cancelWaitTimer = null;
    let next = Infinity;
    for (const r of this.waiting.all()) {
      if (r.expiresAtMs > 0) next = Math.min(next, r.expiresAtMs);
      if (r.heartbeatMs > 0) next = Math.min(next, r.nextHeartbeatAtMs);
    }
    if (next === Infinity) return;
    this.cancelWaitTimer = this.clock.setTimer(() => {
      this.cancelWaitTimer = null;
      this.expireWaiting(this.clock.nowMs(), false);
      this.scheduleWaitTimer();
    }, next - this.clock.nowMs());
  }

  // ---- delivery -------------------------------------------------------------------------------------

  /** Asks the engine to look for work; coalesces while a pump is running. */
  kick(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.kickAgain = true;
      return;
    }
    // A pull consumer without requests has nothing to do (every ack kicks): no pump, no promises.
    if (this.waiting !== null && this.waiting.length === 0) return;
    this.pumping = true;
    // What is in memory goes out synchronously (an ack that frees a max_ack_pending slot, a pull request
    // served from read-ahead); the async pump runs only when the store has to be read.
    let delivered = 0;
    let needStore = false;
    try {
      for (let round = 1; ; round++) {
        this.kickAgain = false;
        const n = this.deliverInMemory();
        delivered += n;
        if (this.closed) break;
        if (this.storeNeeded) {
          needStore = true;
          break;
        }
        if (n === 0 && !this.kickAgain) break;
        if (delivered >= MAX_DELIVERIES_PER_TURN || round >= MAX_ROUNDS_PER_TURN) {
          this.kickAgain = true;
          break;
        }
      }
    } catch (err) {
      this.ctx.log.error({ err, stream: this.stream.name, consumer: this.name }, 'consumer delivery failed');
    }
    if (needStore) {
      void this.pump(delivered).catch((err: unknown) => this.ctx.log.error({ err, stream: this.stream.name, consumer: this.name }, 'consumer delivery failed'));
      return;
    }
    this.pumping = false;
    if (this.kickAgain && !this.closed) setImmediate(() => this.kick());
  }

  /**
   * deliverBatch without waiting: delivers while a target and an in-memory candidate are available.
   * Sets storeNeeded when it stopped only because the next candidate has to come from the store.
   */
  private deliverInMemory(): number {
    this.storeNeeded = false;
    let sent = 0;
    const now = this.clock.nowMs();
    for (let guard = 0; guard < MAX_DELIVERIES_PER_TURN; guard++) {
      if (this.closed || !this.canDeliver()) return sent;
      const cand = this.readyCandidate();
      if (cand === null) {
        this.storeNeeded = true;
        return sent;
      }
      const outcome = this.deliverPaced(cand, now);
      if (outcome === PACED) return sent;
      sent += outcome;
    }
    return sent;
  }

  /**
   * Delivers `cand` now, or — when pacing (rate_limit_bps, replay original) holds it until its time — puts it
   * back and schedules the wake-up (PACED: the turn ends). 1 when it went out, 0 when it was dropped.
   */
  private deliverPaced(cand: Candidate, now: number): 0 | 1 | typeof PACED {
    const waitMs = this.pacingDelay(cand, now);
    if (waitMs > 0) {
      this.putBack(cand);
      this.schedulePacing(waitMs);
      return PACED;
    }
    if (this.deliver(cand, now)) return 1;
    // Every waiting request was passed over (pin, overflow thresholds): the turn ends until something changes.
    if (this.requestsPassedOver) {
      this.requestsPassedOver = false;
      return PACED;
    }
    return 0;
  }

  /** `alreadyDelivered`: what kick() sent in this turn before handing over. */
  private async pump(alreadyDelivered: number): Promise<void> {
    try {
      let delivered = alreadyDelivered;
      // Store reads may resolve at once (memory store): without the bounds this would be a microtask chain.
      for (let round = 1; ; round++) {
        this.kickAgain = false;
        const n = await this.deliverBatch();
        delivered += n;
        if (this.closed) return;
        if (n === 0 && !this.kickAgain) return;
        if (delivered >= MAX_DELIVERIES_PER_TURN || round >= MAX_ROUNDS_PER_TURN) {
          this.kickAgain = true;
          return;
        }
      }
    } finally {
      this.pumping = false;
      if (this.kickAgain && !this.closed) setImmediate(() => this.kick());
    }
  }

  /** Delivers while a target and a message are available; returns how many went out. */
  private async deliverBatch(): Promise<number> {
    let sent = 0;
    // One clock read per batch and after each wait: deliveries in between share it.
    let now = this.clock.nowMs();
    for (let guard = 0; guard < READ_AHEAD; guard++) {
      if (this.closed || !this.canDeliver()) return sent;
      let cand = this.readyCandidate();
      if (cand === null) {
        cand = await this.nextCandidate();
        now = this.clock.nowMs();
        if (this.closed) return sent;
        if (cand === null) {
          // End of the stream (not a max_ack_pending stop): one-shot no_wait requests are done.
          if (this.waiting && !this.maxAckPendingReached()) this.expireWaiting(now, true);
          return sent;
        }
        // The wait may have changed what can be delivered.
        if (!this.canDeliver(cand.redelivery)) {
          this.putBack(cand);
          return sent;
        }
      }
      const outcome = this.deliverPaced(cand, now);
      if (outcome === PACED) return sent;
      sent += outcome;
    }
    return sent;
  }

  /** `redelivery`: the candidate in hand is a redelivery, which max_ack_pending does not hold back. */
  private canDeliver(redelivery = false): boolean {
    const cfg = this.config;
    if (this.waiting) {
      if (this.waiting.length === 0) return false;
    } else {
      if (!this.ctx.bus.hasClientInterest(cfg.deliver_subject!)) {
        this.pushBound = false;
        this.startInterestPoll();
        return false;
      }
      this.pushBound = true;
      if (this.flowControl.stalled()) return false;
    }
    if (this.cancelPacing) return false;
    if (this.isPaused()) return false;
    const maxAckPending = cfg.max_ack_pending ?? 0;
    if (cfg.ack_policy !== 'none' && maxAckPending > 0 && this.state.pending.size >= maxAckPending && this.redeliverQueue.length === 0 && !redelivery) {
      return false;
    }
    return true;
  }

  /** The next message to send: redeliveries first, then new messages in stream order. */
  private async nextCandidate(): Promise<Candidate | null> {
    const store = this.stream.store;
    // Bounded by the queue length: every pass removes one entry.
    while (this.redeliverQueue.length > 0) {
      const sseq = this.redeliverQueue.shift()!;
      this.queuedForRedelivery.delete(sseq);
      if (!this.state.pending.has(sseq)) continue;
      const count = this.state.deliveryCount(sseq) + 1;
      const maxDeliver = this.config.max_deliver ?? -1;
      if (maxDeliver > 0 && count > maxDeliver) {
        this.maxDeliveriesReached(sseq, count - 1);
        continue;
      }
      const msg = await store.get(sseq).catch(() => null);
      if (msg === null) {
        // Gone from the stream (limits, purge): nothing left to wait for.
        this.settle(this.apply({ op: 'ack', sseq, dseq: this.state.pending.get(sseq)?.dseq ?? 0 }));
        continue;
      }
      return { msg, count, redelivery: true };
    }
    if (this.maxAckPendingReached()) return null;
    if (this.lastPerSubject.length > 0) {
      for (let guard = this.lastPerSubject.length; guard > 0 && this.lastPerSubject.length > 0; guard--) {
        const seq = this.lastPerSubject.shift()!;
        const msg = await store.get(seq).catch(() => null);
        if (msg !== null) return { msg, count: 1, redelivery: false, lastPerSubject: true };
      }
      this.state.sseq = Math.max(this.state.sseq, this.lastPerSubjectResume);
      this.recountPending();
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const msg = this.takeReadAhead();
      if (msg !== null) return { msg, count: 1, redelivery: false };
      if (attempt === 1) break;
      const prefetched = await this.takePrefetch();
      if (this.closed) return null;
      if (prefetched !== null) {
        this.readAhead = prefetched;
        this.readAheadPos = 0;
        continue;
      }
      // Read before the scan: a message stored while it runs lies above this.
      const scannedTo = store.state().last_seq;
      const fetched = await this.readNew(this.state.sseq);
      if (fetched.length === 0) {
        this.numPending = 0;
        // As nats-server, a filtered consumer's position (delivered.stream_seq) moves past what it scanned.
        if (this.filters.length > 0 && this.state.sseq <= scannedTo) this.apply({ op: 'scan', sseq: scannedTo + 1 });
        return null;
      }
      this.readAhead = fetched;
      this.readAheadPos = 0;
    }
    return null;
  }

  /**
   * The next new message when it is already in memory and nothing comes before it (no redelivery, no
   * last_per_subject start, max_ack_pending not reached): deliverBatch's path without an await.
   */
  private readyCandidate(): Candidate | null {
    if (this.redeliverQueue.length > 0 || this.lastPerSubject.length > 0 || this.maxAckPendingReached()) return null;
    const msg = this.takeReadAhead();
    if (msg === null) return null;
    // One object for every in-memory delivery: a candidate is used at once and never kept (only its msg).
    const c = this.readyScratch;
    c.msg = msg;
    return c;
  }

  /** The next read-ahead message at or after the stream position; stale ones are skipped. */
  private takeReadAhead(): StoredMessage | null {
    const ahead = this.readAhead;
    while (this.readAheadPos < ahead.length) {
      const msg = ahead[this.readAheadPos++]!;
      if (this.readAheadPos === PREFETCH_AT && this.prefetch === null) this.startPrefetch();
      if (msg.seq >= this.state.sseq) return msg;
    }
    return null;
  }

  /**
   * Halfway through a full read-ahead, the next one is read in the background, so the drain does not
   * stop for a store read (a block from disk) every READ_AHEAD messages.
   */
  private startPrefetch(): void {
    const ahead = this.readAhead;
    if (ahead.length < READ_AHEAD) return; // the store had no more then; onStored kicks for new ones
    const from = ahead[ahead.length - 1]!.seq + 1;
    const read = this.readNew(from);
    read.catch(() => undefined); // a dropped prefetch must not be an unhandled rejection
    this.prefetch = { from, read };
  }

  /**
   * The prefetched messages when they continue exactly where delivery stands and some were found; null
   * otherwise (then the store is read from the position as before). A failed read throws here, as readNew.
   */
  private async takePrefetch(): Promise<StoredMessage[] | null> {
    const pf = this.prefetch;
    if (pf === null) return null;
    this.prefetch = null;
    if (pf.from !== this.state.sseq) return null;
    const fetched = await pf.read;
    return fetched.length > 0 && pf.from === this.state.sseq ? fetched : null;
  }

  private dropReadAhead(): void {
    this.readAhead = [];
    this.readAheadPos = 0;
    this.prefetch = null;
  }

  private maxAckPendingReached(): boolean {
    const max = this.config.max_ack_pending ?? 0;
    return this.config.ack_policy !== 'none' && max > 0 && this.state.pending.size >= max;
  }

  private async readNew(from: number): Promise<StoredMessage[]> {
    const store = this.stream.store;
    if (this.filters.length <= 1) return store.readRange(from, READ_AHEAD, this.filters[0]);
    const parts = await Promise.all(this.filters.map((f) => store.readRange(from, READ_AHEAD, f)));
    return parts.flat().sort((a, b) => a.seq - b.seq).slice(0, READ_AHEAD);
  }

  private putBack(c: Candidate): void {
    if (c.redelivery) {
      this.redeliverQueue.unshift(c.msg.seq);
      this.queuedForRedelivery.add(c.msg.seq);
    } else if (c.lastPerSubject) {
      this.lastPerSubject.unshift(c.msg.seq);
    } else if (this.readAheadPos > 0 && this.readAhead[this.readAheadPos - 1] === c.msg) {
      this.readAheadPos--;
    } else {
      this.readAhead = [c.msg, ...this.readAhead.slice(this.readAheadPos)];
      this.readAheadPos = 0;
    }
  }

  private pacingDelay(c: Candidate, now: number): number {
    if (this.config.rate_limit_bps && this.nextSendAtMs > now) return this.nextSendAtMs - now;
    if (this.config.replay_policy === 'original' && !c.redelivery && this.lastReplayTsNs > 0n) {
      const gapMs = bigNsToMs(c.msg.timestampNs - this.lastReplayTsNs);
      const due = this.lastReplaySentMs + gapMs;
      if (due > now) return due - now;
    }
    return 0;
  }

  private schedulePacing(ms: number): void {
    if (this.cancelPacing) return;
    this.cancelPacing = this.clock.setTimer(() => {
      this.cancelPacing = null;
      this.kick();
    }, ms);
  }

  /** Sends one message to the head pull request or the deliver subject; false if it could not. */
  private deliver(c: Candidate, now: number): boolean {
    const { msg } = c;
    const cfg = this.config;
    const bus = this.ctx.bus;
    const size = msg.subject.length + msg.header.length + msg.data.length;
    let target: string;
    let req: PullRequest | null = null;
    if (this.waiting) {
      req = this.headRequest(size, now);
      if (req === null) {
        this.putBack(c);
        return false;
      }
      target = req.reply;
    } else {
      target = cfg.deliver_subject!;
    }
    const dseq = this.state.dseq;
    if (!c.redelivery && !c.lastPerSubject && this.numPending > 0) this.numPending--;
    const pendingAfter = this.numPending + this.lastPerSubject.length;
    const reply = formatAckReply(this.ackPrefix, c.count, msg.seq, dseq, msg.timestampNs, pendingAfter);
    // State first: a synchronous subscriber may ack inside the publish below.
    if (this.pendingSubjects && cfg.ack_policy !== 'none') this.pendingSubjects.set(msg.seq, msg.subject);
    const result = this.state.deliver(msg.seq, dseq, c.count, now);
    this.storage.stateChanged();
    if (cfg.ack_policy !== 'none') this.armAckTimer(now + this.ackWaitMs(c.count));
    let header = cfg.headers_only ? S.headersOnlyBlock(msg.header, msg.data.length) : msg.header.length > 0 ? msg.header : null;
    if (req !== null && cfg.priority_policy === 'pinned_client') header = S.withHeader(header, 'Nats-Pin-Id', this.pin.id);
    const data = cfg.headers_only ? EMPTY : msg.data;
    if (bus.publishTo) bus.publishTo(target, msg.subject, reply, header, data);
    else bus.publish(target, reply, header, data);
    // 2.10: a request whose batch is done with max_bytes to spare is told so.
    if (req !== null && req.batch <= 0 && req.maxBytes > 0) bus.publish(target, null, S.batchCompleted(req.maxBytes), EMPTY);
    if (result.settled.length > 0) this.settle(result, new Map([[msg.seq, msg.subject]]));
    this.lastDeliveryMs = now;
    if (cfg.rate_limit_bps) this.nextSendAtMs = Math.max(this.nextSendAtMs, now) + Math.ceil((size * 8 * 1000) / cfg.rate_limit_bps);
    if (cfg.replay_policy === 'original' && !c.redelivery) {
      this.lastReplayTsNs = msg.timestampNs;
      this.lastReplaySentMs = now;
    }
    if (!this.waiting && cfg.flow_control) this.trackFlowControl(size);
    return true;
  }

  /** The pull request to serve next, applying max_bytes (409) and interest; null if none is left. */
  private headRequest(size: number, now: number): PullRequest | null {
    const q = this.waiting!;
    const bus = this.ctx.bus;
    const policy = this.config.priority_policy;
    let cycled = 0;
    for (let guard = q.length; guard > 0; guard--) {
      const req = q.peek();
      if (req === undefined) return null;
      if (req.expiresAtMs > 0 && now >= req.expiresAtMs) {
        bus.publish(req.reply, null, S.requestTimeout(req.batch, req.maxBytes), EMPTY);
        q.removeHead();
        continue;
      }
      if (!bus.hasInterest(req.reply)) {
        q.removeHead();
        continue;
      }
      // nats-server's nextWaiting: the pin's rules, then overflow's thresholds; a request passed over goes
      // to the back, and once every one was passed over nothing is served.
      let assignedPin = false;
      if (policy === 'pinned_client') {
        const decision = pinDecision(req.priority, this.pin.id);
        if (decision === 'wrong-pin') {
          bus.publish(req.reply, null, S.wrongPinId(req.batch, req.maxBytes), EMPTY);
          q.removeHead();
          continue;
        }
        if (decision === 'skip') {
          q.cycle();
          if (++cycled >= q.length) return this.passedOver();
          continue;
        }
        // A plain (non-JSON) pull has no group: 2.14's assignNewPinId pins nothing for it, and it is served.
        if (decision === 'assign' && req.priority !== undefined && req.priority.group !== '') {
          const group = req.priority.group;
          const id = this.pin.assign(group, this.config.priority_timeout ?? 0);
          req.priority.id = id;
          assignedPin = true;
          this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.PINNED.${this.stream.name}.${this.name}`, pinnedAdvisory(this.advisoryBase(), group, id));
        }
      } else if (policy === 'overflow' && !overflowAllows(req.priority, this.numPending + this.lastPerSubject.length, this.state.pending.size)) {
        q.cycle();
        if (++cycled >= q.length) return this.passedOver();
        continue;
      }
      if (req.maxBytes > 0) {
        if (size > req.maxBytes) {
          bus.publish(req.reply, null, S.maxBytesExceeded(req.batch, req.maxBytes), EMPTY);
          if (assignedPin) this.pin.unassign();
          q.removeHead();
          continue;
        }
        req.maxBytes -= size;
        // Exactly used up: this message is the request's last.
        if (req.maxBytes === 0) req.batch = 1;
      }
      q.popOne(policy === 'prioritized');
      return req;
    }
    return null;
  }

  private passedOver(): null {
    this.requestsPassedOver = true;
    return null;
  }

  private ackWaitMs(count: number): number {
    const backoff = this.config.backoff;
    if (backoff && backoff.length > 0) return nsToMs(backoff[Math.min(count - 1, backoff.length - 1)]!);
    return nsToMs(this.config.ack_wait ?? 30e9);
  }

  // ---- acks ------------------------------------------------------------------------------------------

  private onAck(m: BusMessage): void {
    if (this.closed) return;
    const tokens = this.ackTokens;
    if (!tokens.read(m.subject) || tokens.streamSeq === 0) return;
    const body = m.data;
    const kind = ackKind(body);
    const sseq = tokens.streamSeq;
    const dseq = tokens.consumerSeq;
    if (kind === 'ack' || kind === 'next') this.sampleAck(sseq, dseq, tokens.deliveryCount);
    switch (kind) {
      case 'ack':
        this.processAck(sseq, dseq);
        break;
      case 'nak':
        this.processNak(sseq, body);
        break;
      case 'progress':
        this.processProgress(sseq);
        break;
      case 'term':
        this.processTerm(sseq, dseq, tokens.deliveryCount, body);
        break;
      case 'next':
        this.processAck(sseq, dseq);
        this.onPullRequest(m.reply, body.subarray(4));
        return;
      case 'unknown':
        // nats-server ignores the body but still answers a reply (below)
        break;
    }
    if (m.reply !== null) {
      const reply = m.reply;
      // ack-sync: answer once the acknowledgement is durable (cluster: committed). When it cannot be
      // (leadership lost), no answer: the client times out and retries, as with nats-server.
      void this.storage.flush().then(
        () => this.ctx.bus.publish(reply, null, null, EMPTY),
        () => undefined,
      );
    }
  }

  /** `$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>` for a pending message's ack, at `sample_freq`. */
  private sampleAck(sseq: number, dseq: number, deliveries: number): void {
    if (this.config.ack_policy === 'none' || !ackSampled(samplePercentOf(this.config.sample_freq))) return;
    const pending = this.state.pending.get(sseq);
    if (pending === undefined) return;
    const ackTimeNs = Math.max(0, this.clock.nowMs() - pending.tsMs) * 1e6;
    this.ctx.advisory(
      `${CONSUMER_ACK_METRIC_PREFIX}${this.stream.name}.${this.name}`,
      consumerAckMetricEvent(this.stream.name, this.name, dseq, sseq, Math.round(ackTimeNs), deliveries, this.ctx.options.domain),
    );
  }

  processAck(sseq: number, dseq: number): void {
    if (this.config.ack_policy === 'none') return;
    const subjects = this.pendingSubjects;
    const result = this.state.ack(sseq, dseq);
    this.storage.stateChanged();
    if (result.settled.length > 0) {
      this.state.lastAckedMs = this.clock.nowMs();
      for (const s of result.settled) this.nakDeadlines.delete(s);
      this.settle(result, subjects ?? EMPTY_SUBJECTS);
      this.kick();
    }
  }

  private settle(result: ApplyResult, subjects: ReadonlyMap<number, string> = this.pendingSubjects ?? EMPTY_SUBJECTS): void {
    if (result.settled.length === 0) return;
    this.host.settled(this, result.settled, subjects);
    if (this.pendingSubjects) for (const s of result.settled) this.pendingSubjects.delete(s);
  }

  private processNak(sseq: number, body: Uint8Array): void {
    if (!this.state.pending.has(sseq)) return;
    const delayMs = parseNakDelayMs(body);
    this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.${this.stream.name}.${this.name}`, {
      type: 'io.nats.jetstream.advisory.v1.nak',
      ...this.advisoryBase(),
      consumer_seq: this.state.pending.get(sseq)!.dseq,
      stream_seq: sseq,
      deliveries: this.state.deliveryCount(sseq),
    });
    if (delayMs > 0) {
      const at = this.clock.nowMs() + delayMs;
      this.nakDeadlines.set(sseq, at);
      this.armAckTimer(at);
      return;
    }
    this.nakDeadlines.delete(sseq);
    this.queueRedelivery([sseq]);
  }

  private processProgress(sseq: number): void {
    const p = this.state.pending.get(sseq);
    if (!p) return;
    const now = this.clock.nowMs();
    p.tsMs = now;
    this.nakDeadlines.delete(sseq);
    this.armAckTimer(now + this.ackWaitMs(this.state.deliveryCount(sseq)));
  }

  private processTerm(sseq: number, dseq: number, count: number, body: Uint8Array): void {
    const p = this.state.pending.get(sseq);
    if (!p && this.config.ack_policy !== 'none') return;
    const reason = body.length > 6 ? Buffer.from(body.subarray(6)).toString('utf8').trim() : '';
    const result = this.apply({ op: 'term', sseq, dseq: p?.dseq ?? dseq });
    this.nakDeadlines.delete(sseq);
    this.settle(result);
    this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${this.stream.name}.${this.name}`, {
      type: 'io.nats.jetstream.advisory.v1.terminated',
      ...this.advisoryBase(),
      consumer_seq: dseq,
      stream_seq: sseq,
      deliveries: count,
      ...(reason ? { reason } : {}),
    });
    this.kick();
  }

  private maxDeliveriesReached(sseq: number, deliveries: number): void {
    this.apply({ op: 'drop', sseq });
    this.nakDeadlines.delete(sseq);
    this.pendingSubjects?.delete(sseq);
    this.ctx.advisory(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.stream.name}.${this.name}`, {
      type: 'io.nats.jetstream.advisory.v1.max_deliver',
      ...this.advisoryBase(),
      stream_seq: sseq,
      deliveries,
    });
  }

  private advisoryBase(): Record<string, unknown> {
    return {
      id: randomId(22),
      timestamp: new Date(this.clock.nowMs()).toISOString(),
      stream: this.stream.name,
      consumer: this.name,
      ...(this.ctx.options.domain ? { domain: this.ctx.options.domain } : {}),
    };
  }

  private queueRedelivery(seqs: number[]): void {
    let added = false;
    for (const s of seqs) {
      if (this.queuedForRedelivery.has(s)) continue;
      this.queuedForRedelivery.add(s);
      this.redeliverQueue.push(s);
      added = true;
    }
    if (added) {
      // Stream order, as nats-server sorts expired sequences.
      this.redeliverQueue.sort((a, b) => a - b);
      this.kick();
    }
  }

  // ---- ack wait ---------------------------------------------------------------------------------------

  private armAckTimer(atMs: number): void {
    if (this.closed) return;
    if (this.cancelAckTimer && this.ackTimerAtMs <= atMs) return;
    this.cancelAckTimer?.();
    this.ackTimerAtMs = atMs;
    this.cancelAckTimer = this.clock.setTimer(() => this.checkPending(), atMs - this.clock.nowMs());
  }

  private scheduleAckTimer(): void {
    if (this.config.ack_policy === 'none' || this.state.pending.size === 0) return;
    let next = Infinity;
    for (const [s, p] of this.state.pending) next = Math.min(next, this.deadlineOf(s, p.tsMs));
    if (next < Infinity) this.armAckTimer(next);
  }

  private deadlineOf(sseq: number, tsMs: number): number {
    return this.nakDeadlines.get(sseq) ?? tsMs + this.ackWaitMs(this.state.deliveryCount(sseq));
  }

  /** Timer: every pending message past its deadline goes to the redelivery queue. */
  private checkPending(): void {
    this.cancelAckTimer = null;
    if (this.closed) return;
    const now = this.clock.nowMs();
    const expired: number[] = [];
    let next = Infinity;
    for (const [s, p] of this.state.pending) {
      if (this.queuedForRedelivery.has(s)) continue;
      const deadline = this.deadlineOf(s, p.tsMs);
      if (deadline <= now) expired.push(s);
      else if (deadline < next) next = deadline;
    }
    for (const s of expired) this.nakDeadlines.delete(s);
    if (next < Infinity) this.armAckTimer(next);
    if (expired.length > 0) this.queueRedelivery(expired);
  }

  // ---- push: flow control, heartbeats, interest ---------------------------------------------------------

  private trackFlowControl(size: number): void {
    const request = this.flowControl.delivered(size);
    if (request !== null) this.sendFlowControl(request);
  }

  private sendFlowControl(subject: string): void {
    this.ctx.bus.publish(this.config.deliver_subject!, subject, S.FLOW_CONTROL_REQUEST, EMPTY);
  }

  private onFlowControlReply(m: BusMessage): void {
    const { accepted, next } = this.flowControl.answered(m.subject);
    if (!accepted) return;
    if (next !== null) this.sendFlowControl(next);
    this.kick();
  }

  private scheduleHeartbeat(): void {
    const hbMs = nsToMs(this.config.idle_heartbeat ?? 0);
    if (hbMs <= 0 || this.closed) return;
    const now = this.clock.nowMs();
    const due = Math.max(this.lastDeliveryMs + hbMs, now + 1);
    this.cancelHeartbeat = this.clock.setTimer(() => {
      this.cancelHeartbeat = null;
      if (this.closed) return;
      const t = this.clock.nowMs();
      if (t - this.lastDeliveryMs >= hbMs && this.ctx.bus.hasClientInterest(this.config.deliver_subject!)) {
        // While a flow-control request is unanswered the heartbeat names it (the client answers it too).
        const stalled = this.flowControl.outstandingSubject;
        this.ctx.bus.publish(this.config.deliver_subject!, null, S.idleHeartbeat(this.state.dseq - 1, this.state.sseq - 1, stalled), EMPTY);
        this.lastDeliveryMs = t;
      }
      this.scheduleHeartbeat();
    }, due - now);
  }

  private startInterestPoll(): void {
    if (this.cancelInterestPoll || this.closed) return;
    this.cancelInterestPoll = this.clock.setTimer(() => {
      this.cancelInterestPoll = null;
      if (this.closed) return;
      if (this.ctx.bus.hasClientInterest(this.config.deliver_subject!)) this.kick();
      else this.startInterestPoll();
    }, INTEREST_POLL_MS);
  }

  // ---- inactivity ----------------------------------------------------------------------------------------

  private inactiveThresholdMs(): number {
    const t = this.config.inactive_threshold ?? 0;
    return t > 0 ? nsToMs(t) : 0;
  }

  private scheduleInactivityCheck(): void {
    this.cancelInactive?.();
    this.cancelInactive = null;
    const thresholdMs = this.inactiveThresholdMs();
    if (thresholdMs <= 0 || this.closed) return;
    // Check a few times per threshold so deletion happens within ~1.25x of it.
    const everyMs = Math.max(50, Math.min(thresholdMs / 4, 1000));
    this.cancelInactive = this.clock.setTimer(() => {
      this.cancelInactive = null;
      if (this.closed) return;
      if (this.isInactive(thresholdMs)) {
        this.host.inactive(this);
        return;
      }
      this.scheduleInactivityCheck();
    }, everyMs);
  }

  private isInactive(thresholdMs: number): boolean {
    const now = this.clock.nowMs();
    if (this.isPush) {
      if (this.ctx.bus.hasClientInterest(this.config.deliver_subject!)) {
        this.noInterestSinceMs = 0;
        return false;
      }
      if (this.noInterestSinceMs === 0) this.noInterestSinceMs = now;
      return now - this.noInterestSinceMs >= thresholdMs;
    }
    if (now - this.lastActivityMs < thresholdMs) return false;
    for (const r of this.waiting!.all()) if (this.ctx.bus.hasInterest(r.reply)) return false;
    return true;
  }
}

const EMPTY = new Uint8Array(0);
const EMPTY_SUBJECTS: ReadonlyMap<number, string> = new Map();
