// Real RaftNodes of two groups on three ClusterNodes, talking through GrpcRaftTransport over gRPC on
// loopback: elections, replication, and a partition of the leader through the fault hook.
import { describe, it, expect, afterEach } from 'vitest';
import { MemoryLogStore, RaftNode } from '@flotilla/raft';
import { ClusterNode, GrpcRaftTransport, type ClusterLogger } from '@flotilla/cluster';
import { until } from '../../../test/helpers/until.js';
import { ListMachine, enc } from '../../raft/test/raft-node-fixtures.js';

const quiet: ClusterLogger = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
const clusterNodes: ClusterNode[] = [];
const rafts: RaftNode[] = [];
afterEach(async () => {
  await Promise.all(rafts.splice(0).map((r) => r.stop()));
  await Promise.all(clusterNodes.splice(0).map((n) => n.stop()));
});

interface Member {
  cluster: ClusterNode;
  raft: Map<string, RaftNode>;
  sm: Map<string, ListMachine>;
}

async function startMembers(groups: string[]): Promise<Member[]> {
  const first = new ClusterNode({
    clusterName: 'raft',
    serverName: 'r1',
    serverId: 'R1',
    clientUrl: '',
    listen: { host: '127.0.0.1', port: -1 },
    routes: [],
    faultsEnabled: true,
    log: quiet,
  });
  await first.start();
  clusterNodes.push(first);
  const rest = ['r2', 'r3'].map(
    (name) =>
      new ClusterNode({
        clusterName: 'raft',
        serverName: name,
        serverId: name.toUpperCase(),
        clientUrl: '',
        listen: { host: '127.0.0.1', port: -1 },
        routes: [first.clusterUrl],
        faultsEnabled: true,
        log: quiet,
      }),
  );
  for (const n of rest) {
    await n.start();
    clusterNodes.push(n);
  }
  const all = [first, ...rest];
  await until(() => all.every((n) => n.peers().length === 2));
  const ids = all.map((n) => n.raftNodeId);
  const members: Member[] = [];
  for (const cluster of all) {
    const transport = new GrpcRaftTransport(cluster);
    const member: Member = { cluster, raft: new Map(), sm: new Map() };
    for (const group of groups) {
      const sm = new ListMachine();
      const raft = await RaftNode.start({
        group,
        id: cluster.raftNodeId,
        peers: ids,
        store: new MemoryLogStore(),
        transport,
        stateMachine: sm,
        tickMs: 10,
        raft: { electionTicks: 10 },
      });
      rafts.push(raft);
      member.raft.set(group, raft);
      member.sm.set(group, sm);
    }
    members.push(member);
  }
  return members;
}

function leaderOf(members: Member[], group: string, among: Member[] = members): Member | undefined {
  return among.find((m) => m.raft.get(group)!.isLeader());
}

describe('Raft over gRPC', () => {
  it('elects a leader per group and replicates to every member in the same order', async () => {
    const groups = ['g1', 'g2'];
    const members = await startMembers(groups);
    for (const g of groups) await until(() => leaderOf(members, g) !== undefined);
    for (const g of groups) {
      const leader = leaderOf(members, g)!.raft.get(g)!;
      const proposals = Array.from({ length: 100 }, (_, i) => leader.propose(enc.encode(`${g}-${i}`)));
      await Promise.all(proposals);
    }
    for (const g of groups) {
      const want = Array.from({ length: 100 }, (_, i) => `${g}-${i}`);
      await until(() => members.every((m) => m.sm.get(g)!.values.length === 100));
      for (const m of members) expect(m.sm.get(g)!.values).toEqual(want);
    }
  });

  it('re-elects when the leader is partitioned away, and the old leader converges after the heal', async () => {
    const members = await startMembers(['g']);
    await until(() => leaderOf(members, 'g') !== undefined);
    const old = leaderOf(members, 'g')!;
    await old.raft.get('g')!.propose(enc.encode('before'));
    const others = members.filter((m) => m !== old);
    // Cut the old leader off from both peers (from its own side: links drop and are refused).
    old.cluster.partition(others.map((m) => m.cluster.serverName));
    await until(() => old.cluster.peers().length === 0);
    await until(() => leaderOf(members, 'g', others) !== undefined, 15_000);
    const fresh = leaderOf(members, 'g', others)!;
    await fresh.raft.get('g')!.propose(enc.encode('during'));
    old.cluster.heal();
    await until(() => old.cluster.peers().length === 2);
    await until(() => members.every((m) => m.sm.get('g')!.values.length === 2), 15_000);
    for (const m of members) expect(m.sm.get('g')!.values).toEqual(['before', 'during']);
  });
});
