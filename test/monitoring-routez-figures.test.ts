// /routez per-route figures as nats-server 2.14's RouteInfo (monitor.go): rid, remote_id, did_solicit,
// is_configured, ip, port, start, last_activity, uptime, idle, pending_size, in/out msgs and bytes,
// subscriptions, on a three-node cluster through the stock `nats` client: messages published on one node to a
// subscriber on another raise the sender's out_msgs/out_bytes towards that peer and the receiver's in_msgs.
// Runs against nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect } from 'vitest';
import { JsCluster, useJsCluster } from './helpers/js-cluster.js';
import { until } from './helpers/until.js';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'ROUTEZ' }, (c) => (cluster = c));

type Route = Record<string, any>;
const routez = async (node: string): Promise<Route> => (await (await fetch(`http://127.0.0.1:${cluster.node(node).httpPort}/routez`)).json()) as Route;
const routeTo = (r: Route, serverId: string): Route | undefined => (r['routes'] as Route[]).find((x) => x['remote_id'] === serverId);
const serverIdOf = async (node: string): Promise<string> =>
  ((await (await fetch(`http://127.0.0.1:${cluster.node(node).httpPort}/varz`)).json()) as { server_id: string }).server_id;

describe('/routez route figures', () => {
  it('carries nats-server\'s per-route fields, and counts traffic each way', async () => {
    const [id1, id2] = [await serverIdOf('n1'), await serverIdOf('n2')];
    const sub = await cluster.connect('n2');
    const received: string[] = [];
    sub.subscribe('routez.figures', { callback: (_e, m) => received.push(m.string()) });
    await sub.flush();
    const pub = await cluster.connect('n1');
    // Wait until n1 knows n2's interest, then measure.
    await until(async () => {
      pub.publish('routez.figures', 'probe');
      await pub.flush();
      return received.length > 0;
    }, 20_000, 'the subscription to reach n1');
    const before1 = routeTo(await routez('n1'), id2)!;
    const before2 = routeTo(await routez('n2'), id1)!;
    for (let i = 0; i < 50; i++) pub.publish('routez.figures', 'x'.repeat(100));
    await pub.flush();
    await until(() => received.filter((m) => m !== 'probe').length >= 50, 20_000, '50 messages on n2');
    const after1 = routeTo(await routez('n1'), id2)!;
    const after2 = routeTo(await routez('n2'), id1)!;

    for (const key of ['rid', 'remote_id', 'did_solicit', 'is_configured', 'ip', 'port', 'start', 'last_activity', 'uptime', 'idle', 'pending_size', 'in_msgs', 'out_msgs', 'in_bytes', 'out_bytes', 'subscriptions']) {
      expect(after1, key).toHaveProperty(key);
    }
    expect(typeof after1['rid']).toBe('number');
    expect(after1['ip']).toBe('127.0.0.1');
    expect(after1['port']).toBeGreaterThan(0);
    expect(Date.parse(after1['start'])).toBeLessThanOrEqual(Date.now());
    expect(after1['uptime']).toMatch(/^(\d+[dhms])+$/);
    expect(after1['pending_size']).toBeGreaterThanOrEqual(0);
    expect(after1['out_msgs'] - before1['out_msgs']).toBeGreaterThanOrEqual(50);
    expect(after1['out_bytes'] - before1['out_bytes']).toBeGreaterThanOrEqual(50 * 100);
    expect(after2['in_msgs'] - before2['in_msgs']).toBeGreaterThanOrEqual(50);
    expect(after2['in_bytes'] - before2['in_bytes']).toBeGreaterThanOrEqual(50 * 100);
    // n2 carries the subscription's interest towards n1.
    expect(after1['subscriptions']).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
