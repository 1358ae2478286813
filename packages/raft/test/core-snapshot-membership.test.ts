import { describe, expect, it } from 'vitest';
import { Cluster, drain, newCore, types } from './cluster-harness.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('snapshot install', () => {
  it('a follower behind the compacted log receives the snapshot in chunks and installs it', () => {
    const cluster = new Cluster([1, 2, 3], { maxSnapshotChunkBytes: 4 });
    cluster.elect(1);
    const leader = cluster.get(1);
    cluster.isolate(3);
    for (let i = 0; i < 10; i++) leader.propose(bytes(`v${i}`));
    cluster.settle();
    const snapData = bytes('state-machine-image');
    const snap = leader.compact(leader.log.applied, snapData);
    expect(leader.log.firstIndex()).toBe(snap.meta.index + 1);
    cluster.heal();
    let chunks = 0;
    let installed = null;
    const follower = cluster.get(3);
    for (let t = 0; t < 10 && !installed; t++) {
      for (const c of cluster.cores.values()) c.tick();
      for (let round = 0; round < 50; round++) {
        const outbox = [];
        for (const core of cluster.cores.values()) {
          while (core.hasReady()) {
            const r = core.ready();
            if (core === follower && r.snapshot) installed = r.snapshot;
            outbox.push(...r.messages, ...r.messagesAfterPersist);
            core.advance(r);
          }
        }
        if (outbox.length === 0) break;
        for (const m of outbox) {
          if (m.type === types.SnapshotChunk) chunks++;
          cluster.get(m.to).step(m);
        }
      }
    }
    expect(installed).not.toBeNull();
    expect(new TextDecoder().decode(installed!.data)).toBe('state-machine-image');
    expect(installed!.meta).toMatchObject({ index: snap.meta.index, term: snap.meta.term, config: { voters: [1, 2, 3] } });
    expect(chunks).toBeGreaterThanOrEqual(Math.ceil(snapData.length / 4));
    expect(follower.log.snapshotIndex).toBe(snap.meta.index);
    cluster.settle();
    expect(follower.log.lastIndex()).toBe(leader.log.lastIndex());
    expect(follower.log.committed).toBe(leader.log.committed);
  });

  it('ignores a snapshot older than its commit index', () => {
    const f = newCore(2, [1, 2, 3]);
    drain(f);
    f.step({ ...baseChunk(), snapshotMeta: { index: 1, term: 1, config: { voters: [1, 2, 3], learners: [] } } });
    const ready = f.ready();
    expect(ready.snapshot).toBeNull();
    expect(ready.messagesAfterPersist).toMatchObject([{ type: types.AppendResp, index: 1 }]);
  });

  it('refuses to snapshot beyond the applied index', () => {
    const cluster = new Cluster([1]);
    cluster.elect(1);
    const leader = cluster.get(1);
    expect(() => leader.compact(leader.log.applied + 1, new Uint8Array())).toThrow(RangeError);
  });
});

describe('membership change', () => {
  it('adds a learner that is promoted to voter once caught up', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    for (let i = 0; i < 20; i++) leader.propose(bytes(`v${i}`));
    cluster.settle();
    cluster.add(newCore(4, []));
    expect(leader.proposeConfChange({ type: 'addLearner', nodeId: 4 })).toMatchObject({ ok: true });
    expect(leader.config()).toEqual({ voters: [1, 2, 3], learners: [4] });
    cluster.settle();
    cluster.tick(2);
    expect(leader.config()).toEqual({ voters: [1, 2, 3, 4], learners: [] });
    expect(cluster.get(4).config()).toEqual({ voters: [1, 2, 3, 4], learners: [] });
    expect(cluster.get(4).log.lastIndex()).toBe(leader.log.lastIndex());
  });

  it('allows one change at a time', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    cluster.isolate(2);
    cluster.isolate(3);
    expect(leader.proposeConfChange({ type: 'addLearner', nodeId: 4 })).toMatchObject({ ok: true });
    expect(leader.proposeConfChange({ type: 'addLearner', nodeId: 5 })).toMatchObject({
      ok: false,
      reason: 'a membership change is already in progress',
    });
  });

  const invalid = [
    { change: { type: 'addLearner' as const, nodeId: 2 }, reason: 'node 2 is already a member' },
    { change: { type: 'promote' as const, nodeId: 7 }, reason: 'node 7 is not a learner' },
    { change: { type: 'remove' as const, nodeId: 7 }, reason: 'node 7 is not a member' },
  ];
  for (const c of invalid) {
    it(`refuses ${c.change.type} ${c.change.nodeId}`, () => {
      const cluster = new Cluster([1, 2, 3]);
      cluster.elect(1);
      expect(cluster.get(1).proposeConfChange(c.change)).toMatchObject({ ok: false, reason: c.reason });
    });
  }

  it('removing a follower shrinks the quorum', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    expect(leader.proposeConfChange({ type: 'remove', nodeId: 3 })).toMatchObject({ ok: true });
    cluster.settle();
    expect(leader.config().voters).toEqual([1, 2]);
    cluster.isolate(3);
    leader.propose(bytes('after'));
    cluster.settle();
    expect(leader.log.committed).toBe(leader.log.lastIndex());
  });

  it('a removed leader steps down once its removal commits and the rest elect a new leader', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.elect(1);
    const leader = cluster.get(1);
    expect(leader.proposeConfChange({ type: 'remove', nodeId: 1 })).toMatchObject({ ok: true });
    cluster.settle();
    expect(leader.role).toBe('follower');
    cluster.tick(40);
    const leaders = cluster.leaders();
    expect(leaders).toHaveLength(1);
    expect([2, 3]).toContain(leaders[0]);
    expect(leader.role).toBe('follower');
  });

  it('a new leader must commit an entry of its term before changing membership', () => {
    const cluster = new Cluster([1, 2, 3]);
    cluster.get(1).campaignNow();
    // Stop before the no-op commits: only the election messages are exchanged.
    for (let i = 0; i < 3; i++) {
      for (const core of cluster.cores.values()) {
        const { messages } = drain(core);
        for (const m of messages) if (m.type !== types.Append) cluster.get(m.to).step(m);
      }
    }
    const leader = cluster.get(1);
    expect(leader.role).toBe('leader');
    expect(leader.proposeConfChange({ type: 'remove', nodeId: 3 })).toMatchObject({
      ok: false,
      reason: 'leader has not committed an entry in its term yet',
    });
  });
});

function baseChunk() {
  return {
    group: '',
    type: types.SnapshotChunk,
    from: 1,
    to: 2,
    term: 2,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    hintIndex: 0,
    hintTerm: 0,
    context: 0,
    force: false,
    offset: 0,
    data: new Uint8Array(0),
    done: true,
  };
}
