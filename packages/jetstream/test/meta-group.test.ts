import { describe, it, expect, afterEach } from 'vitest';
import { InMemoryNetwork, MemoryLogStore, type NodeId } from '@flotilla/raft';
import { normaliseStreamConfig, parseStreamConfigRequest } from '@flotilla/jetstream';
import type { ClusterEnvironment, ClusterPeer } from '../src/cluster/cluster-contracts.js';
import { decideMetaStart, type BootstrapTiming } from '../src/cluster/meta-bootstrap.js';
import { MetaGroup } from '../src/cluster/meta-group.js';
import { until } from '../../../test/helpers/until.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const FAST: BootstrapTiming = { maxWaitMs: 1_000, settleMs: 100, seedMinWaitMs: 200, pollMs: 10 };

/** A cluster of fake environments over one in-memory network; `linked` says who sees whom. */
class FakeCluster {
  readonly net = new InMemoryNetwork();
  readonly stores = new Map<NodeId, MemoryLogStore>();
  readonly up = new Set<NodeId>();
  readonly groups: MetaGroup[] = [];

  env(id: NodeId, expected: number): ClusterEnvironment {
    if (!this.stores.has(id)) this.stores.set(id, new MemoryLogStore());
    return {
      clusterName: 'C',
      self: { name: `n${id}`, raftNodeId: id, serverId: `S${id}` },
      peers: (): ClusterPeer[] =>
        [...this.up].filter((p) => p !== id).map((p) => ({ name: `n${p}`, raftNodeId: p, serverId: `S${p}`, active: true })),
      onPeersChanged: () => () => undefined,
      expectedClusterSize: expected,
      raftStore: this.stores.get(id)!,
      transport: this.net.transport(),
    };
  }

  async startGroup(id: NodeId, expected: number): Promise<MetaGroup> {
    this.up.add(id);
    const env = this.env(id, expected);
    const how = await decideMetaStart(env, quiet, FAST);
    const g = new MetaGroup(env, quiet, { tickMs: 10 });
    await g.start(how);
    this.groups.push(g);
    return g;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.groups.map((g) => g.stop()));
  }
}

function leaderOf(groups: MetaGroup[]): MetaGroup | undefined {
  return groups.find((g) => g.isLeader());
}

const cfg = normaliseStreamConfig(parseStreamConfigRequest({ name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 }));

let cluster: FakeCluster | null = null;
afterEach(async () => {
  await cluster?.stopAll();
  cluster = null;
});

