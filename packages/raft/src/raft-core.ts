import { MembershipHistory, applyConfChange, encodeConfChange, isVoter, quorumOf } from './membership.js';
import type { RaftOptions, RaftTestBugs } from './options.js';
import { Progress, ProgressState } from './progress.js';
import { RaftLog } from './raft-log.js';
import type { RandomSource } from './seeded-random.js';
import {
  type ConfChange,
  EMPTY_BYTES,
  type Entry,
  EntryType,
  type HardState,
  type MembershipConfig,
  type Message,
  MessageType,
  NONE,
  type NodeId,
  type ReadState,
  type Ready,
  Role,
  type Snapshot,
  emptyMessage,
} from './types.js';

export type ProposeResult = { ok: true; index: number } | { ok: false; leader: NodeId; reason: string };

interface IncomingSnapshot {
  from: NodeId;
  term: number;
  index: number;
  snapTerm: number;
  received: number;
  chunks: Uint8Array[];
}

interface PendingRead {
  requestId: number;
  index: number;
  round: number;
}

interface Outstanding {
  ready: Ready;
}

/**
 * Raft as a pure state machine (after etcd-io/raft): inputs are tick(), step(message) and proposals;
 * outputs are collected into a Ready. No I/O, no clock, no ambient randomness.
 */
export class RaftCore {
  readonly id: NodeId;
  readonly group: string;
  term: number;
  vote: NodeId;
  role: Role = Role.Follower;
  leader: NodeId = NONE;
  readonly log: RaftLog;
  /** Latest snapshot (taken locally or installed from the leader); sent to lagging followers. */
  snapshot: Snapshot | null;
  private readonly membership: MembershipHistory;
  private readonly progress = new Map<NodeId, Progress>();
  private readonly votes = new Map<NodeId, boolean>();
  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  private leadTransferee: NodeId = NONE;
  private heartbeatRound = 0;
  /** The last campaign was forced by a leadership transfer (TimeoutNow): see electedByTransfer. */
  private campaignForced = false;
  /**
   * Heartbeat rounds up to this one hold no lease: sent before a leadership transfer was given up, their
   * acknowledgements may come from followers that voted for the transfer's target since (a forced vote ignores
   * leases).
   */
  private leaseFloorRound = 0;
  private pendingReads: PendingRead[] = [];
  private readStates: ReadState[] = [];
  private msgs: Message[] = [];
  private msgsAfterPersist: Message[] = [];
  private pendingBroadcast = false;
  private snapshotToInstall: Snapshot | null = null;
  private incoming: IncomingSnapshot | null = null;
  private persistedHardState: HardState;
  private readyHardState: HardState;
  private outstanding: Outstanding | null = null;

  private readonly random: RandomSource;
  private readonly electionTicks: number;
  private readonly heartbeatTicks: number;
  private readonly preVote: boolean;
  private readonly checkQuorum: boolean;
  private readonly maxInflight: number;
  private readonly lazyCommit: boolean;
  private readonly maxMsgBytes: number;
  private readonly maxMsgEntries: number;
  private readonly maxSnapshotChunkBytes: number;
  private readonly resendTicks: number;
  private readonly autoPromote: boolean;
  private readonly maxPendingReads: number;
  private readonly bugs: RaftTestBugs;

  constructor(options: RaftOptions) {
    if (!Number.isInteger(options.id) || options.id <= 0) throw new RangeError('node id must be a positive integer');
    this.id = options.id;
    this.group = options.group ?? '';
    this.random = options.random;
    this.electionTicks = options.electionTicks ?? 10;
    this.heartbeatTicks = options.heartbeatTicks ?? 1;
    this.preVote = options.preVote ?? true;
    this.checkQuorum = options.checkQuorum ?? true;
    this.maxInflight = options.maxInflight ?? 64;
    this.lazyCommit = options.lazyCommit ?? false;
    this.maxMsgBytes = options.maxMsgBytes ?? 1 << 20;
    this.maxMsgEntries = options.maxMsgEntries ?? 4096;
    this.maxSnapshotChunkBytes = options.maxSnapshotChunkBytes ?? 256 * 1024;
    this.resendTicks = options.resendTicks ?? Math.max(2, this.heartbeatTicks * 3);
    this.autoPromote = options.autoPromoteLearners ?? true;
    this.maxPendingReads = options.maxPendingReads ?? 4096;
    this.bugs = options.testBugs ?? {};

    const hs = options.hardState ?? { term: 0, vote: NONE, commit: 0 };
    const snap = options.snapshot ?? null;
    this.snapshot = snap;
    this.term = hs.term;
    this.vote = hs.vote;
    let entries = options.entries ?? [];
    const bootstrap = !snap && entries.length === 0 && options.peers.length > 0;
    if (bootstrap) {
      // Every founding member writes the same first entry, so a node that joins later learns the
      // initial voters from the log like any other membership change.
      const change: ConfChange = { type: 'bootstrap', nodeId: 0, voters: [...options.peers].sort((a, b) => a - b) };
      entries = [{ index: 1, term: 1, type: EntryType.ConfChange, data: encodeConfChange(change) }];
      this.term = Math.max(this.term, 1);
    }
    this.log = new RaftLog(snap?.meta.index ?? 0, snap?.meta.term ?? 0, entries, 0);
    if (bootstrap) this.log.unstableFrom = 1;
    this.log.committed = Math.min(Math.max(hs.commit, this.log.snapshotIndex, bootstrap ? 1 : 0), this.log.lastIndex());
    this.log.applied = Math.max(options.applied ?? this.log.snapshotIndex, this.log.snapshotIndex);
    const base: MembershipConfig = snap ? snap.meta.config : { voters: [], learners: [] };
    this.membership = new MembershipHistory(base, this.log.snapshotIndex);
    this.membership.appended(this.log.slice(this.log.firstIndex(), this.log.lastIndex() + 1));
    this.persistedHardState = hs;
    this.readyHardState = hs;
    this.resetElectionTimeout();
  }

