// A cluster from config files, a refused node, a node restart, and the fault hook's partition and heal —
// real processes, real `nats` client.
import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import {
  awaitInterest,
  freePort,
  infoOf,
  startCluster,
  startNode,
  stopAll,
  waitForConnectUrls,
  waitForMesh,
  type ClusterNodeProcess,
} from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

const started: ClusterNodeProcess[] = [];
const conns: NatsConnection[] = [];
afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.close().catch(() => undefined)));
  await stopAll(started.splice(0));
});

async function connectTo(n: ClusterNodeProcess): Promise<NatsConnection> {
  const nc = await connect({ servers: n.url, name: n.name });
  conns.push(nc);
  return nc;
}

describe('cluster from config files', () => {
  it('forms from `cluster { name, listen, routes }` blocks that all list every node, itself included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-cluster-conf-'));
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const routes = ports.map((p) => `    "nats-route://127.0.0.1:${p}"`).join('\n');
    const files = ports.map((p, i) => {
      const f = join(dir, `n${i + 1}.conf`);
      writeFileSync(
        f,
        [`server_name: cf${i + 1}`, 'cluster {', '  name: "from-files"', `  listen: 127.0.0.1:${p}`, '  routes: [', routes, '  ]', '}', ''].join('\n'),
      );
      return f;
    });
    const results = await Promise.allSettled(files.map((f, i) => startNode({ name: `cf${i + 1}`, clusterName: 'from-files', rawClusterArgs: ['-c', f] })));
    const nodes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    started.push(...nodes);
    expect(nodes).toHaveLength(3);
    expect(nodes.map((n) => n.clusterPort)).toEqual(ports);
    await waitForMesh(nodes);
    expect((await infoOf(nodes[2]!.port))['cluster']).toBe('from-files');
    const [a, , c] = await Promise.all(nodes.map(connectTo));
    const got: string[] = [];
    c!.subscribe('conf.*', { callback: (_e, m) => got.push(dec.decode(m.data)) });
    await awaitInterest(c!, [a!]);
    a!.publish('conf.x', enc.encode('hello'));
    await until(() => got.length === 1);
    expect(got).toEqual(['hello']);
  }, 60_000);
});

describe('identity checks', () => {
  it('refuses a node with the wrong cluster name, logs it, and keeps it out of connect_urls', async () => {
    const good = await startNode({ name: 'g1', clusterName: 'right' });
    started.push(good);
    const bad = await startNode({ name: 'b1', clusterName: 'wrong', routes: [`127.0.0.1:${good.clusterPort}`] });
    started.push(bad);
    await until(() => /refusing route: cluster name mismatch/.test(good.output()), 10_000);
    await until(() => /cluster name mismatch|route refused by peer/.test(bad.output()), 10_000);
    await sleep(300);
    expect((await infoOf(good.port))['connect_urls']).toEqual([`127.0.0.1:${good.port}`]);
    expect((await infoOf(bad.port))['connect_urls']).toEqual([`127.0.0.1:${bad.port}`]);
    // And no traffic crosses.
    const [g, b] = await Promise.all([connectTo(good), connectTo(bad)]);
    let got = 0;
    b.subscribe('x', { callback: () => got++ });
    await b.flush();
    await sleep(200);
    g.publish('x', enc.encode('1'));
    await g.flush();
    await sleep(200);
    expect(got).toBe(0);
  }, 60_000);
});

