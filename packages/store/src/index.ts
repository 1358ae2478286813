export * from './raft-log/index.js';
export * from './types.js';
export * from './store-error.js';
export * from './message-store.js';
export { SubjectFilter } from './subject-filter.js';
export { MemoryStore } from './memory-store.js';
export type { StoreCoreOptions } from './store-core.js';
export { FileStore, type FileStoreOptions, type SyncPolicy } from './file-store.js';
export { setFsyncObserver, observeFsync, type FsyncKind, type FsyncObserver } from './fsync-observer.js';