  // ---------------------------------------------------------------- inspection

  config(): MembershipConfig {
    return this.membership.current();
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  /** Progress of each peer as seen by the leader (empty on other roles). */
  peerMatch(): Map<NodeId, number> {
    return new Map([...this.progress].map(([id, pr]) => [id, pr.match]));
  }

  transferee(): NodeId {
    return this.leadTransferee;
  }

  private promotable(): boolean {
    return isVoter(this.membership.current(), this.id);
  }

  // ---------------------------------------------------------------- inputs

  tick(): void {
    if (this.role === Role.Leader) {
      this.tickLeader();
      return;
    }
    this.electionElapsed++;
    if (this.promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0;
      this.campaign(this.preVote ? 'pre' : 'real');
    }
  }

  /** Start an election now (used by tests and by a single-node bootstrap). */
  campaignNow(): void {
    if (this.role !== Role.Leader) this.campaign(this.preVote ? 'pre' : 'real');
  }

  propose(data: Uint8Array): ProposeResult {
    return this.proposeEntries([data], EntryType.Normal);
  }

  proposeBatch(items: readonly Uint8Array[]): ProposeResult {
    return this.proposeEntries(items, EntryType.Normal);
  }

  /** One entry packing several proposals (see packProposals); the core treats it as opaque data. */
  proposePacked(data: Uint8Array): ProposeResult {
    return this.proposeEntries([data], EntryType.Batch);
  }

  /** One server at a time: AddLearner, then Promote (automatic once caught up), or Remove. */
  proposeConfChange(change: ConfChange): ProposeResult {
    if (this.role !== Role.Leader) return { ok: false, leader: this.leader, reason: 'not leader' };
    if (this.membership.lastChangeIndex() > this.log.committed) {
      return { ok: false, leader: this.id, reason: 'a membership change is already in progress' };
    }
    if (this.log.term(this.log.committed) !== this.term) {
      return { ok: false, leader: this.id, reason: 'leader has not committed an entry in its term yet' };
    }
    const next = applyConfChange(this.membership.current(), change);
    if (typeof next === 'string') return { ok: false, leader: this.id, reason: next };
    const result = this.proposeEntries([encodeConfChange(change)], EntryType.ConfChange);
    return result;
  }

  transferLeadership(to: NodeId): boolean {
    if (this.role !== Role.Leader || to === this.id || !isVoter(this.membership.current(), to)) return false;
    const pr = this.progress.get(to);
    if (!pr) return false;
    this.leadTransferee = to;
    this.electionElapsed = 0;
    if (pr.match === this.log.lastIndex()) {
      this.sendTimeoutNow(to);
    } else if (pr.state !== ProgressState.Snapshot) {
      // Restart from the known match so a lost append does not delay the hand-over.
      pr.becomeProbe();
      this.sendAppend(to, pr);
    }
    return true;
  }

  /** Linearizable read: answered through Ready.readStates once a quorum confirmed this leader. */
  readIndex(requestId: number): boolean {
    if (this.role !== Role.Leader) return false;
    if (this.log.term(this.log.committed) !== this.term) return false;
    if (this.pendingReads.length >= this.maxPendingReads) return false;
    const index = this.log.committed;
    if (quorumOf(this.membership.current()) === 1 && isVoter(this.membership.current(), this.id)) {
      this.readStates.push({ requestId, index });
      return true;
    }
    this.broadcastHeartbeat();
    this.pendingReads.push({ requestId, index, round: this.heartbeatRound });
    return true;
  }

  /**
   * What a leader lease rests on: 'always' for a leader that is its own quorum; otherwise the newest heartbeat
   * round a quorum acknowledged (0: none yet this term), which holds a lease for `leaseTicks()` after it was sent
   * (the node keeps the wall time of each round); 'none' when this node may not answer as leader: not the
   * leader, handing leadership over (the target is elected at once, leases or not), or no check-quorum (without
   * it followers vote for a candidate however recently they heard the leader, so no lease holds).
   */
  leaseBasis(): 'always' | 'none' | number {
    if (this.role !== Role.Leader || this.leadTransferee !== NONE || !this.checkQuorum) return 'none';
    const config = this.membership.current();
    const quorum = quorumOf(config);
    if (quorum === 1 && isVoter(config, this.id)) return 'always';
    const acked: number[] = [];
    for (const id of config.voters) acked.push(id === this.id ? this.heartbeatRound : (this.progress.get(id)?.ackedContext ?? 0));
    acked.sort((a, b) => b - a);
    const round = acked[quorum - 1] ?? 0;
    return round > this.leaseFloorRound ? round : 0;
  }

  /**
   * Leader through a transfer: elected at once, without waiting out the predecessor's election timeout, so
   * requests the predecessor answered just before handing over may still reach this node (the service layer
   * leaves those to the predecessor for a moment).
   */
  electedByTransfer(): boolean {
    return this.role === Role.Leader && this.campaignForced;
  }

  /**
   * How long a quorum's acknowledgement of a heartbeat keeps this leader's lease, in ticks from its sending: each
   * acknowledging follower restarted its election timer (at least electionTicks) on receipt, and with pre-vote and
   * check-quorum it refuses to elect anyone until that ran out, so no other leader can exist before then. One
   * tick less, for tick jitter.
   */
  leaseTicks(): number {
    return this.bugs.leaseTooLong ? 2 * this.electionTicks : this.electionTicks - 1;
  }

  /**
   * The snapshot's data was replaced by a complete image for the same meta (RaftNode expands a stand-in on
   * demand): restart every snapshot transfer to it from the first byte.
   */
  snapshotDataReplaced(): void {
    // Chunks already queued were cut from the old data (ticks keep queueing resends while the image is
    // made): none may go out, or a follower could assemble a mix, or install a one-chunk stand-in.
    this.msgs = this.msgs.filter((m) => m.type !== MessageType.SnapshotChunk);
    const snap = this.snapshot;
    if (this.role !== Role.Leader || !snap) return;
    for (const [id, pr] of this.progress) {
      if (id === this.id || pr.state !== ProgressState.Snapshot || pr.pendingSnapshot !== snap.meta.index) continue;
      pr.snapshotOffset = 0;
      pr.stalledTicks = 0;
      this.sendSnapshotChunk(id, pr);
    }
  }

  /** The state machine took a snapshot at `index` (<= applied): drop the log prefix it covers. */
  compact(index: number, data: Uint8Array): Snapshot {
    if (index > this.log.applied) throw new RangeError(`cannot snapshot at ${index} beyond applied ${this.log.applied}`);
    const term = this.log.term(index);
    if (term === undefined) throw new RangeError(`cannot snapshot at compacted index ${index}`);
    const config = this.membership.configAt(index);
    const snap: Snapshot = { meta: { index, term, config }, data };
    this.snapshot = snap;
    this.log.compact(index);
    this.membership.compactedTo(index, config);
    return snap;
  }

  step(m: Message): void {
    if (m.term > this.term) {
      if (m.type === MessageType.PreVote || m.type === MessageType.Vote) {
        // Leader lease: while we hear from a leader, a (possibly partitioned, rejoining) node cannot disrupt.
        const inLease = this.checkQuorum && this.leader !== NONE && this.electionElapsed < this.electionTicks;
        if (inLease && !m.force) return;
      }
      if (m.type === MessageType.PreVote || (m.type === MessageType.PreVoteResp && !m.reject)) {
        // Pre-vote never changes terms.
      } else {
        const fromLeader =
          m.type === MessageType.Append || m.type === MessageType.Heartbeat || m.type === MessageType.SnapshotChunk;
        this.becomeFollower(m.term, fromLeader ? m.from : NONE);
      }
    } else if (m.term < this.term) {
      if (m.type === MessageType.Append || m.type === MessageType.Heartbeat || m.type === MessageType.SnapshotChunk) {
        // Tell a stale leader about the newer term so it steps down.
        this.send(emptyMessage(this.group, MessageType.AppendResp, this.id, m.from, this.term));
      } else if (m.type === MessageType.PreVote) {
        const resp = emptyMessage(this.group, MessageType.PreVoteResp, this.id, m.from, this.term);
        resp.reject = true;
        this.send(resp);
      }
      return;
    }

    if (m.type === MessageType.PreVote || m.type === MessageType.Vote) {
      this.handleVoteRequest(m);
      return;
    }
    switch (this.role) {
      case Role.Leader:
        this.stepLeader(m);
        break;
      case Role.Candidate:
      case Role.PreCandidate:
        this.stepCandidate(m);
        break;
      case Role.Follower:
        this.stepFollower(m);
        break;
    }
  }

  // ---------------------------------------------------------------- Ready / Advance

  hasReady(): boolean {
    if (this.outstanding) return false;
    if (this.pendingBroadcast && this.role === Role.Leader) return true;
    const hs = this.hardState();
    return (
      this.msgs.length > 0 ||
      this.msgsAfterPersist.length > 0 ||
      this.log.unstableFrom <= this.log.lastIndex() ||
      this.snapshotToInstall !== null ||
      this.log.committed > this.log.applied ||
      this.readStates.length > 0 ||
      !sameHardState(hs, this.readyHardState)
    );
  }

  ready(): Ready {
    if (this.outstanding) throw new Error('previous Ready not advanced');
    if (this.role === Role.Leader && this.pendingBroadcast) this.broadcastAppend();
    this.pendingBroadcast = false;
    const hs = this.hardState();
    const hsChanged = !sameHardState(hs, this.readyHardState);
    const entries = this.log.unstableEntries();
    const snapshot = this.snapshotToInstall;
    this.snapshotToInstall = null;
    const ready: Ready = {
      hardState: hsChanged ? hs : null,
      entries,
      snapshot,
      committedEntries: this.log.committedToApply(),
      messages: this.msgs,
      messagesAfterPersist: this.msgsAfterPersist,
      readStates: this.readStates,
      mustSync:
        entries.length > 0 || snapshot !== null || hs.term !== this.readyHardState.term || hs.vote !== this.readyHardState.vote,
    };
    this.msgs = [];
    this.msgsAfterPersist = [];
    this.readStates = [];
    this.readyHardState = hs;
    this.outstanding = { ready };
    return ready;
  }

  /** The driver persisted and handled `ready`. */
  advance(ready: Ready): void {
    if (!this.outstanding || this.outstanding.ready !== ready) throw new Error('advance with an unknown Ready');
    this.outstanding = null;
    if (ready.hardState) this.persistedHardState = ready.hardState;
    if (ready.snapshot) this.log.applied = Math.max(this.log.applied, ready.snapshot.meta.index);
    const last = ready.entries[ready.entries.length - 1];
    if (last) this.log.stableTo(last.index, last.term);
    const lastApplied = ready.committedEntries[ready.committedEntries.length - 1];
    if (lastApplied) this.log.applied = Math.max(this.log.applied, lastApplied.index);
    if (this.role === Role.Leader) {
      this.updateSelfProgress();
    } else if (this.role === Role.Candidate) {
      // Our own vote counts only once it is durable; otherwise a crash could let us vote twice in this term.
      if (this.persistedHardState.term === this.term && this.persistedHardState.vote === this.id && !this.votes.has(this.id)) {
        this.recordVote(this.id, true);
      }
    }
  }

  // ---------------------------------------------------------------- roles

  private resetElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTicks + this.random.int(this.electionTicks);
  }

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.leader = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetElectionTimeout();
    this.leadTransferee = NONE;
    this.votes.clear();
    this.progress.clear();
    this.pendingReads = [];
    this.pendingBroadcast = false;
  }

  private becomeFollower(term: number, leader: NodeId): void {
    this.reset(term);
    this.role = Role.Follower;
    this.leader = leader;
  }

  private becomePreCandidate(): void {
    // Pre-vote keeps term and vote; it only asks whether an election could succeed.
    this.votes.clear();
    this.leader = NONE;
    this.role = Role.PreCandidate;
    this.progress.clear();
  }

  private becomeCandidate(): void {
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = Role.Candidate;
  }

  private becomeLeader(): void {
    this.reset(this.term);
    this.role = Role.Leader;
    this.leader = this.id;
    const config = this.membership.current();
    for (const id of [...config.voters, ...config.learners]) {
      this.progress.set(id, new Progress(this.log.lastIndex() + 1));
    }
    const self = this.progress.get(this.id);
    if (self) {
      self.match = this.log.unstableFrom - 1;
      self.becomeReplicate();
    }
    // A no-op entry of the new term lets earlier entries commit (only current-term entries count).
    this.appendOwn([{ index: this.log.lastIndex() + 1, term: this.term, type: EntryType.Normal, data: EMPTY_BYTES }]);
    this.pendingBroadcast = true;
    // A first heartbeat round at once: the leader lease (leaseBasis) holds after one round trip.
    this.broadcastHeartbeat();
  }

  private campaign(kind: 'pre' | 'real' | 'transfer'): void {
    if (!this.promotable()) return;
    const config = this.membership.current();
    if (kind === 'pre') {
      this.becomePreCandidate();
      this.votes.set(this.id, true);
      if (this.tally().granted >= quorumOf(config)) {
        this.campaign('real');
        return;
      }
      for (const id of config.voters) {
        if (id === this.id) continue;
        const m = emptyMessage(this.group, MessageType.PreVote, this.id, id, this.term + 1);
        m.index = this.log.lastIndex();
        m.logTerm = this.log.lastTerm();
        this.send(m);
      }
      return;
    }
    this.becomeCandidate();
    this.campaignForced = kind === 'transfer';
    for (const id of config.voters) {
      if (id === this.id) continue;
      const m = emptyMessage(this.group, MessageType.Vote, this.id, id, this.term);
      m.index = this.log.lastIndex();
      m.logTerm = this.log.lastTerm();
      m.force = kind === 'transfer';
      this.send(m);
    }
  }

  private tally(): { granted: number; rejected: number } {
    const voters = this.membership.current().voters;
    let granted = 0;
    let rejected = 0;
    for (const id of voters) {
      const v = this.votes.get(id);
      if (v === true) granted++;
      else if (v === false) rejected++;
    }
    return { granted, rejected };
  }

  private recordVote(from: NodeId, granted: boolean): void {
    if (!this.votes.has(from)) this.votes.set(from, granted);
    const { granted: yes, rejected: no } = this.tally();
    const quorum = quorumOf(this.membership.current());
    if (yes >= quorum) {
      if (this.role === Role.PreCandidate) this.campaign('real');
      else this.becomeLeader();
    } else if (no >= quorum) {
      this.becomeFollower(this.term, NONE);
    }
  }

  // ---------------------------------------------------------------- message handling

  private handleVoteRequest(m: Message): void {
    const pre = m.type === MessageType.PreVote;
    const canVote =
      this.vote === m.from || (this.vote === NONE && this.leader === NONE) || (pre && m.term > this.term);
    const respType = pre ? MessageType.PreVoteResp : MessageType.VoteResp;
    if (canVote && (this.log.isUpToDate(m.index, m.logTerm) || this.bugs.ignoreLogOnVote)) {
      const resp = emptyMessage(this.group, respType, this.id, m.from, m.term);
      if (pre) {
        this.send(resp);
      } else {
        this.electionElapsed = 0;
        this.vote = m.from;
        // The vote must be durable before the candidate learns of it.
        this.msgsAfterPersist.push(resp);
      }
    } else {
      const resp = emptyMessage(this.group, respType, this.id, m.from, this.term);
      resp.reject = true;
      this.send(resp);
    }
  }

  private stepCandidate(m: Message): void {
    switch (m.type) {
      case MessageType.Append:
      case MessageType.Heartbeat:
      case MessageType.SnapshotChunk:
        this.becomeFollower(m.term, m.from);
        this.stepFollower(m);
        return;
      case MessageType.PreVoteResp:
        if (this.role === Role.PreCandidate) this.recordVote(m.from, !m.reject);
        return;
      case MessageType.VoteResp:
        if (this.role === Role.Candidate) this.recordVote(m.from, !m.reject);
        return;
      case MessageType.TimeoutNow:
        // A pre-candidate kept its term (pre-vote changes nothing): the leader of that term may still hand over.
        if (this.role === Role.PreCandidate) this.campaign('transfer');
        return;
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MessageType.Append:
        this.electionElapsed = 0;
        this.leader = m.from;
        this.handleAppend(m);
        return;
      case MessageType.Heartbeat: {
        this.electionElapsed = 0;
        this.leader = m.from;
        const commit = Math.min(m.commit, this.log.lastIndex());
        if (commit > this.log.committed) this.log.committed = commit;
        const resp = emptyMessage(this.group, MessageType.HeartbeatResp, this.id, m.from, this.term);
        resp.context = m.context;
        this.send(resp);
        return;
      }
      case MessageType.SnapshotChunk:
        this.electionElapsed = 0;
        this.leader = m.from;
        this.handleSnapshotChunk(m);
        return;
      case MessageType.TimeoutNow:
        this.campaign('transfer');
        return;
      default:
        return;
    }
  }

  private respondAppend(to: NodeId, index: number): void {
    const resp = emptyMessage(this.group, MessageType.AppendResp, this.id, to, this.term);
    resp.index = index;
    // An acknowledgement claims the entries are on disk: send it only after this Ready is persisted.
    if (this.bugs.ackBeforePersist) this.msgs.push(resp);
    else this.msgsAfterPersist.push(resp);
  }

  private handleAppend(m: Message): void {
    if (m.index < this.log.committed) {
      this.respondAppend(m.from, this.log.committed);
      return;
    }
    if (this.log.matchTerm(m.index, m.logTerm)) {
      const before = this.log.lastIndex();
      const truncatedFrom = this.log.appendAfter(m.entries);
      if (truncatedFrom > 0) this.onTruncated(truncatedFrom);
      const firstNew = truncatedFrom > 0 ? truncatedFrom : before + 1;
      const appended = m.entries.filter((e) => e.index >= firstNew);
      if (appended.length > 0) this.membership.appended(appended);
      const lastNew = m.index + m.entries.length;
      const commit = Math.min(m.commit, lastNew);
      if (commit > this.log.committed) this.log.committed = commit;
      this.respondAppend(m.from, lastNew);
      return;
    }
    const resp = emptyMessage(this.group, MessageType.AppendResp, this.id, m.from, this.term);
    resp.reject = true;
    resp.index = m.index;
    if (m.index > this.log.lastIndex()) {
      resp.hintIndex = this.log.lastIndex() + 1;
      resp.hintTerm = 0;
    } else {
      resp.hintTerm = this.log.term(m.index) ?? 0;
      resp.hintIndex = this.log.firstIndexOfTermAt(m.index);
    }
    this.send(resp);
  }

  /** Entries from `index` were replaced: roll back membership and withdraw acks that no longer hold. */
  private onTruncated(index: number): void {
    this.membership.truncatedFrom(index);
    this.msgsAfterPersist = this.msgsAfterPersist.filter(
      (x) => !(x.type === MessageType.AppendResp && !x.reject && x.index >= index),
    );
  }

  private handleSnapshotChunk(m: Message): void {
    const meta = m.snapshotMeta;
    if (!meta) return;
    if (meta.index <= this.log.committed) {
      this.incoming = null;
      this.respondAppend(m.from, this.log.committed);
      return;
    }
    if (m.offset === 0) {
      this.incoming = { from: m.from, term: m.term, index: meta.index, snapTerm: meta.term, received: 0, chunks: [] };
    }
    const inc = this.incoming;
    const matches =
      inc !== null && inc.from === m.from && inc.term === m.term && inc.index === meta.index && inc.snapTerm === meta.term;
    if (!matches || inc.received !== m.offset) {
      const resp = emptyMessage(this.group, MessageType.SnapshotChunkResp, this.id, m.from, this.term);
      resp.snapshotMeta = meta;
      resp.offset = matches ? inc.received : 0;
      resp.reject = true;
      this.send(resp);
      return;
    }
    inc.chunks.push(m.data);
    inc.received += m.data.length;
    if (!m.done) {
      const resp = emptyMessage(this.group, MessageType.SnapshotChunkResp, this.id, m.from, this.term);
      resp.snapshotMeta = meta;
      resp.offset = inc.received;
      this.send(resp);
      return;
    }
    this.incoming = null;
    const data = concatBytes(inc.chunks, inc.received);
    this.installSnapshot({ meta, data }, m.from);
  }

  private installSnapshot(snap: Snapshot, from: NodeId): void {
    const meta = snap.meta;
    if (this.log.matchTerm(meta.index, meta.term)) {
      // We already hold the entries the snapshot covers: fast-forward the commit index.
      this.log.committed = Math.max(this.log.committed, meta.index);
      this.respondAppend(from, meta.index);
      return;
    }
    this.log.restore(meta);
    this.membership.reset(meta.config, meta.index);
    this.onTruncated(meta.index + 1);
    this.snapshot = snap;
    this.snapshotToInstall = snap;
    this.respondAppend(from, meta.index);
  }

  private stepLeader(m: Message): void {
    const pr = this.progress.get(m.from);
    if (!pr) return;
    switch (m.type) {
      case MessageType.AppendResp:
        pr.recentActive = true;
        this.handleAppendResp(m, pr);
        return;
      case MessageType.HeartbeatResp:
        pr.recentActive = true;
        pr.probeSent = false;
        if (m.context > pr.ackedContext) pr.ackedContext = m.context;
        this.confirmReads();
        // The target of a transfer answers heartbeats but has not campaigned: the TimeoutNow was lost, resend it.
        if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) this.sendTimeoutNow(m.from);
        if (pr.match < this.log.lastIndex()) this.sendAppend(m.from, pr);
        return;
      case MessageType.SnapshotChunkResp:
        pr.recentActive = true;
        if (pr.state !== ProgressState.Snapshot || !m.snapshotMeta || m.snapshotMeta.index !== pr.pendingSnapshot) return;
        if (!this.snapshot || this.snapshot.meta.index !== pr.pendingSnapshot) {
          pr.becomeProbe();
          return;
        }
        pr.snapshotOffset = m.offset;
        pr.stalledTicks = 0;
        if (m.offset < this.snapshot.data.length || m.reject) this.sendSnapshotChunk(m.from, pr);
        return;
      default:
        return;
    }
  }

  private handleAppendResp(m: Message, pr: Progress): void {
    if (m.reject) {
      let hintNext = m.hintIndex;
      if (m.hintTerm > 0) {
        const last = this.log.lastIndexOfTerm(m.hintTerm);
        if (last > 0) hintNext = last + 1;
      }
      if (pr.maybeDecrTo(m.index, Math.max(1, hintNext))) this.sendAppend(m.from, pr);
      return;
    }
    if (pr.maybeUpdate(m.index)) {
      if (pr.state === ProgressState.Probe) pr.becomeReplicate();
      else if (pr.state === ProgressState.Snapshot && pr.match >= pr.pendingSnapshot) pr.becomeReplicate();
      if (this.maybeCommit()) this.afterCommitAdvanced();
      if (this.role !== Role.Leader) return;
      if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) this.sendTimeoutNow(m.from);
      this.maybePromoteLearner();
    }
    if (pr.state !== ProgressState.Snapshot) this.sendAppend(m.from, pr);
  }

  private sendTimeoutNow(to: NodeId): void {
    this.send(emptyMessage(this.group, MessageType.TimeoutNow, this.id, to, this.term));
  }

  // ---------------------------------------------------------------- leader duties

  private tickLeader(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTicks) {
      this.electionElapsed = 0;
      if (this.checkQuorum) {
        const config = this.membership.current();
        let active = 0;
        for (const id of config.voters) {
          if (id === this.id || this.progress.get(id)?.recentActive) active++;
        }
        if (active < quorumOf(config)) {
          this.becomeFollower(this.term, NONE);
          return;
        }
        for (const [id, pr] of this.progress) pr.recentActive = id === this.id;
      }
      if (this.leadTransferee !== NONE) this.leaseFloorRound = this.heartbeatRound;
      this.leadTransferee = NONE;
    }
    if (this.heartbeatElapsed >= this.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      this.broadcastHeartbeat();
      this.resendStalled();
      this.maybePromoteLearner();
    }
  }

  private resendStalled(): void {
    const last = this.log.lastIndex();
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue;
      if (pr.match >= last) {
        pr.stalledTicks = 0;
        continue;
      }
      pr.stalledTicks += this.heartbeatTicks;
      if (pr.stalledTicks < this.resendTicks) continue;
      pr.stalledTicks = 0;
      // Messages were probably lost: fall back to probing from the last known match.
      if (pr.state === ProgressState.Snapshot) {
        if (this.snapshot && this.snapshot.meta.index === pr.pendingSnapshot) this.sendSnapshotChunk(id, pr);
        else pr.becomeProbe();
      } else {
        pr.becomeProbe();
        this.sendAppend(id, pr);
      }
    }
  }

  /** Each broadcast is a new round (readIndex and the leader lease count acknowledgements per round). */
  private broadcastHeartbeat(): void {
    this.heartbeatRound++;
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue;
      const m = emptyMessage(this.group, MessageType.Heartbeat, this.id, id, this.term);
      m.commit = Math.min(this.log.committed, pr.match);
      m.context = this.heartbeatRound;
      this.send(m);
    }
  }

  private broadcastAppend(): void {
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue;
      this.sendAppend(id, pr);
    }
  }

  /** Send as many appends to `to` as its progress state allows (one in probe, a window in replicate). */
  private sendAppend(to: NodeId, pr: Progress): void {
    const last = this.log.lastIndex();
    for (let sent = 0; sent <= this.maxInflight; sent++) {
      if (!pr.canSend(this.maxInflight)) return;
      const prevIndex = pr.next - 1;
      const prevTerm = this.log.term(prevIndex);
      if (prevTerm === undefined) {
        this.startSnapshot(to, pr);
        return;
      }
      const entries = pr.next <= last ? this.log.slice(pr.next, last + 1, this.maxMsgBytes, this.maxMsgEntries) : [];
      // A peer streaming appends learns a commit advance with the next append or heartbeat when commits ride
      // along (lazyCommit); otherwise an append without entries carries it now.
      if (entries.length === 0 && pr.state === ProgressState.Replicate && (this.lazyCommit || pr.sentCommit >= this.log.committed)) return;
      const m = emptyMessage(this.group, MessageType.Append, this.id, to, this.term);
      m.index = prevIndex;
      m.logTerm = prevTerm;
      m.entries = entries;
      m.commit = this.log.committed;
      pr.sentCommit = this.log.committed;
      pr.sentAppend(prevIndex + entries.length, entries.length);
      this.send(m);
      if (entries.length === 0) return;
    }
  }

  private startSnapshot(to: NodeId, pr: Progress): void {
    const snap = this.snapshot;
    if (!snap) return;
    pr.becomeSnapshot(snap.meta.index);
    this.sendSnapshotChunk(to, pr);
  }

  private sendSnapshotChunk(to: NodeId, pr: Progress): void {
    const snap = this.snapshot;
    if (!snap) return;
    const offset = Math.min(pr.snapshotOffset, snap.data.length);
    const end = Math.min(offset + this.maxSnapshotChunkBytes, snap.data.length);
    const m = emptyMessage(this.group, MessageType.SnapshotChunk, this.id, to, this.term);
    m.snapshotMeta = snap.meta;
    m.offset = offset;
    m.data = snap.data.subarray(offset, end);
    m.done = end >= snap.data.length;
    this.send(m);
  }

  private proposeEntries(items: readonly Uint8Array[], type: EntryType): ProposeResult {
    if (this.role !== Role.Leader) return { ok: false, leader: this.leader, reason: 'not leader' };
    if (this.leadTransferee !== NONE) return { ok: false, leader: this.id, reason: 'leadership transfer in progress' };
    if (!isVoter(this.membership.current(), this.id)) {
      return { ok: false, leader: NONE, reason: 'leader is being removed from the group' };
    }
    let index = this.log.lastIndex();
    const entries: Entry[] = [];
    for (const data of items) entries.push({ index: ++index, term: this.term, type, data });
    this.appendOwn(entries);
    this.pendingBroadcast = true;
    return { ok: true, index };
  }

  private appendOwn(entries: Entry[]): void {
    this.log.appendOwn(entries);
    const before = this.membership.current();
    this.membership.appended(entries);
    if (this.membership.current() !== before) this.syncProgressWithConfig();
    if (this.bugs.ackBeforePersist) this.progress.get(this.id)?.maybeUpdate(this.log.lastIndex());
    if (this.maybeCommit()) this.afterCommitAdvanced();
  }

  private syncProgressWithConfig(): void {
    const config = this.membership.current();
    const members = new Set([...config.voters, ...config.learners]);
    for (const id of members) {
      if (this.progress.has(id)) continue;
      const pr = new Progress(this.log.lastIndex() + 1);
      if (id === this.id) pr.match = this.log.unstableFrom - 1;
      this.progress.set(id, pr);
    }
    for (const id of [...this.progress.keys()]) {
      if (!members.has(id) && id !== this.id) this.progress.delete(id);
    }
  }

  private updateSelfProgress(): void {
    const self = this.progress.get(this.id);
    const persisted = Math.min(this.log.unstableFrom - 1, this.log.lastIndex());
    if (self && self.maybeUpdate(persisted) && this.maybeCommit()) this.afterCommitAdvanced();
  }

  private maybeCommit(): boolean {
    const config = this.membership.current();
    const matches = config.voters.map((id) => this.progress.get(id)?.match ?? 0).sort((a, b) => b - a);
    const candidate = matches[quorumOf(config) - 1] ?? 0;
    if (candidate <= this.log.committed) return false;
    // Only entries of the current term are committed by counting replicas (Raft §5.4.2).
    if (!this.bugs.commitPreviousTerm && this.log.term(candidate) !== this.term) return false;
    this.log.committed = candidate;
    return true;
  }

  private afterCommitAdvanced(): void {
    this.pendingBroadcast = true;
    this.confirmReads();
    const config = this.membership.current();
    if (!isVoter(config, this.id) && this.log.committed >= this.membership.lastChangeIndex()) {
      // Our removal is committed: hand over by stepping down; the remaining voters elect a leader.
      this.becomeFollower(this.term, NONE);
    }
  }

  private maybePromoteLearner(): void {
    if (!this.autoPromote || this.role !== Role.Leader) return;
    const config = this.membership.current();
    if (config.learners.length === 0) return;
    if (this.membership.lastChangeIndex() > this.log.committed) return;
    for (const id of config.learners) {
      const pr = this.progress.get(id);
      if (pr && pr.match >= this.log.committed) {
        this.proposeConfChange({ type: 'promote', nodeId: id });
        return;
      }
    }
  }

  private confirmReads(): void {
    if (this.pendingReads.length === 0 || this.role !== Role.Leader) return;
    const config = this.membership.current();
    const quorum = quorumOf(config);
    while (this.pendingReads.length > 0) {
      const read = this.pendingReads[0]!;
      let acks = 0;
      for (const id of config.voters) {
        if (id === this.id || (this.progress.get(id)?.ackedContext ?? 0) >= read.round) acks++;
      }
      if (acks < quorum) return;
      this.pendingReads.shift();
      this.readStates.push({ requestId: read.requestId, index: read.index });
    }
  }

  private send(m: Message): void {
    this.msgs.push(m);
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function concatBytes(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
