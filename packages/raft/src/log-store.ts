import type { Entry, HardState, Snapshot } from './types.js';

/** What a node finds on disk when it starts. */
export interface PersistedState {
  hardState: HardState;
  snapshot: Snapshot | null;
  /** Entries after the snapshot, in index order. */
  entries: Entry[];
}

/** One Ready's worth of persistence for one group. */
export interface LogWrite {
  group: string;
  /** Replaces the whole log (a snapshot received from the leader). Written before `entries`. */
  snapshot: Snapshot | null;
  /** Appended at entries[0].index, replacing any stored suffix from there. */
  entries: readonly Entry[];
  hardState: HardState | null;
  /** The promise resolves only once the write is durable (fsynced). */
  sync: boolean;
}

/**
 * Durable Raft log for many groups. Defined here so `raft` stays free of I/O; `@flotilla/store` implements it
 * on LevelDB. Implementations may group-commit writes issued close together into one synced batch.
 */
export interface RaftLogStore {
  load(group: string): Promise<PersistedState>;
  write(update: LogWrite): Promise<void>;
  /** A snapshot taken locally at snapshot.meta.index: store it and drop the entries it covers. */
  compact(group: string, snapshot: Snapshot): Promise<void>;
  /** Deletes everything stored for `group` (the group was removed from this node). */
  drop(group: string): Promise<void>;
  /**
   * Atomically and durably replaces everything stored for `group` by an empty log (no snapshot, no entries) with
   * `hardState`: a node discarding a log its state machine cannot stand on (see RaftNode.start).
   */
  reset(group: string, hardState: HardState): Promise<void>;
  close(): Promise<void>;
}

/** In-memory RaftLogStore for tests and the simulation; "durable" means stored in this object. */
export class MemoryLogStore implements RaftLogStore {
  private readonly groups = new Map<string, PersistedState>();
  writes = 0;

  async load(group: string): Promise<PersistedState> {
    const state = this.state(group);
    return { hardState: state.hardState, snapshot: state.snapshot, entries: [...state.entries] };
  }

  async write(update: LogWrite): Promise<void> {
    this.writes++;
    const state = this.state(update.group);
    if (update.snapshot) {
      state.snapshot = update.snapshot;
      state.entries = [];
    }
    const first = update.entries[0];
    if (first) {
      const keep = state.entries.filter((e) => e.index < first.index);
      state.entries = keep.concat(update.entries);
    }
    if (update.hardState) state.hardState = update.hardState;
  }

  async compact(group: string, snapshot: Snapshot): Promise<void> {
    const state = this.state(group);
    if (state.snapshot && state.snapshot.meta.index >= snapshot.meta.index) return;
    state.snapshot = snapshot;
    state.entries = state.entries.filter((e) => e.index > snapshot.meta.index);
  }

  async drop(group: string): Promise<void> {
    this.groups.delete(group);
  }

  async reset(group: string, hardState: HardState): Promise<void> {
    this.writes++;
    this.groups.set(group, { hardState, snapshot: null, entries: [] });
  }

  async close(): Promise<void> {}

  private state(group: string): PersistedState {
    let state = this.groups.get(group);
    if (!state) {
      state = { hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] };
      this.groups.set(group, state);
    }
    return state;
  }
}
