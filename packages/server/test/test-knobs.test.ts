import { describe, expect, it } from 'vitest';
import { clusterTestKnobsFrom, raftLogWalOptionsFrom } from '../src/cluster/test-knobs.js';

describe('test knobs from the environment', () => {
  it('maps FLOTILLA_TEST_BUGS and FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES to the cluster test knobs', () => {
    expect(clusterTestKnobsFrom({})).toEqual({});
    expect(clusterTestKnobsFrom({ FLOTILLA_TEST_BUGS: 'other, pub-ack-before-commit', FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES: '40' })).toEqual({
      pubAckBeforeCommit: true,
      streamSnapshotEveryEntries: 40,
    });
    expect(clusterTestKnobsFrom({ FLOTILLA_TEST_BUGS: 'other', FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES: 'x' })).toEqual({});
  });

  it('maps FLOTILLA_RAFT_LOG_WAL to the Raft log store options', () => {
    expect(raftLogWalOptionsFrom({})).toEqual({});
    expect(raftLogWalOptionsFrom({ FLOTILLA_RAFT_LOG_WAL: 'off' })).toEqual({ wal: false });
    expect(raftLogWalOptionsFrom({ FLOTILLA_RAFT_LOG_WAL: 'on' })).toEqual({ wal: true, walSync: 'dsync' });
    expect(raftLogWalOptionsFrom({ FLOTILLA_RAFT_LOG_WAL: 'fdatasync' })).toEqual({ wal: true, walSync: 'fdatasync' });
    expect(raftLogWalOptionsFrom({ FLOTILLA_RAFT_LOG_WAL: 'append' })).toEqual({ wal: true, walPrezero: false });
  });
});
