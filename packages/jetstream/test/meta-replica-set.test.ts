import { describe, it, expect } from 'vitest';
import { normaliseStreamConfig, parseStreamConfigRequest, type Stream } from '@flotilla/jetstream';
import type { RaftGroupStatus, StreamAssignment } from '../src/cluster/cluster-contracts.js';
import { ReplicaSet, type LocalReplica } from '../src/cluster/clustered-jetstream-replicas.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const SELF = 1;

function assignment(name: string, group: string, peers: number[], maxMsgs = -1): StreamAssignment {
  const config = normaliseStreamConfig(parseStreamConfigRequest({ name, subjects: [`${name}.>`], num_replicas: peers.length, max_msgs: maxMsgs }));
  return { config, created: '2026-11-30T00:00:00Z', group, peers };
}

class FakeReplica implements LocalReplica {
  readonly stream = {} as Stream;
  events: string[] = [];
  leader = 0;
  leaderSilentMs = 0;
  constructor(public assignment: StreamAssignment) {}
  get name(): string {
    return this.assignment.config.name;
  }
  isLeader(): boolean {
    return this.leader === SELF;
  }
  leaderId(): number {
    return this.leader;
  }
  status(): RaftGroupStatus {
    const replicas = this.assignment.peers
      .filter((p) => p !== SELF)
      .map((p) => ({ raftNodeId: p, name: `n${p}`, current: true, offline: false, activeAgoMs: p === this.leader ? this.leaderSilentMs : 0, lag: 0 }));
    return { group: this.assignment.group, kind: 'stream', stream: this.name, role: 'follower', term: 1, commit: 0, applied: 0, leader: this.leader, leaderChanges: 0, replicas };
  }
  clusterInfo(): object {
    return {};
  }
  async update(a: StreamAssignment): Promise<void> {
    this.assignment = a;
    this.events.push(`update:${a.peers.join(',')}`);
  }
  stepDown() {
    return null;
  }
  async stop(): Promise<void> {
    this.events.push('stop');
  }
  async destroy(): Promise<void> {
    this.events.push('destroy');
  }
}

function setup() {
  let catalogue: StreamAssignment[] = [];
  const opened: FakeReplica[] = [];
  const registered = new Set<string>();
  const configChanges: string[] = [];
  const set = new ReplicaSet({
    selfId: SELF,
    storeDir: '/tmp/unused',
    log: quiet,
    assignments: () => catalogue,
    open: async (a, dir) => {
      const r = new FakeReplica(a);
      r.events.push(`open:${dir.endsWith(`streams/${a.group}`)}`);
      opened.push(r);
      return r;
    },
    added: async (r) => void registered.add(r.assignment.group),
    removing: async (r) => void registered.delete(r.assignment.group),
    configChanged: (r, previous) => void configChanges.push(`${r.name}:${previous.config.max_msgs}->${r.assignment.config.max_msgs}`),
  });
  return {
    set,
    opened,
    registered,
    configChanges,
    publish(next: StreamAssignment[]) {
      catalogue = next;
      set.changed();
      return set.settled();
    },
  };
}

describe('replicas follow the catalogue', () => {
  it('opens replicas naming this node, updates changed ones and destroys deleted ones', async () => {
    const t = setup();
    const a = assignment('A', 'S-A-1', [1, 2, 3]);
    await t.publish([a, assignment('B', 'S-B-1', [2, 3])]);
    expect(t.opened.map((r) => r.name)).toEqual(['A']);
    expect(t.opened[0]!.events).toEqual(['open:true']);
    expect([...t.registered]).toEqual(['S-A-1']);
    const changed = assignment('A', 'S-A-1', [1, 2, 3], 10);
    await t.publish([changed]);
    expect(t.opened[0]!.events).toEqual(['open:true', 'update:1,2,3']);
    expect(t.set.byStream('A')?.assignment.config.max_msgs).toBe(10);
    await t.publish([]);
    expect(t.opened[0]!.events.at(-1)).toBe('destroy');
    expect(t.set.all()).toHaveLength(0);
    expect(t.registered.size).toBe(0);
  });

  it('tells the host about config changes only (its consumers are kicked), not peer changes', async () => {
    const t = setup();
    await t.publish([assignment('A', 'S-A-1', [1, 2, 3])]);
    await t.publish([assignment('A', 'S-A-1', [1, 2, 3], 10)]);
    await t.publish([assignment('A', 'S-A-1', [1, 2, 4], 10)]);
    expect(t.opened[0]!.events).toEqual(['open:true', 'update:1,2,3', 'update:1,2,4']);
    expect(t.configChanges).toEqual(['A:-1->10']);
  });

  it('a re-created stream (new group) gets a fresh replica', async () => {
    const t = setup();
    await t.publish([assignment('A', 'S-A-1', [1])]);
    await t.publish([assignment('A', 'S-A-2', [1])]);
    expect(t.opened.map((r) => r.assignment.group)).toEqual(['S-A-1', 'S-A-2']);
    expect(t.opened[0]!.events.at(-1)).toBe('destroy');
    expect(t.set.byStream('A')?.assignment.group).toBe('S-A-2');
  });

  it('a replica moved off this node keeps serving its group until the group lets it go', async () => {
    const t = setup();
    await t.publish([assignment('A', 'S-A-1', [1, 2])]);
    const r = t.opened[0]!;
    r.leader = 2;
    await t.publish([assignment('A', 'S-A-1', [2, 3])]);
    expect(r.events).toEqual(['open:true', 'update:2,3']);
    // Still a member while the leader keeps talking to it.
    await new Promise((res) => setTimeout(res, 2_600));
    expect(r.events).not.toContain('destroy');
    expect(t.set.byGroupId('S-A-1')).toBe(r);
    // Removed from the group: the leader goes quiet.
    r.leaderSilentMs = 5_000;
    await new Promise((res) => setTimeout(res, 700));
    await t.set.settled();
    expect(r.events.at(-1)).toBe('destroy');
    expect(t.set.byGroupId('S-A-1')).toBeUndefined();
    await t.set.stop();
  });

  it('stop closes every replica and keeps its data', async () => {
    const t = setup();
    await t.publish([assignment('A', 'S-A-1', [1]), assignment('B', 'S-B-1', [1, 2])]);
    await t.set.stop();
    expect(t.opened.map((r) => r.events.at(-1))).toEqual(['stop', 'stop']);
  });
});