describe('meta group', () => {
  it('founds with every node seen, elects one leader and replicates the catalogue to all', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1).add(2).add(3);
    const groups = await Promise.all([1, 2, 3].map((id) => c.startGroup(id, 3)));
    expect(groups.map((g) => g.voters())).toEqual([[1, 2, 3], [1, 2, 3], [1, 2, 3]]);
    await until(() => leaderOf(groups) !== undefined);
    const leader = leaderOf(groups)!;
    expect(groups.filter((g) => g.isLeader())).toHaveLength(1);
    await until(() => groups.every((g) => g.leaderId() === leader.leaderId()));
    const assignment = { config: cfg, created: '2026-11-30T00:00:00Z', group: 'S-ORDERS-1', peers: [2, 1, 3] };
    await leader.propose({ op: 'assign', assignment });
    await until(() => groups.every((g) => g.state.assignment('ORDERS') !== undefined));
    for (const g of groups) expect(g.state.assignment('ORDERS')).toEqual(assignment);
    // A follower cannot change the catalogue: nats-server's 10008.
    const follower = groups.find((g) => !g.isLeader())!;
    await expect(follower.propose({ op: 'unassign', name: 'ORDERS', group: 'S-ORDERS-1' })).rejects.toMatchObject({ code: 503, errCode: 10008 });
    const st = leader.status((id) => ({ active: c.up.has(id), agoMs: 0 }));
    expect(st.role).toBe('leader');
    expect(st.replicas.map((r) => r.name)).toHaveLength(2);
    expect(st.replicas.every((r) => !r.offline)).toBe(true);
  });

  it('hands leadership over on step-down', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1).add(2).add(3);
    const groups = await Promise.all([1, 2, 3].map((id) => c.startGroup(id, 3)));
    await until(() => leaderOf(groups) !== undefined);
    const old = leaderOf(groups)!;
    const oldId = old.leaderId();
    await old.propose({ op: 'node', node: { name: 'n1', raftNodeId: 1, serverId: 'S1' } });
    expect(old.stepDown(() => true)).toBe(true);
    await until(() => {
      const l = leaderOf(groups);
      return l !== undefined && l.leaderId() !== oldId;
    });
    expect(old.isLeader()).toBe(false);
  });

  it('a node that was not a founder joins when the leader adds it, and restarts from its log', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1).add(2);
    const groups = await Promise.all([1, 2].map((id) => c.startGroup(id, 2)));
    await until(() => leaderOf(groups) !== undefined);
    const leader = leaderOf(groups)!;
    await leader.propose({ op: 'node', node: { name: 'n1', raftNodeId: 1, serverId: 'S1' } });
    // Node 3 appears: the leader adds it while it waits to bootstrap, so it joins instead of founding.
    c.up.add(3);
    const joining = c.startGroup(3, 3);
    await until(() => leader.members().length === 2);
    expect(await leader.addMember(3)).toBe(true);
    const third = await joining;
    await until(() => third.state.node(1) !== undefined && third.voters().includes(3));
    expect(third.voters()).toEqual([1, 2, 3]);
    // Restart of node 3 from its stored log.
    await third.stop();
    const env = c.env(3, 3);
    expect(await decideMetaStart(env, quiet, FAST)).toEqual({ kind: 'restart' });
  });

  it('founds with the nodes seen when the expected ones do not all come, and says so', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1).add(2);
    const warnings: string[] = [];
    const log = { ...quiet, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
    const t0 = Date.now();
    const how = await decideMetaStart(c.env(1, 3), log, FAST);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(FAST.maxWaitMs);
    expect(how).toEqual({ kind: 'found', voters: [1, 2] });
    expect(warnings).toEqual(['meta group bootstrap: expected nodes not all seen, founding with the nodes seen']);
  });

  it('never founds with a minority of the configured cluster: waits until a quorum is seen (1 of 3, 1 of 2)', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1);
    const warnings: string[] = [];
    const log = { ...quiet, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
    let stopped = false;
    const lone = decideMetaStart(c.env(1, 2), log, FAST, () => stopped);
    const three = decideMetaStart(c.env(1, 3), log, FAST, () => stopped);
    let decided = false;
    void Promise.race([lone, three]).then(() => (decided = true));
    await new Promise((r) => setTimeout(r, 3 * FAST.maxWaitMs));
    expect(decided).toBe(false);
    expect(warnings).toContain('meta group bootstrap: waiting for a quorum of the configured cluster');
    // A second node of three comes: a quorum; it founds with the two seen.
    c.up.add(2);
    expect(await three).toEqual({ kind: 'found', voters: [1, 2] });
    // The configured two-node cluster: both are seen now, so it founds with both.
    expect(await lone).toEqual({ kind: 'found', voters: [1, 2] });
    stopped = true;
  });

  it('without a quorum there is no leader', async () => {
    const c = (cluster = new FakeCluster());
    c.up.add(1).add(2).add(3);
    const groups = await Promise.all([1, 2, 3].map((id) => c.startGroup(id, 3)));
    await until(() => leaderOf(groups) !== undefined);
    c.net.isolate(1, [2, 3]);
    c.net.isolate(2, [1, 3]);
    c.net.isolate(3, [1, 2]);
    // Check-quorum makes a cut-off leader step down after an election timeout.
    await until(() => groups.every((g) => !g.isLeader()));
    expect(groups.every((g) => !g.isLeader())).toBe(true);
  });
});
