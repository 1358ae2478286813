// Core NATS across a three-node cluster of real processes, through the real `nats` client.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, headers, ErrorCode, type NatsConnection, type NatsError, type Msg } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { RawClient } from './helpers/raw-client.js';
import {
  awaitInterest,
  infoOf,
  startCluster,
  startNode,
  stopAll,
  waitForConnectUrls,
  type ClusterNodeProcess,
} from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('three-node cluster from --cluster/--routes flags', () => {
  let nodes: ClusterNodeProcess[] = [];
  let conns: NatsConnection[] = [];

  beforeAll(async () => {
    nodes = await startCluster(3, 'core');
    conns = await Promise.all(nodes.map((n) => connect({ servers: n.url, name: n.name })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(conns.map((c) => c.close()));
    if (process.env['CLUSTER_DEBUG']) for (const n of nodes) console.log(n.name, n.output());
    await stopAll(nodes);
  });

  it('lists every node in INFO connect_urls and names the cluster', async () => {
    for (const n of nodes) {
      const info = await infoOf(n.port);
      expect(info['cluster']).toBe('core');
      expect([...(info['connect_urls'] as string[])].sort()).toEqual(nodes.map((x) => `127.0.0.1:${x.port}`).sort());
      expect((info['connect_urls'] as string[])[0]).toBe(`127.0.0.1:${n.port}`);
    }
    expect(conns[0]!.info?.cluster).toBe('core');
  }, 60_000);

  it('reports its routes on /routez and /varz', async () => {
    for (const n of nodes) {
      const routez = (await (await fetch(`http://127.0.0.1:${n.httpPort}/routez`)).json()) as {
        server_name: string;
        num_routes: number;
        routes: Array<{ remote_name: string }>;
      };
      expect(routez.server_name).toBe(n.name);
      expect(routez.num_routes).toBe(2);
      expect(routez.routes.map((r) => r.remote_name).sort()).toEqual(nodes.filter((x) => x !== n).map((x) => x.name).sort());
      const varz = (await (await fetch(`http://127.0.0.1:${n.httpPort}/varz`)).json()) as { routes: number };
      expect(varz.routes).toBe(2);
    }
  }, 60_000);

  it('delivers a message published on node 1 exactly once to each matching subscription on nodes 2 and 3, in order', async () => {
    const [a, b, c] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const got: Record<string, string[]> = { bStar: [], bGt: [], cGt: [], cExact: [] };
    const subs = [
      b.subscribe('wild.*', { callback: (_e, m) => got['bStar']!.push(`${m.subject}:${dec.decode(m.data)}`) }),
      b.subscribe('wild.>', { callback: (_e, m) => got['bGt']!.push(`${m.subject}:${dec.decode(m.data)}`) }),
      c.subscribe('wild.>', { callback: (_e, m) => got['cGt']!.push(`${m.subject}:${dec.decode(m.data)}`) }),
      c.subscribe('wild.x', { callback: (_e, m) => got['cExact']!.push(`${m.subject}:${dec.decode(m.data)}`) }),
    ];
    await awaitInterest(b, [a]);
    await awaitInterest(c, [a]);
    const count = 500;
    for (let i = 0; i < count; i++) a.publish(i % 2 === 0 ? 'wild.x' : 'wild.y.z', enc.encode(String(i)));
    await a.flush();
    const expectedAll = Array.from({ length: count }, (_, i) => `${i % 2 === 0 ? 'wild.x' : 'wild.y.z'}:${i}`);
    await until(() => got['cGt']!.length >= count && got['bGt']!.length >= count);
    await sleep(100); // anything duplicated would have arrived by now
    expect(got['bGt']).toEqual(expectedAll);
    expect(got['cGt']).toEqual(expectedAll);
    expect(got['bStar']).toEqual(expectedAll.filter((s) => s.startsWith('wild.x:')));
    expect(got['cExact']).toEqual(expectedAll.filter((s) => s.startsWith('wild.x:')));
    for (const s of subs) s.unsubscribe();
  }, 60_000);

  it('carries headers, empty and large payloads, and reply subjects across nodes unchanged', async () => {
    const [a, b] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const got: Msg[] = [];
    const sub = b.subscribe('shape.*', { callback: (_e, m) => got.push(m) });
    await awaitInterest(b, [a]);
    const h = headers();
    h.set('X-Trace', 'abc');
    h.append('X-Multi', '1');
    h.append('X-Multi', '2');
    const big = new Uint8Array(600 * 1024).map((_, i) => i % 251);
    a.publish('shape.h', enc.encode('with headers'), { headers: h, reply: 'reply.here' });
    a.publish('shape.empty', new Uint8Array(0));
    a.publish('shape.big', big);
    await a.flush();
    await until(() => got.length === 3);
    expect(got[0]!.headers?.get('X-Trace')).toBe('abc');
    expect(got[0]!.headers?.values('X-Multi')).toEqual(['1', '2']);
    expect(dec.decode(got[0]!.data)).toBe('with headers');
    expect(got[0]!.reply).toBe('reply.here');
    expect(got[1]!.data.length).toBe(0);
    expect(got[1]!.headers).toBeUndefined();
    expect(Buffer.from(got[2]!.data).equals(Buffer.from(big))).toBe(true);
    sub.unsubscribe();
  }, 60_000);

  it('gives each message to exactly one queue member cluster-wide, a member on the publishing node no more than its share', async () => {
    const [a, b, c] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const byNode = { a: 0, b: 0, c: 0 };
    const seen = new Map<string, number>();
    const note = (who: 'a' | 'b' | 'c') => (_e: NatsError | null, m: Msg) => {
      byNode[who]++;
      const k = dec.decode(m.data);
      seen.set(k, (seen.get(k) ?? 0) + 1);
    };
    const qb = b.subscribe('work', { queue: 'workers', callback: note('b') });
    const qc = c.subscribe('work', { queue: 'workers', callback: note('c') });
    await awaitInterest(b, [a]);
    await awaitInterest(c, [a]);
    const count = 200;
    for (let i = 0; i < count; i++) a.publish('work', enc.encode(String(i)));
    await a.flush();
    await until(() => byNode.b + byNode.c >= count);
    await sleep(100);
    expect(byNode.b + byNode.c).toBe(count);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(seen.size).toBe(count);
    // Spread across both remote members.
    expect(byNode.b).toBeGreaterThan(count / 5);
    expect(byNode.c).toBeGreaterThan(count / 5);

    // A member on the publishing node is drawn like the others (nats-server picks among all of the cluster's
    // members): about a third each of 600, standard deviation 12, so [120, 300] holds with 7 of them.
    const qa = a.subscribe('work', { queue: 'workers', callback: note('a') });
    await a.flush();
    byNode.a = byNode.b = byNode.c = 0;
    seen.clear();
    const more = 600;
    for (let i = 0; i < more; i++) a.publish('work', enc.encode(`L${i}`));
    await a.flush();
    await until(() => byNode.a + byNode.b + byNode.c >= more);
    await sleep(100);
    expect(byNode.a + byNode.b + byNode.c).toBe(more);
    expect(seen.size).toBe(more);
    for (const n of Object.values(byNode)) {
      expect(n).toBeGreaterThanOrEqual(more / 5);
      expect(n).toBeLessThanOrEqual(more / 2);
    }
    qa.unsubscribe();
    qb.unsubscribe();
    qc.unsubscribe();
  }, 60_000);

  it('answers a request on node 1 from a responder on node 3, and sends 503 when nobody anywhere listens', async () => {
    const [a, , c] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const svc = c.subscribe('svc.echo', { callback: (_e, m) => m.respond(enc.encode(`echo:${dec.decode(m.data)}@n3`)) });
    await awaitInterest(c, [a]);
    for (let i = 0; i < 20; i++) {
      const reply = await a.request('svc.echo', enc.encode(String(i)), { timeout: 2000 });
      expect(dec.decode(reply.data)).toBe(`echo:${i}@n3`);
    }
    const err = await a.request('svc.nobody', enc.encode('x'), { timeout: 2000 }).catch((e: NatsError) => e);
    expect((err as NatsError).code).toBe(ErrorCode.NoResponders);
    svc.unsubscribe();
  }, 60_000);

  it('propagates an unsubscribe: the remote responder gone, node 1 answers 503', async () => {
    const [a, b] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const svc = b.subscribe('svc.leaving', { callback: (_e, m) => m.respond(enc.encode('here')) });
    await awaitInterest(b, [a]);
    expect(dec.decode((await a.request('svc.leaving', enc.encode(''), { timeout: 2000 })).data)).toBe('here');
    svc.unsubscribe();
    await b.flush();
    const deadline = Date.now() + 5000;
    let code = '';
    while (Date.now() < deadline) {
      const r = await a.request('svc.leaving', enc.encode(''), { timeout: 500 }).catch((e: NatsError) => e);
      code = r instanceof Error ? (r as NatsError).code : 'reply';
      if (code === ErrorCode.NoResponders) break;
      await sleep(20);
    }
    expect(code).toBe(ErrorCode.NoResponders);
  }, 60_000);

  it('sends an async INFO with the new connect_urls when a node joins and when it leaves', async () => {
    const raw = await RawClient.connect(nodes[0]!.port);
    raw.send('CONNECT {"protocol":1,"verbose":false}\r\nPING\r\n');
    await raw.waitFor(/PONG\r\n/);
    raw.clear();
    const extra = await startNode({ name: 'n4', clusterName: 'core', routes: [`127.0.0.1:${nodes[1]!.clusterPort}`] });
    try {
      const m = await raw.waitFor(new RegExp(`INFO (\\{[^\\r]*127\\.0\\.0\\.1:${extra.port}[^\\r]*\\}) ?\\r\\n`), 10_000);
      const info = JSON.parse(m[1]!) as { connect_urls: string[] };
      expect(info.connect_urls).toHaveLength(4);
      await waitForConnectUrls([...nodes, extra], [...nodes, extra]);
    } finally {
      raw.clear();
      await extra.stop();
    }
    // The latest async INFO after the stop no longer lists it.
    const lastUrls = (): string[] | null => {
      const infos = [...raw.received.matchAll(/INFO (\{[^\r]*\}) ?\r\n/g)];
      return infos.length === 0 ? null : (JSON.parse(infos[infos.length - 1]![1]!) as { connect_urls: string[] }).connect_urls;
    };
    await until(() => {
      const urls = lastUrls();
      return urls !== null && !urls.includes(`127.0.0.1:${extra.port}`);
    });
    expect(lastUrls()).toHaveLength(3);
    raw.close();
    await waitForConnectUrls(nodes, nodes);
  }, 60_000);
});

