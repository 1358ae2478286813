// /routez per-account interest on two real nodes with accounts (issue 17 item 6): each route's
// `interest_by_account` and the node's `local_interest_by_account` count subscriptions per account, `$G`
// for the global one; the summed `interest` / `local_interest` stay what they were. Flotilla's own fields
// (nats-server's /routez has per-route subscription counts only), so no nats-server run. nats-server's own
// form is there too: `subscriptions` per route, `?subs=1` subjects, `?subs=detail` (sid `<account> <subject>`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-mon-routez-'));
const conns: NatsConnection[] = [];
let nodes: ClusterNodeProcess[] = [];

interface Route {
  remote_name: string;
  interest: number;
  interest_by_account: Record<string, number>;
}
interface Routez {
  local_interest: number;
  local_interest_by_account: Record<string, number>;
  routes: Route[];
}

const routezOf = async (n: ClusterNodeProcess): Promise<Routez> => (await (await fetch(`http://127.0.0.1:${n.httpPort}/routez`)).json()) as Routez;

beforeAll(async () => {
  const conf = join(dir, 'accounts.conf');
  writeFileSync(
    conf,
    `authorization { users: [ { user: g, password: g } ] }
accounts {
  A: { users: [ { user: a, password: a } ] }
  B: { users: [ { user: b, password: b } ] }
}
`,
  );
  const first = await startNode({ name: 'n1', clusterName: 'monacc', extraArgs: ['-c', conf] });
  nodes = [first];
  nodes.push(await startNode({ name: 'n2', clusterName: 'monacc', routes: [`127.0.0.1:${first.clusterPort}`], extraArgs: ['-c', conf] }));
  await waitForMesh(nodes);
}, 60_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

async function on(n: number, user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: nodes[n - 1]!.url, user, pass: user, reconnect: false });
  conns.push(nc);
  return nc;
}

describe('/routez per-account interest', () => {
  it("counts each account's subscriptions on the route that carries them, and locally", async () => {
    const before = await routezOf(nodes[0]!);
    const beforeRoute = before.routes.find((r) => r.remote_name === 'n2')!;
    // Each account already holds the system account's imports (internal subscriptions, routed too).
    const beforeLocal = await routezOf(nodes[1]!);
    const localGrew = (now: typeof beforeLocal, was: typeof beforeLocal, account: string): number =>
      (now.local_interest_by_account[account] ?? 0) - (was.local_interest_by_account[account] ?? 0);
    const a = await on(2, 'a');
    const b = await on(2, 'b');
    const g = await on(2, 'g');
    a.subscribe('orders.new');
    a.subscribe('orders.paid');
    b.subscribe('orders.new');
    g.subscribe('audit.>');
    g.subscribe('audit.x');
    g.subscribe('audit.y');
    await Promise.all([a.flush(), b.flush(), g.flush()]);

    const grew = (r: Route, account: string): number => (r.interest_by_account[account] ?? 0) - (beforeRoute.interest_by_account[account] ?? 0);
    const route = await until(async () => {
      const r = (await routezOf(nodes[0]!)).routes.find((x) => x.remote_name === 'n2');
      return r !== undefined && grew(r, 'A') === 2 && grew(r, 'B') === 1 && grew(r, '$G') === 3 ? r : null;
    }, 10_000, 'interest of n2 on n1');
    // The per-account figures add up to the route's total.
    expect(Object.values(route.interest_by_account).reduce((x, y) => x + y, 0)).toBe(route.interest);
    expect(Object.keys(route.interest_by_account)).toEqual(expect.arrayContaining(['$G', 'A', 'B']));

    const local = await routezOf(nodes[1]!);
    expect({ A: localGrew(local, beforeLocal, 'A'), B: localGrew(local, beforeLocal, 'B') }).toEqual({ A: 2, B: 1 });
    expect(Object.values(local.local_interest_by_account).reduce((x, y) => x + y, 0)).toBe(local.local_interest);
    // n1 has no client subscriptions of A or B: nothing of theirs is local there.
    const n1 = await routezOf(nodes[0]!);
    expect({ A: localGrew(n1, before, 'A'), B: localGrew(n1, before, 'B') }).toEqual({ A: 0, B: 0 });
  });

  it("nats-server's shape too: now, each route's subscriptions count, ?subs=1 subjects, ?subs=detail sids naming the account", async () => {
    const a = await on(2, 'a');
    a.subscribe('shape.a', { queue: 'workers' });
    await a.flush();
    const detailOf = async (): Promise<Array<{ subject: string; qgroup?: string; sid: string }> | undefined> => {
      const r = (await (await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez?subs=detail`)).json()) as { routes: Array<Record<string, any>> };
      return r.routes.find((x) => x['remote_name'] === 'n2')?.['subscriptions_list_detail'];
    };
    const detail = await until(async () => ((await detailOf())?.some((d) => d.subject === 'shape.a') ? await detailOf() : undefined), 10_000, 'shape.a in the detail');
    expect(detail!.find((d) => d.subject === 'shape.a')).toEqual({ subject: 'shape.a', qgroup: 'workers', sid: 'A shape.a workers' });
    const listed = (await (await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez?subs=1`)).json()) as Record<string, any>;
    expect(Date.parse(listed['now'])).toBeGreaterThan(0);
    const route = (listed['routes'] as Array<Record<string, any>>).find((x) => x['remote_name'] === 'n2')!;
    expect(route['subscriptions']).toBe(route['interest']);
    expect(route['subscriptions_list']).toContain('shape.a');
    expect(route['subscriptions_list']).toHaveLength(route['interest']);
    expect(route['subscriptions_list_detail']).toBeUndefined();
    const plain = (await (await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez`)).json()) as Record<string, any>;
    expect(plain['routes'][0]['subscriptions_list']).toBeUndefined();
    expect((await fetch(`http://127.0.0.1:${nodes[0]!.httpPort}/routez?subs=nope`)).status).toBe(400);
  });
});
