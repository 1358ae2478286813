export { LevelRaftLogStore, type LevelRaftLogStoreOptions, type RaftLogStoreStats } from './level-raft-log-store.js';