describe('restart and faults', () => {
  it('a restarted node rejoins, re-learns interest, and serves its new subscribers', async () => {
    const nodes = await startCluster(3, 'restart');
    started.push(...nodes);
    const [a, b] = await Promise.all([connectTo(nodes[0]!), connectTo(nodes[1]!)]);
    const onB: string[] = [];
    b.subscribe('keep.>', { callback: (_e, m) => onB.push(dec.decode(m.data)) });
    await awaitInterest(b, [a]);

    // n3 goes away: connect_urls shrink.
    const n3 = nodes[2]!;
    await n3.stop();
    started.splice(started.indexOf(n3), 1);
    await waitForConnectUrls(nodes.slice(0, 2), nodes.slice(0, 2));

    // A new n3 routed only to n2 joins the whole mesh again.
    const n3b = await startNode({ name: 'n3', clusterName: 'restart', routes: [`127.0.0.1:${nodes[1]!.clusterPort}`] });
    started.push(n3b);
    const all = [nodes[0]!, nodes[1]!, n3b];
    await waitForMesh(all);
    const c = await connectTo(n3b);
    const onC: string[] = [];
    c.subscribe('keep.>', { callback: (_e, m) => onC.push(dec.decode(m.data)) });
    await awaitInterest(c, [a, b]);
    // The new node learned n2's old subscription in the full sync: its publish reaches n2.
    c.publish('keep.from3', enc.encode('from3'));
    a.publish('keep.from1', enc.encode('from1'));
    await Promise.all([a.flush(), c.flush()]);
    await until(() => onB.length === 2 && onC.length === 2);
    expect(onB.sort()).toEqual(['from1', 'from3']);
    expect(onC.sort()).toEqual(['from1', 'from3']);
  }, 60_000);

  it('fault hook: partitioning n1 from n2 stops traffic between them only; heal resyncs interest', async () => {
    const nodes = await startCluster(3, 'faults', true);
    started.push(...nodes);
    const [a, b, c] = await Promise.all(nodes.map(connectTo));
    const onB: string[] = [];
    const onC: string[] = [];
    b!.subscribe('part.>', { callback: (_e, m) => onB.push(dec.decode(m.data)) });
    c!.subscribe('part.>', { callback: (_e, m) => onC.push(dec.decode(m.data)) });
    await awaitInterest(b!, [a!]);
    await awaitInterest(c!, [a!]);

    const reply = await a!.request('$FLOTILLA.FAULT.n1', enc.encode(JSON.stringify({ op: 'partition', peers: ['n2'] })), { timeout: 2000 });
    const state = JSON.parse(dec.decode(reply.data)) as { ok: boolean; faults: { partitioned: string[] } };
    expect(state.ok).toBe(true);
    expect(state.faults.partitioned).toEqual(['n2']);
    await waitForConnectUrls([nodes[0]!], [nodes[0]!, nodes[2]!]);
    await waitForConnectUrls([nodes[1]!], [nodes[1]!, nodes[2]!]);

    // Interest that changes during the partition must arrive after the heal.
    const onB2: string[] = [];
    b!.subscribe('later.*', { callback: (_e, m) => onB2.push(dec.decode(m.data)) });
    await b!.flush();
    a!.publish('part.during', enc.encode('during'));
    await a!.flush();
    await until(() => onC.includes('during'));
    await sleep(300);
    expect(onB).not.toContain('during'); // n3 never re-forwards n1's message to n2

    const healed = await a!.request('$FLOTILLA.FAULT.n1', enc.encode(JSON.stringify({ op: 'heal' })), { timeout: 2000 });
    expect((JSON.parse(dec.decode(healed.data)) as { faults: { partitioned: string[] } }).faults.partitioned).toEqual([]);
    await waitForMesh(nodes);
    await awaitInterest(b!, [a!]);
    a!.publish('part.after', enc.encode('after'));
    a!.publish('later.x', enc.encode('later'));
    await a!.flush();
    await until(() => onB.includes('after') && onB2.includes('later'));
    expect(onB.filter((m) => m === 'after')).toHaveLength(1);
    expect(onB2).toEqual(['later']);

    const bad = await a!.request('$FLOTILLA.FAULT.n1', enc.encode('{"op":"explode"}'), { timeout: 2000 });
    expect(JSON.parse(dec.decode(bad.data))).toEqual({ ok: false, error: 'unknown op explode' });
  }, 60_000);

  it('fault hook is off unless FLOTILLA_FAULT_HOOK=1', async () => {
    const nodes = await startCluster(2, 'nofaults');
    started.push(...nodes);
    const a = await connectTo(nodes[0]!);
    const err = await a.request('$FLOTILLA.FAULT.n1', enc.encode('{"op":"status"}'), { timeout: 1000 }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe('503');
  }, 60_000);
});
