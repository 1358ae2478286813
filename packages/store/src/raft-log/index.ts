export {
  LevelRaftLogStore,
  type LevelRaftLogStoreOptions,
  type RaftLogStoreStats,
  type RaftLogStoreTestHooks,
} from './level-raft-log-store.js';
export type { WalSyncMode } from './wal-segment.js';
