import type { Entry } from './types.js';

/**
 * Thrown by `restore()` for the node's OWN snapshot at startup when the machine's state is behind it and the
 * snapshot cannot bring it back (a stand-in whose state was lost with the machine's files). RaftNode then
 * discards its log (never a vote) so a leader sends a complete image; see RaftNode.start.
 */
export class SnapshotNotHeldError extends Error {
  constructor(message = 'state machine does not hold the state of its Raft snapshot') {
    super(message);
    this.name = 'SnapshotNotHeldError';
  }
}

/** The replicated application. Entries arrive in log order, exactly once per process lifetime after restore. */
export interface StateMachine {
  /** Apply one committed Normal entry; the return value resolves the proposer's promise on the leader. */
  apply(entry: Entry): unknown;
  /** An image of everything applied so far (taken between applies). */
  snapshot(): Uint8Array | Promise<Uint8Array>;
  /**
   * Replace the state with a snapshot image. At startup (the node's own snapshot) a machine with `fullSnapshot`
   * may throw SnapshotNotHeldError instead, leaving its state as it is.
   */
  restore(data: Uint8Array): void | Promise<void>;
  /**
   * Optional. When present, `snapshot()` may return a small stand-in (enough for this node's own restart) and
   * RaftNode calls this only when a follower needs the snapshot: an image of the state NOW, which stands for the
   * snapshot's older index. Only for machines that tolerate re-applying entries their state already reflects.
   */
  fullSnapshot?(): Uint8Array | Promise<Uint8Array>;
}
