// Environment variables that tests, chaos runs and A/B measurements set on a node. The libraries read no
// environment: the server reads these here and passes them down as options. Never set them in production.
import type { ClusterTestKnobs } from '@flotilla/jetstream';
import type { LevelRaftLogStoreOptions } from '@flotilla/store';

/**
 * FLOTILLA_TEST_BUGS=pub-ack-before-commit: stream leaders ack at proposal time (a deliberate bug the chaos
 * checker must catch). FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES=N: stream groups snapshot every N entries so
 * end-to-end tests compact.
 */
export function clusterTestKnobsFrom(env: NodeJS.ProcessEnv = process.env): ClusterTestKnobs {
  const bugs = new Set((env['FLOTILLA_TEST_BUGS'] ?? '').split(',').map((s) => s.trim()));
  const snapshotEntries = Number(env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES']);
  return {
    ...(bugs.has('pub-ack-before-commit') ? { pubAckBeforeCommit: true } : {}),
    ...(Number.isInteger(snapshotEntries) && snapshotEntries > 0 ? { streamSnapshotEveryEntries: snapshotEntries } : {}),
  };
}

/**
 * FLOTILLA_RAFT_LOG_WAL picks the Raft log store's write-ahead file, to measure the variants in a cluster:
 * `off` (LevelDB only), `on` / `dsync` (the default), `fdatasync`, `append` (no pre-zeroing).
 */
export function raftLogWalOptionsFrom(env: NodeJS.ProcessEnv = process.env): Partial<LevelRaftLogStoreOptions> {
  switch (env['FLOTILLA_RAFT_LOG_WAL']) {
    case 'off':
      return { wal: false };
    case 'on':
    case 'dsync':
      return { wal: true, walSync: 'dsync' };
    case 'fdatasync':
      return { wal: true, walSync: 'fdatasync' };
    case 'append':
      return { wal: true, walPrezero: false };
    default:
      return {};
  }
}
