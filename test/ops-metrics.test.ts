// /metrics on every node of a 3-node JetStream cluster around a publish workload: messages counted equal
// messages published on every replica, exactly one leader per Raft group across the nodes, replication lag
// back to 0 after the load, fsync and proposal histograms moving, peer link series; plus the cluster views
// of /jsz, /varz, /healthz and /routez.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy, type JetStreamManager, type NatsConnection } from 'nats';
import { JsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { scrape, select, valueOf, type Sample } from './ops-prometheus-text.js';

const MESSAGES = 400;
const PARALLEL = 40;

let cluster: JsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;

const scrapeAll = (): Promise<Sample[][]> => Promise.all(cluster.running().map((n) => scrape(n.httpPort)));
const sum = (samples: Sample[]): number => samples.reduce((a, s) => a + s.value, 0);

/** group → number of nodes reporting themselves its leader */
function leadersPerGroup(perNode: Sample[][]): Map<string, number> {
  const out = new Map<string, number>();
  for (const samples of perNode) {
    for (const s of select(samples, 'flotilla_raft_group_role', { role: 'leader' })) out.set(s.labels['group']!, (out.get(s.labels['group']!) ?? 0) + s.value);
  }
  return out;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await probe();
      if (v !== null) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms ${last ? String(last) : ''}\n${cluster.outputTails(1500)}`);
    await sleep(200);
  }
}

beforeAll(async () => {
  cluster = await JsCluster.start({ size: 3, clusterName: 'OPS' });
  nc = await cluster.connect('n1');
  jsm = await nc.jetstreamManager();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('/metrics across a 3-node cluster', () => {
  it('counts the workload on every replica, one leader per group, lag back to 0, histograms moving', async () => {
    await addStream(jsm, { name: 'LOAD', subjects: ['load.>'], num_replicas: 3 });
    await cluster.waitForStreamLeader(jsm, 'LOAD');
    await jsm.consumers.add('LOAD', { durable_name: 'reader', ack_policy: AckPolicy.Explicit });
    const before = await scrapeAll();
    const fsyncBefore = before.map((s) => valueOf(s, 'flotilla_fsync_seconds_count', { kind: 'raft_log' }));

    const js = nc.jetstream();
    const payload = new TextEncoder().encode('x'.repeat(100));
    let published = 0;
    let during: Sample[][] = [];
    for (let i = 0; i < MESSAGES; i += PARALLEL) {
      const acks = await Promise.all(Array.from({ length: PARALLEL }, (_, k) => js.publish(`load.${(i + k) % 7}`, payload)));
      published += acks.length;
      if (i === MESSAGES / 2) during = await scrapeAll(); // a scrape in the middle of the load answers too
    }
    expect(published).toBe(MESSAGES);
    expect(during.length).toBe(3);

    // Every replica counts exactly what was acknowledged.
    const after = await until('every replica holding every message', 20_000, async () => {
      const all = await scrapeAll();
      return all.every((s) => valueOf(s, 'flotilla_stream_messages', { stream: 'LOAD' }) === MESSAGES) ? all : null;
    });
    for (const s of after) {
      expect(valueOf(s, 'flotilla_stream_last_seq', { stream: 'LOAD' })).toBe(MESSAGES);
      expect(valueOf(s, 'flotilla_stream_first_seq', { stream: 'LOAD' })).toBe(1);
    }

    // Exactly one leader per Raft group (the meta group and the stream's), as the nodes report it.
    const leaders = await until('one leader per group', 10_000, async () => {
      const per = leadersPerGroup(await scrapeAll());
      return [...per.values()].every((n) => n === 1) ? per : null;
    });
    expect(leaders.size).toBe(2);
    const kinds = new Set(after.flatMap((s) => select(s, 'flotilla_raft_group_role', { role: 'leader' }).map((x) => x.labels['kind'])));
    expect(kinds).toEqual(new Set(['meta', 'stream']));

    // Replication lag back to 0: the stream leader sees both followers caught up.
    const streamGroup = select(after[0]!, 'flotilla_raft_group_role', { kind: 'stream', stream: 'LOAD', role: 'leader' })[0]!.labels['group']!;
    await until('replication lag 0 on the stream leader', 15_000, async () => {
      const all = await scrapeAll();
      const leader = all.find((s) => valueOf(s, 'flotilla_raft_group_role', { group: streamGroup, role: 'leader' }) === 1);
      if (leader === undefined) return null;
      const lag = select(leader, 'flotilla_raft_replica_lag_entries', { group: streamGroup });
      const current = select(leader, 'flotilla_raft_replica_current', { group: streamGroup });
      return lag.length === 2 && sum(lag) === 0 && sum(current) === 2 ? true : null;
    });
    // Every node's applied index reached its commit index for the stream group.
    const applied = await until('applied = commit on every node', 10_000, async () => {
      const all = await scrapeAll();
      const pairs = all.map((s) => [valueOf(s, 'flotilla_raft_group_commit_index', { group: streamGroup }), valueOf(s, 'flotilla_raft_group_applied_index', { group: streamGroup })]);
      return pairs.every(([c, a]) => c === a && c! > 0) ? pairs : null;
    });
    expect(new Set(applied.map(([c]) => c)).size).toBe(1);

    // Every node fsynced its Raft log for the load; the stream leader timed its proposals.
    const final = await scrapeAll();
    final.forEach((s, i) => expect(valueOf(s, 'flotilla_fsync_seconds_count', { kind: 'raft_log' })).toBeGreaterThan(fsyncBefore[i]!));
    const proposals = final.map((s) => sum(select(s, 'flotilla_raft_proposal_commit_seconds_count', { kind: 'stream' })));
    expect(Math.max(...proposals)).toBeGreaterThan(0);

    // Peer links: each node is linked to two peers and has sent them bytes and messages.
    for (const s of final) {
      expect(sum(select(s, 'flotilla_peer_connected'))).toBe(2);
      expect(select(s, 'flotilla_peer_sent_bytes_total').every((x) => x.value > 0)).toBe(true);
      expect(select(s, 'flotilla_peer_received_messages_total').every((x) => x.value > 0)).toBe(true);
    }
  }, 90_000);

  it('consumer series on the consumer leader follow deliveries and acks', async () => {
    const c = await nc.jetstream().consumers.get('LOAD', 'reader');
    const got = await c.fetch({ max_messages: 50, expires: 3000 });
    let n = 0;
    for await (const m of got) {
      if (n < 30) m.ack();
      n++;
    }
    await nc.flush();
    expect(n).toBe(50);
    const labels = { stream: 'LOAD', consumer: 'reader' };
    const row = await until('consumer series on its leader', 10_000, async () => {
      const all = await scrapeAll();
      const onLeader = all.filter((s) => select(s, 'flotilla_consumer_num_pending', labels).length === 1);
      if (onLeader.length !== 1) return null;
      const s = onLeader[0]!;
      return valueOf(s, 'flotilla_consumer_ack_floor_stream_seq', labels) === 30 ? s : null;
    });
    expect(valueOf(row, 'flotilla_consumer_num_pending', labels)).toBe(MESSAGES - 50);
    expect(valueOf(row, 'flotilla_consumer_num_ack_pending', labels)).toBe(20);
    expect(valueOf(row, 'flotilla_consumer_delivered_stream_seq', labels)).toBe(50);
  }, 30_000);
});

describe('cluster monitoring JSON', () => {
  it('/jsz meta_cluster, /varz jetstream.meta, /healthz and /routez peers agree', async () => {
    const nodes = cluster.running();
    const jszs = await Promise.all(nodes.map(async (n) => (await (await fetch(`http://127.0.0.1:${n.httpPort}/jsz?streams=true`)).json()) as any));
    const leader = jszs[0].meta_cluster.leader as string;
    expect(['n1', 'n2', 'n3']).toContain(leader);
    for (const [i, j] of jszs.entries()) {
      expect(j.meta_cluster).toMatchObject({ name: 'OPS', leader, cluster_size: 3 });
      expect(j.meta_cluster.peer).toMatch(/^[A-Za-z0-9_-]{8}$/);
      expect(j.meta_cluster.replicas.map((r: any) => r.name)).toEqual(['n1', 'n2', 'n3'].filter((x) => x !== nodes[i]!.name));
      expect(j.ha_assets).toBeGreaterThanOrEqual(2);
      const detail = j.account_details[0].stream_detail.find((d: any) => d.name === 'LOAD');
      expect(detail.cluster.name).toBe('OPS');
      expect(detail.state.messages).toBe(MESSAGES);
    }
    // leader-only: only the meta leader answers.
    const statuses = await Promise.all(nodes.map(async (n) => (await fetch(`http://127.0.0.1:${n.httpPort}/jsz?leader-only=true`)).status));
    expect(statuses.filter((s) => s === 200).length).toBe(1);
    expect(statuses.filter((s) => s === 400).length).toBe(2);

    const varz = (await (await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/varz`)).json()) as any;
    expect(varz.jetstream.meta).toMatchObject({ name: 'OPS', leader, cluster_size: 3 });
    expect(varz.jetstream.stats.ha_assets).toBeGreaterThanOrEqual(2);
    expect(varz.cluster.name).toBe('OPS');

    for (const n of nodes) {
      const h = await fetch(`http://127.0.0.1:${n.httpPort}/healthz`);
      expect(h.status).toBe(200);
      const routez = (await (await fetch(`http://127.0.0.1:${n.httpPort}/routez`)).json()) as any;
      expect(routez.peers.map((p: any) => [p.name, p.health])).toEqual(
        ['n1', 'n2', 'n3'].filter((x) => x !== n.name).map((x) => [x, 'ok']),
      );
      expect(routez.routes.every((r: any) => r.health === 'ok')).toBe(true);
      expect(routez.peers.every((p: any) => p.meta?.current === true)).toBe(true);
    }
  }, 30_000);
});

