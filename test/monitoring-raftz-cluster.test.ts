// /raftz on three real nodes with clustered JetStream: nats-server's RaftzStatus (account -> group -> group
// state) for the Raft groups each node is a member of. By default the system account's (the meta group, as
// nats-server files it); `?acc=$G` the global account's stream groups; `?group=` one group. nats-server 2.9.10
// has no /raftz, so this runs against Flotilla only.
import { describe, expect, it } from 'vitest';
import { until } from './helpers/until.js';
import { addStream, useJsCluster, type JsCluster } from './helpers/js-cluster.js';

type Raftz = Record<string, Record<string, Record<string, any>>>;

async function raftzOf(httpPort: number, query = ''): Promise<{ status: number; body: Raftz }> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/raftz${query}`);
  return { status: res.status, body: (await res.json()) as Raftz };
}

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'raftz' }, (c) => (cluster = c));

describe('/raftz in a cluster', () => {
  it('the meta group under $SYS on every node, one leader, each with the two other voters as peers', async () => {
    await cluster.waitForMetaLeader();
    const metas = await until(async () => {
      const all = await Promise.all(cluster.running().map((n) => raftzOf(n.httpPort)));
      const groups = all.map((r) => r.body['$SYS']?.['_meta_']);
      return groups.every((g) => g !== undefined && g['leader'] !== undefined) && groups.filter((g) => g!['state'] === 'LEADER').length === 1 ? { all, groups } : undefined;
    }, 10_000, 'one meta leader in every /raftz', 50);
    for (const r of metas.all) {
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual(['$SYS']);
    }
    const leaderIds = new Set(metas.groups.map((g) => g!['leader']));
    expect(leaderIds.size).toBe(1);
    for (const g of metas.groups) {
      expect(g).toMatchObject({ size: 3, quorum_needed: 2, ever_had_leader: true, system_account: false, traffic_account: '' });
      expect(['LEADER', 'FOLLOWER']).toContain(g!['state']);
      expect(g!['term']).toBeGreaterThanOrEqual(1);
      expect(g!['applied']).toBeLessThanOrEqual(g!['committed']);
      const peers = Object.values(g!['peers'] as Record<string, { name: string; known: boolean }>);
      expect(peers).toHaveLength(2);
      expect(peers.every((p) => p.known)).toBe(true);
      expect(Object.keys(g!['peers'])).not.toContain(g!['id']);
    }
    // the leader's id is the id the leader reports for itself
    const leader = metas.groups.find((g) => g!['state'] === 'LEADER')!;
    expect(leader['id']).toBe(leader['leader']);
  });

  it('?acc=$G: an R3 stream group on every node; ?group= narrows to it; an unknown group: {}', async () => {
    const { jsm } = await cluster.client('n1');
    await addStream(jsm, { name: 'RZ', subjects: ['rz.>'], num_replicas: 3 });
    const group = await until(async () => {
      const r = await raftzOf(cluster.node('n1').httpPort, '?acc=$G');
      const names = Object.keys(r.body['$G'] ?? {});
      return names.length === 1 ? names[0] : undefined;
    }, 10_000, 'the stream group in /raftz', 50);
    expect(group).toMatch(/^S-/);
    const states = await until(async () => {
      const all = await Promise.all(cluster.running().map((n) => raftzOf(n.httpPort, `?acc=$G&group=${encodeURIComponent(group!)}`)));
      const gs = all.map((r) => r.body['$G']?.[group!]);
      return gs.every((g) => g !== undefined) && gs.filter((g) => g!['state'] === 'LEADER').length === 1 ? gs : undefined;
    }, 10_000, 'one stream leader in every /raftz', 50);
    for (const g of states) expect(g).toMatchObject({ size: 3, quorum_needed: 2 });
    expect((await raftzOf(cluster.node('n2').httpPort, '?group=nosuch')).body).toEqual({});
    expect((await raftzOf(cluster.node('n2').httpPort, '?acc=$G&group=nosuch')).body).toEqual({});
  });
});
