// /routez in nats-server's own shape on two real nodes with accounts: `now`, each route's `subscriptions`,
// `?subs=1` the subjects it carries, `?subs=detail` each with its queue group and a sid naming its account (the
// per-account interest as nats-server shows it), and a bad `subs` value refused with 400. Runs against nats-server 2.9.10
// too (E2E_SERVER=nats-server).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-routez-subs-'));
const conns: NatsConnection[] = [];
let nodes: ClusterNodeProcess[] = [];

type Route = Record<string, any>;

async function routeToN2(query: string): Promise<{ body: Record<string, any>; route: Route | undefined }> {
  const body = (await (await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez${query}`)).json()) as Record<string, any>;
  // n1's one route (2.9.10's RouteInfo has no remote_name)
  const routes = body['routes'] as Route[];
  return { body, route: routes.length === 1 ? routes[0] : undefined };
}

beforeAll(async () => {
  const conf = join(dir, 'accounts.conf');
  writeFileSync(conf, 'accounts {\n  A: { users: [ { user: a, password: a } ] }\n  B: { users: [ { user: b, password: b } ] }\n}\n');
  const natsServer = AGAINST_NATS_SERVER;
  const first = await startNode({ name: 'n1', clusterName: 'routezsubs', extraArgs: ['-c', conf], natsServer });
  nodes = [first];
  nodes.push(await startNode({ name: 'n2', clusterName: 'routezsubs', routes: [`127.0.0.1:${first.clusterPort}`], extraArgs: ['-c', conf], natsServer }));
  await waitForMesh(nodes);
}, 60_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

describe('/routez subscriptions', () => {
  it('?subs=detail names each subscription account; ?subs=1 lists the subjects; subscriptions counts them', async () => {
    const a = await connect({ servers: nodes[1]!.url, user: 'a', pass: 'a', reconnect: false });
    const b = await connect({ servers: nodes[1]!.url, user: 'b', pass: 'b', reconnect: false });
    conns.push(a, b);
    a.subscribe('rz.orders', { queue: 'workers' });
    b.subscribe('rz.audit');
    await Promise.all([a.flush(), b.flush()]);

    const detail = await until(
      async () => {
        const { route } = await routeToN2('?subs=detail');
        const list = (route?.['subscriptions_list_detail'] ?? []) as Array<Record<string, unknown>>;
        return list.some((d) => d['subject'] === 'rz.orders') && list.some((d) => d['subject'] === 'rz.audit') ? list : undefined;
      },
      10_000,
      "n2's subscriptions in n1's /routez",
      50,
    );
    // a route subscription's sid is "<account> <subject>[ <queue>]": how nats-server names its account
    expect(detail.find((d) => d['subject'] === 'rz.orders')).toMatchObject({ subject: 'rz.orders', qgroup: 'workers', sid: 'A rz.orders workers' });
    expect(detail.find((d) => d['subject'] === 'rz.audit')).toMatchObject({ subject: 'rz.audit', sid: 'B rz.audit' });
    expect(detail.find((d) => d['subject'] === 'rz.audit')!['qgroup']).toBeUndefined();

    const { body, route } = await routeToN2('?subs=1');
    expect(Date.parse(body['now'])).toBeGreaterThan(0);
    expect(route!['subscriptions_list']).toEqual(expect.arrayContaining(['rz.orders', 'rz.audit']));
    expect(route!['subscriptions']).toBe((route!['subscriptions_list'] as string[]).length);
    expect(route!['subscriptions_list_detail']).toBeUndefined();
    expect((await routeToN2('')).route!['subscriptions_list']).toBeUndefined();
  });

  it('subs=maybe: 400 with nats-server text', async () => {
    const res = await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez?subs=maybe`);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(`Error decoding boolean for 'subs': strconv.ParseBool: parsing "maybe": invalid syntax`);
  });
});
