import { describe, it, expect, afterEach } from 'vitest';
import { InProcessCluster } from './meta-cluster-harness.js';

const UNAVAILABLE = { code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' };

let cluster: InProcessCluster | null = null;
afterEach(async () => {
  await cluster?.stop();
  cluster = null;
});

async function withMetaLeader(size = 3): Promise<InProcessCluster> {
  const c = (cluster = await InProcessCluster.start(size));
  await c.waitFor(async () => {
    const r = await c.request(1, '$JS.API.INFO', '', 300);
    return r.length === 1 && r[0]!['error'] === undefined;
  });
  return c;
}

describe('clustered JetStream in one process: who answers', () => {
  it('never answers twice while the meta group forms (10008 from one node at most), then exactly once from the leader', async () => {
    const c = (cluster = await InProcessCluster.start(3));
    // Bootstrap waits for the set of nodes to settle: nobody leads yet. A node answers 10008 only once the meta
    // group has been leaderless past the threshold, and only the lowest linked node does.
    const early = await c.request(2, '$JS.API.STREAM.NAMES', '', 3_500);
    expect(early.length).toBeLessThanOrEqual(1);
    for (const r of early) expect(r['error']).toEqual(UNAVAILABLE);
    await withMetaLeaderOn(c);
    const names = await c.request(3, '$JS.API.STREAM.NAMES');
    expect(names).toEqual([{ type: 'io.nats.jetstream.api.v1.stream_names_response', total: 0, offset: 0, limit: 1024, streams: null }]);
    const views = c.services.map((s) => s.cluster!);
    const leaders = views.map((v) => v.metaLeaderName());
    expect(new Set(leaders).size).toBe(1);
    expect(['n1', 'n2', 'n3']).toContain(leaders[0]);
    expect(views.every((v) => v.clusterSize() === 3 && v.healthError() === null)).toBe(true);
  }, 30_000);

  it('creates an R3 memory stream through any node; its leader acks publishes and alone answers STREAM.INFO', async () => {
    const c = await withMetaLeader();
    const created = await c.request(2, '$JS.API.STREAM.CREATE.M', { name: 'M', subjects: ['m.>'], storage: 'memory', num_replicas: 3 }, 3_000);
    expect(created).toHaveLength(1);
    expect(created[0]!['did_create']).toBe(true);
    const leader = (created[0]!['cluster'] as { leader: string }).leader;
    expect(['n1', 'n2', 'n3']).toContain(leader);
    const ack = await c.request(3, 'm.x', 'hello', 1_000);
    expect(ack).toEqual([{ stream: 'M', seq: 1 }]);
    const info = await c.request(1, '$JS.API.STREAM.INFO.M');
    expect(info).toHaveLength(1);
    expect(info[0]!['state']).toMatchObject({ messages: 1, last_seq: 1 });
    // Every node's catalogue and replica set agree.
    await c.waitFor(() => c.services.every((s) => s.cluster!.replicas().length === 1));
    expect(c.services.map((s) => s.cluster!.streamAssignments().map((a) => a.config.name))).toEqual([['M'], ['M'], ['M']]);
    // Unknown streams: the meta leader alone says so.
    const missing = await c.request(3, '$JS.API.STREAM.INFO.NOPE');
    expect(missing.map((r) => (r['error'] as { err_code: number }).err_code)).toEqual([10059]);
    const deleted = await c.request(1, '$JS.API.STREAM.DELETE.M', '', 1_000);
    expect(deleted).toEqual([{ type: 'io.nats.jetstream.api.v1.stream_delete_response', success: true }]);
    await c.waitFor(() => c.services.every((s) => s.cluster!.replicas().length === 0));
  }, 30_000);

  it('without a quorum the survivor answers catalogue calls with 10008 and reports no meta leader', async () => {
    const c = await withMetaLeader();
    c.isolate(1);
    c.isolate(2);
    await c.waitFor(async () => {
      const r = await c.request(3, '$JS.API.INFO', '', 400);
      return r.length === 1 && r[0]!['error'] !== undefined;
    });
    const r = await c.request(3, '$JS.API.STREAM.CREATE.X', { name: 'X' });
    expect(r.map((x) => x['error'])).toEqual([UNAVAILABLE]);
    const view = c.services[2]!.cluster!;
    expect(view.metaLeaderName()).toBe('');
    expect(view.healthError()).toBe('JetStream has not established contact with a meta leader');
  }, 30_000);
});

async function withMetaLeaderOn(c: InProcessCluster): Promise<void> {
  await c.waitFor(async () => {
    const r = await c.request(1, '$JS.API.INFO', '', 300);
    return r.length === 1 && r[0]!['error'] === undefined;
  });
}
