import type { RandomSource } from './seeded-random.js';
import type { Entry, HardState, NodeId, Snapshot } from './types.js';

/** Deliberate bugs, switched on only by tests to prove the simulation's checker can fail. */
export interface RaftTestBugs {
  /** Count an entry of a previous term as committed once a quorum stores it (the "figure 8" bug). */
  commitPreviousTerm?: boolean;
  /** Acknowledge appends (and count the leader's own entries) before they are persisted. */
  ackBeforePersist?: boolean;
  /** Grant votes without checking that the candidate's log is at least as up to date. */
  ignoreLogOnVote?: boolean;
  /** Keep the leader lease for twice the election timeout instead of one tick less than it. */
  leaseTooLong?: boolean;
}

export interface RaftOptions {
  id: NodeId;
  /** Raft group this node belongs to; stamped on every message. */
  group?: string;
  /** Voters used only when the log and snapshot are empty (bootstrapping a new group). A joining node passes []. */
  peers: readonly NodeId[];
  random: RandomSource;
  /** Followers campaign after electionTicks + random(electionTicks) ticks without a leader. */
  electionTicks?: number;
  heartbeatTicks?: number;
  preVote?: boolean;
  checkQuorum?: boolean;
  /** In-flight appends per peer while replicating optimistically. */
  maxInflight?: number;
  /**
   * Followers already streaming appends learn a commit advance from the next append or heartbeat, not from an
   * append without entries of its own (and its answer). Saves a round of messages per commit where followers
   * need not apply promptly — their state is read only through the leader — at the cost of applying up to a
   * heartbeat later when idle.
   */
  lazyCommit?: boolean;
  maxMsgBytes?: number;
  maxMsgEntries?: number;
  maxSnapshotChunkBytes?: number;
  /** Leader resends to a peer whose match has not advanced for this many ticks (message loss). */
  resendTicks?: number;
  /** Learners are promoted to voters automatically once caught up with the commit index. */
  autoPromoteLearners?: boolean;
  maxPendingReads?: number;
  /** Persisted state to restart from. */
  hardState?: HardState;
  snapshot?: Snapshot | null;
  entries?: readonly Entry[];
  /** Index the state machine has already applied (defaults to the snapshot index). */
  applied?: number;
  testBugs?: RaftTestBugs;
}