describe('a peer lost and back, then quorum lost', () => {
  it('/routez and peer series follow a node leaving and returning; /healthz turns 503 without a meta leader', async () => {
    const n1 = cluster.node('n1');
    const peersOf = async (): Promise<Map<string, string>> =>
      new Map((((await (await fetch(`http://127.0.0.1:${n1.httpPort}/routez`)).json()) as any).peers as any[]).map((p) => [p.name, p.health]));

    await cluster.terminate('n3');
    await until('n3 down in n1 /routez', 10_000, async () => ((await peersOf()).get('n3') === 'down' ? true : null));
    const downSamples = await scrape(n1.httpPort);
    expect(valueOf(downSamples, 'flotilla_peer_connected', { peer: 'n3' })).toBe(0);
    expect(valueOf(downSamples, 'flotilla_peer_connected', { peer: 'n2' })).toBe(1);
    // Two of three still form the meta quorum.
    expect((await fetch(`http://127.0.0.1:${n1.httpPort}/healthz`)).status).toBe(200);

    await cluster.restart('n3');
    await until('n3 back and healthy', 30_000, async () => ((await fetch(`http://127.0.0.1:${cluster.node('n3').httpPort}/healthz`)).status === 200 ? true : null));
    await until('n3 ok in n1 /routez', 10_000, async () => ((await peersOf()).get('n3') === 'ok' ? true : null));
    const back = await scrape(n1.httpPort);
    expect(valueOf(back, 'flotilla_peer_connected', { peer: 'n3' })).toBe(1);
    expect(valueOf(back, 'flotilla_peer_reconnects_total', { peer: 'n3' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(back, 'flotilla_peer_reconnects_total', { peer: 'n2' }), n1.output().split('\n').filter((l) => /route (closed|connected)/.test(l)).join('\n')).toBe(0);

    await Promise.all([cluster.kill('n2'), cluster.kill('n3')]);
    const started = Date.now();
    // First a stream or the meta group stops being current, then (nats-server: ~13 s) the meta leader is gone.
    const first = await until('n1 /healthz 503', 40_000, async () => {
      const res = await fetch(`http://127.0.0.1:${n1.httpPort}/healthz`);
      return res.status === 503 ? Date.now() : null;
    });
    const answer = await until('n1 /healthz: no meta leader', 40_000, async () => {
      const res = await fetch(`http://127.0.0.1:${n1.httpPort}/healthz`);
      const body = (await res.json()) as { status: string; error?: string };
      return res.status === 503 && /meta leader/.test(body.error ?? '') ? body : null;
    });
    expect(answer).toEqual({ status: 'unavailable', error: 'JetStream has not established contact with a meta leader' });
    console.log(`quorum loss: /healthz 503 after ${first - started} ms, no meta leader after ${Date.now() - started} ms`);
    const lone = await scrape(n1.httpPort);
    expect(valueOf(lone, 'flotilla_raft_group_has_leader', { kind: 'meta' })).toBe(0);
  }, 90_000);
});
