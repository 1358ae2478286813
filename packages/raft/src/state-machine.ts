import type { Entry } from './types.js';

/** The replicated application. Entries arrive in log order, exactly once per process lifetime after restore. */
export interface StateMachine {
  /** Apply one committed Normal entry; the return value resolves the proposer's promise on the leader. */
  apply(entry: Entry): unknown;
  /** An image of everything applied so far (taken between applies). */
  snapshot(): Uint8Array | Promise<Uint8Array>;
  /** Replace the state with a snapshot image. */
  restore(data: Uint8Array): void | Promise<void>;
  /**
   * Optional. When present, `snapshot()` may return a small stand-in (enough for this node's own restart) and
   * RaftNode calls this only when a follower needs the snapshot: an image of the state NOW, which stands for the
   * snapshot's older index. Only for machines that tolerate re-applying entries their state already reflects.
   */
  fullSnapshot?(): Uint8Array | Promise<Uint8Array>;
}
