export * from './types.js';
export * from './options.js';
export { SeededRandom, type RandomSource } from './seeded-random.js';
export { RaftCore, type ProposeResult } from './raft-core.js';
export { RaftLog } from './raft-log.js';
export { MembershipHistory, applyConfChange, encodeConfChange, decodeConfChange, quorumOf } from './membership.js';
export { Progress, ProgressState } from './progress.js';
export { simulate, replayCommand, type SimOptions, type SimResult } from './sim/simulation.js';
