// This node's member of the meta Raft group (`_meta_`): the RaftNode over the shared log store and transport,
// the catalogue state machine, leader tracking, leader hand-over, and adding nodes that were not founders.
import { ConfChangeType, NONE, NotLeaderError, RaftNode, Role, isRaftError, type NodeId } from '@flotilla/raft';
import type { ClusterEnvironment, GroupRole, RaftGroupStatus } from './cluster-contracts.js';
import { metaGroupOf, type MetaStart } from './meta-bootstrap.js';
import { ClusterErrors } from './meta-errors.js';
import { MetaState, encodeMetaEntry, type MetaEntry } from './meta-state.js';
import type { JetStreamLogger } from '../message-bus.js';

export interface MetaGroupOptions {
  tickMs?: number;
  electionTicks?: number;
  snapshotEveryEntries?: number;
}

export class MetaGroup {
  readonly state = new MetaState();
  private node: RaftNode | null = null;
  private leaderChanges = 0;
  private readonly leaderListeners = new Set<(leader: NodeId, term: number) => void>();

  constructor(
    private readonly env: ClusterEnvironment,
    private readonly log: JetStreamLogger,
    private readonly options: MetaGroupOptions = {},
  ) {}

  get started(): boolean {
    return this.node !== null;
  }

  async start(how: MetaStart): Promise<void> {
    this.node = await RaftNode.start({
      group: metaGroupOf(this.env),
      id: this.env.self.raftNodeId,
      peers: how.kind === 'found' ? how.voters : [],
      store: this.env.raftStore,
      transport: this.env.transport,
      stateMachine: this.state,
      tickMs: this.options.tickMs ?? 100,
      snapshotEveryEntries: this.options.snapshotEveryEntries ?? 1_000,
      // As the stream groups: heartbeat 200 ms, election after 0.7-1.4 s of silence (a catalogue outage after a
      // meta leader dies is that plus one election).
      raft: { electionTicks: this.options.electionTicks ?? 7, heartbeatTicks: 2 },
      onLeaderChange: (leader, term) => {
        this.leaderChanges++;
        this.log.info({ leader: this.nameOf(leader), term }, leader === NONE ? 'JetStream cluster no metadata leader' : 'meta leader changed');
        for (const l of this.leaderListeners) l(leader, term);
      },
      onError: (err) => this.log.error({ err: String(err) }, 'meta group stopped on a storage error'),
    });
    // A group of one has nobody to wait for.
    if (how.kind === 'found' && how.voters.length === 1) this.node.core.campaignNow();
  }

  async stop(): Promise<void> {
    await this.node?.stop();
  }

  onLeaderChange(listener: (leader: NodeId, term: number) => void): () => void {
    this.leaderListeners.add(listener);
    return () => this.leaderListeners.delete(listener);
  }

  /** Leader, and every entry of earlier terms is committed and applied here: its catalogue is complete. */
  isLeader(): boolean {
    const n = this.node;
    if (n === null || n.core.role !== Role.Leader) return false;
    const log = n.core.log;
    return log.term(log.committed) === n.core.term && n.appliedIndex >= log.committed;
  }

  /** Settled leader (isLeader) holding its Raft leader lease: no other node can lead, so it answers requests. */
  answers(): boolean {
    return this.isLeader() && this.node!.holdsLease();
  }

  /** Follows a leader and has applied everything it knows to be committed. */
  caughtUp(): boolean {
    const n = this.node;
    return n !== null && n.core.leader !== NONE && n.appliedIndex >= n.core.log.committed;
  }

  /** The leader this node follows, or NONE. */
  leaderId(): NodeId {
    return this.node?.core.leader ?? NONE;
  }

  voters(): NodeId[] {
    return this.node === null ? [] : [...this.node.core.config().voters];
  }

  members(): NodeId[] {
    if (this.node === null) return [];
    const c = this.node.core.config();
    return [...c.voters, ...c.learners];
  }

  /** Resolves once committed and applied here; a lost leadership is 10008, as nats-server answers it. */
  async propose(entry: MetaEntry): Promise<unknown> {
    if (this.node === null) throw ClusterErrors.unavailable();
    try {
      const { result } = await this.node.propose(encodeMetaEntry(entry));
      return result;
    } catch (err) {
      if (err instanceof NotLeaderError || isRaftError(err, 'STOPPED')) throw ClusterErrors.unavailable();
      throw err;
    }
  }

  /** Leader only: confirms leadership with a quorum and waits until the catalogue reflects every commit. */
  readBarrier(): Promise<void> {
    if (this.node === null) return Promise.reject(new Error('meta group not started'));
    return this.node.readBarrier();
  }

  /** Leader only: adds an active node that is not a member (it joins as a learner and is promoted). */
  async addMember(id: NodeId): Promise<boolean> {
    if (this.node === null || !this.isLeader() || this.members().includes(id)) return false;
    try {
      await this.node.changeMembership({ type: ConfChangeType.AddLearner, nodeId: id });
      return true;
    } catch (err) {
      this.log.debug({ node: id, err: String(err) }, 'meta group: adding a node failed (retried on the next peer change)');
      return false;
    }
  }

  /** Leader only: takes a member out of the group (SERVER.REMOVE). */
  async removeMember(id: NodeId): Promise<void> {
    if (this.node === null || !this.isLeader()) throw ClusterErrors.unavailable();
    await this.node.changeMembership({ type: ConfChangeType.Remove, nodeId: id });
  }

  /** Hands leadership to the most caught-up active voter; false when there is none. */
  stepDown(isActive: (id: NodeId) => boolean): boolean {
    const n = this.node;
    if (n === null || n.core.role !== Role.Leader) return false;
    const match = n.core.peerMatch();
    const candidates = n.core
      .config()
      .voters.filter((v) => v !== this.env.self.raftNodeId && isActive(v))
      .sort((a, b) => (match.get(b) ?? 0) - (match.get(a) ?? 0) || a - b);
    for (const to of candidates) if (n.transferLeadership(to)) return true;
    return false;
  }

  nameOf(id: NodeId): string {
    if (id === NONE) return '';
    if (id === this.env.self.raftNodeId) return this.env.self.name;
    return this.state.node(id)?.name ?? this.env.peers().find((p) => p.raftNodeId === id)?.name ?? String(id);
  }

  status(activity: (id: NodeId) => { active: boolean; agoMs: number }): RaftGroupStatus {
    const n = this.node;
    if (n === null) {
      return { group: metaGroupOf(this.env), kind: 'meta', role: 'follower', term: 0, commit: 0, applied: 0, leader: NONE, leaderChanges: 0, replicas: [] };
    }
    const core = n.core;
    const isLead = core.role === Role.Leader;
    const match = isLead ? core.peerMatch() : new Map<NodeId, number>();
    const last = core.log.lastIndex();
    const replicas = core
      .config()
      .voters.filter((v) => v !== this.env.self.raftNodeId)
      .map((v) => {
        const { active, agoMs } = activity(v);
        const lag = isLead ? Math.max(0, last - (match.get(v) ?? 0)) : 0;
        return { raftNodeId: v, name: this.nameOf(v), current: active && lag === 0, offline: !active, activeAgoMs: agoMs, lag };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      group: metaGroupOf(this.env),
      kind: 'meta',
      role: roleOf(core.role),
      term: core.term,
      commit: core.log.committed,
      applied: core.log.applied,
      leader: core.leader,
      leaderChanges: this.leaderChanges,
      replicas,
    };
  }
}

function roleOf(role: Role): GroupRole {
  return role === Role.Leader ? 'leader' : role === Role.Follower ? 'follower' : 'candidate';
}
