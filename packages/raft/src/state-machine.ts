import type { Entry } from './types.js';

/** The replicated application. Entries arrive in log order, exactly once per process lifetime after restore. */
export interface StateMachine {
  /** Apply one committed Normal entry; the return value resolves the proposer's promise on the leader. */
  apply(entry: Entry): unknown;
  /** An image of everything applied so far (taken between applies). */
  snapshot(): Uint8Array | Promise<Uint8Array>;
  /** Replace the state with a snapshot image. */
  restore(data: Uint8Array): void | Promise<void>;
}
