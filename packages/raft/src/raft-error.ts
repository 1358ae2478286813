/** Why a RaftNode refused or abandoned a proposal, read or apply wait (NotLeaderError aside). */
export type RaftErrorCode =
  | 'STOPPED' // the node was stopped; nothing it still held will settle
  | 'TOO_MANY_PENDING_PROPOSALS'; // back-pressure: maxPendingProposals are already in flight

const RAFT_ERROR_TEXT: Record<RaftErrorCode, string> = {
  STOPPED: 'raft node stopped',
  TOO_MANY_PENDING_PROPOSALS: 'too many pending proposals',
};

/** A typed RaftNode failure: callers match `code`, never the text. */
export class RaftError extends Error {
  constructor(readonly code: RaftErrorCode) {
    super(RAFT_ERROR_TEXT[code]);
    this.name = 'RaftError';
  }
}

/** True when `err` is a RaftError with that code. */
export function isRaftError(err: unknown, code: RaftErrorCode): err is RaftError {
  return err instanceof RaftError && err.code === code;
}
