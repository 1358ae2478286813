export * from './raft-log/index.js';
