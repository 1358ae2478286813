// Consumer replication in a cluster — Flotilla's simplification of nats-server's per-consumer Raft groups:
// a replicated stream's consumers run on the stream's leader, and their config and state travel through the
// stream's own Raft group as consumer entries. So a consumer's leader is always its stream's leader, one
// group per stream carries both, and CONSUMER.LEADER.STEPDOWN moves the stream's leadership.
//
//   leader:  Consumer ── ReplicatedConsumerStorage ── proposeConsumerEntry ──► stream Raft group
//   every replica (leader too):  applyConsumerEntry ──► AppliedConsumers (memory + consumer files)
//   new leader:  leadershipChanged(true) ──► consumers started from AppliedConsumers
//
// The ConsumerService sees one `ReplicatedConsumerPlacement` per replicated stream (-placement: its
// consumer-state placement port, consumer/consumer-state-placement.ts); the stream groups' hooks reach the
// placements through `ReplicatedStreamConsumers` (-streams: `replicaAdded`, `applyConsumerEntry`,
// `leadershipChanged`, `consumerSnapshot` / `restoreConsumerSnapshot`).
export { encodeConsumerEntry, decodeConsumerEntry, type ConsumerReplicationEntry } from './consumer-replication-entry.js';
export { ReplicatedConsumerStorage, type ConsumerReplicationGroup } from './consumer-replication-storage.js';
export { AppliedConsumers, type AppliedConsumer } from './consumer-replication-state.js';
export { ConsumerResync, RESYNC_SUBJECT_PREFIX } from './consumer-replication-resync.js';
export { StreamConsumerReplication } from './consumer-replication-stream.js';
export { ReplicatedConsumerPlacement } from './consumer-replication-placement.js';
export { ReplicatedStreamConsumers, type ReplicaRef } from './consumer-replication-streams.js';
