// The system account across a cluster of three real nodes built from one config, with the stock client: a
// request on `$SYS.REQ.SERVER.PING[.<endpoint>]` made on any node gets one answer per node, a request to
// `$SYS.REQ.SERVER.<id>.<endpoint>` reaches the named node wherever the requester is, the account requests
// and the system imports collect every node's part, and each node's events reach a system-account subscriber
// on another node. With E2E_SERVER=nats-server the same cases run against a nats-server 2.9.10 cluster;
// what 2.9 lacks (USER.INFO, STATSZ routes by name) is checked against Flotilla only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createInbox, StringCodec, type NatsConnection } from 'nats';
import { startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { sleep } from './helpers/flotilla-process.js';
import { JsonMailbox, sysAnswer } from './helpers/system-requests.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const dir = mkdtempSync(join(tmpdir(), 'flotilla-sysclust-'));
const conns: NatsConnection[] = [];
let nodes: ClusterNodeProcess[] = [];
const NAMES = ['n1', 'n2', 'n3'];

const CONF = `
accounts {
  A: { users: [ { user: a, password: a } ] }
  SYS: { users: [ { user: sys, password: sys } ] }
}
system_account: SYS
`;

beforeAll(async () => {
  const conf = join(dir, 'sys.conf');
  writeFileSync(conf, CONF);
  const natsServer = AGAINST_NATS_SERVER;
  const first = await startNode({ name: 'n1', clusterName: 'sysc', extraArgs: ['-c', conf], natsServer });
  nodes = [first];
  const seed = `127.0.0.1:${first.clusterPort}`;
  const rest = await Promise.allSettled(
    ['n2', 'n3'].map((name) => startNode({ name, clusterName: 'sysc', routes: [seed], extraArgs: ['-c', conf], natsServer })),
  );
  for (const r of rest) if (r.status === 'fulfilled') nodes.push(r.value);
  const failed = rest.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await waitForMesh(nodes);
  // Every node answers PING once its system subscriptions' interest has reached the others.
  const sys = await on(1, 'sys');
  const deadline = Date.now() + 10_000;
  while ((await collect(sys, '$SYS.REQ.SERVER.PING', 300)).length < 3) {
    if (Date.now() > deadline) throw new Error('not every node answers $SYS.REQ.SERVER.PING');
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

/** A connection to node `n` (1-based) as `user` (the user's name is its password). */
async function on(n: number, user: 'a' | 'sys', name?: string): Promise<NatsConnection> {
  const nc = await connect({ servers: nodes[n - 1]!.url, user, pass: user, reconnect: false, ...(name ? { name } : {}) });
  conns.push(nc);
  return nc;
}

/** Every answer to one request within `waitMs` (nats-server answers a PING once per node). */
async function collect(nc: NatsConnection, subject: string, waitMs = 500, body = ''): Promise<Array<Record<string, any>>> {
  const inbox = createInbox();
  const got: Array<Record<string, any>> = [];
  const sub = nc.subscribe(inbox, { callback: (_err, m) => got.push(JSON.parse(sc.decode(m.data)) as Record<string, any>) });
  await nc.flush();
  nc.publish(subject, sc.encode(body), { reply: inbox });
  await sleep(waitMs);
  sub.unsubscribe();
  return got;
}

const serverNames = (answers: Array<Record<string, any>>): string[] => answers.map((a) => a['server']['name'] as string).sort();

async function idOf(n: number): Promise<string> {
  return (await on(n, 'sys')).info!.server_id;
}

describe('system account across the cluster: requests', () => {
  it('$SYS.REQ.SERVER.PING from node 2: one STATSZ answer per node, each naming its server and the cluster', async () => {
    const answers = await collect(await on(2, 'sys'), '$SYS.REQ.SERVER.PING');
    expect(serverNames(answers)).toEqual(NAMES);
    for (const a of answers) {
      expect(a['server']['cluster']).toBe('sysc');
      expect(a['statsz']['active_servers']).toBe(3);
    }
  });

  it('each $SYS.REQ.SERVER.PING.<endpoint> from node 3: one answer per node, each about that node', async () => {
    const sys = await on(3, 'sys');
    for (const endpoint of ['VARZ', 'CONNZ', 'SUBSZ', 'ROUTEZ', 'HEALTHZ', 'STATSZ', 'ACCOUNTZ', 'JSZ']) {
      const answers = await collect(sys, `$SYS.REQ.SERVER.PING.${endpoint}`);
      expect(serverNames(answers), endpoint).toEqual(NAMES);
      for (const a of answers) expect(a['error'], endpoint).toBeUndefined();
    }
    const varz = await collect(sys, '$SYS.REQ.SERVER.PING.VARZ');
    for (const v of varz) expect(v['data']['server_name']).toBe(v['server']['name']);
  });

  it('ROUTEZ and STATSZ routes: each node lists the other two', async () => {
    const sys = await on(1, 'sys');
    for (const r of await collect(sys, '$SYS.REQ.SERVER.PING.ROUTEZ')) expect(r['data']['num_routes'], r['server']['name']).toBe(2);
    const statsz = await collect(sys, '$SYS.REQ.SERVER.PING.STATSZ');
    expect(statsz).toHaveLength(3);
    for (const s of statsz) {
      const routes = s['statsz']['routes'] as Array<Record<string, any>>;
      expect(routes, s['server']['name']).toHaveLength(2);
      for (const r of routes) {
        expect(r['sent']['msgs']).toBeGreaterThan(0);
        expect(r['received']['msgs']).toBeGreaterThan(0);
      }
      // 2.9 names no route in STATSZ
      if (!AGAINST_NATS_SERVER) expect(routes.map((r) => r['name']).sort()).toEqual(NAMES.filter((n) => n !== s['server']['name']));
    }
  });

  it('$SYS.REQ.SERVER.<id>.<endpoint> asked on node 1 reaches node 3 only', async () => {
    const n3 = await idOf(3);
    const sys = await on(1, 'sys');
    const varz = await collect(sys, `$SYS.REQ.SERVER.${n3}.VARZ`);
    expect(serverNames(varz)).toEqual(['n3']);
    expect(varz[0]!['data']['server_id']).toBe(n3);
    expect(serverNames(await collect(sys, `$SYS.REQ.SERVER.${n3}.STATSZ`))).toEqual(['n3']);
    expect((await sysAnswer(sys, `$SYS.REQ.SERVER.${n3}.ROUTEZ`))['server']['name']).toBe('n3');
  });

  it('$SYS.REQ.ACCOUNT.A.CONNZ from node 1: every node answers with its own connections of A', async () => {
    await on(2, 'a', 'a-on-2');
    await on(3, 'a', 'a-on-3');
    const answers = await collect(await on(1, 'sys'), '$SYS.REQ.ACCOUNT.A.CONNZ');
    expect(serverNames(answers)).toEqual(NAMES);
    const byServer = Object.fromEntries(answers.map((a) => [a['server']['name'], (a['data']['connections'] as Array<Record<string, any>>).map((c) => c['name'])]));
    expect(byServer['n2']).toContain('a-on-2');
    expect(byServer['n2']).not.toContain('a-on-3');
    expect(byServer['n3']).toContain('a-on-3');
    expect(byServer['n3']).not.toContain('a-on-2');
  });

  it('an account user on node 1 asking $SYS.REQ.SERVER.PING.CONNZ (the system import) gets every node, its account only', async () => {
    const a1 = await on(1, 'a', 'a-asking');
    await on(2, 'sys', 'sys-on-2');
    const answers = await collect(a1, '$SYS.REQ.SERVER.PING.CONNZ');
    expect(serverNames(answers)).toEqual(NAMES);
    for (const a of answers) {
      const names = (a['data']['connections'] as Array<Record<string, any>>).map((c) => c['name']);
      expect(names).not.toContain('sys-on-2');
    }
  });

  it('USER.INFO (2.10+) asked on node 2 is answered once, about the requester', async () => {
    if (AGAINST_NATS_SERVER) return;
    const a2 = await on(2, 'a');
    const answers = await collect(a2, '$SYS.REQ.USER.INFO');
    expect(answers).toHaveLength(1);
    expect(answers[0]!['data']).toMatchObject({ user: 'a', account: 'A' });
  });
});

describe('system account across the cluster: events', () => {
  it("a subscriber on node 1 sees node 3's CONNECT and DISCONNECT of account A", async () => {
    const sys = await on(1, 'sys');
    const connects = new JsonMailbox(sys, '$SYS.ACCOUNT.A.CONNECT');
    const disconnects = new JsonMailbox(sys, '$SYS.ACCOUNT.A.DISCONNECT');
    await sys.flush();
    await sleep(200); // the interest reaches the other nodes
    const a3 = await connect({ servers: nodes[2]!.url, user: 'a', pass: 'a', name: 'evented', reconnect: false });
    const c = await connects.next();
    expect(c.json['server']['name']).toBe('n3');
    expect(c.json['client']['name']).toBe('evented');
    await a3.close();
    const d = await disconnects.next();
    expect(d.json['server']['name']).toBe('n3');
    expect(d.json['client']['name']).toBe('evented');
  });

  it('an authentication failure on node 2 is seen on node 1 under node 2\'s id', async () => {
    const n2 = await idOf(2);
    const sys = await on(1, 'sys');
    const errors = new JsonMailbox(sys, '$SYS.SERVER.*.CLIENT.AUTH.ERR');
    await sys.flush();
    await sleep(200);
    await expect(connect({ servers: nodes[1]!.url, user: 'a', pass: 'wrong', reconnect: false })).rejects.toThrow();
    const e = await errors.next();
    expect(e.subject).toBe(`$SYS.SERVER.${n2}.CLIENT.AUTH.ERR`);
    expect(e.json['server']['name']).toBe('n2');
  });

  it("a STATSZ request without a reply on node 1 makes node 3 publish its STATSZ event, seen on node 2", async () => {
    const n3 = await idOf(3);
    const sys2 = await on(2, 'sys');
    const statsz = new JsonMailbox(sys2, `$SYS.SERVER.${n3}.STATSZ`);
    await sys2.flush();
    await sleep(200);
    const sys1 = await on(1, 'sys');
    sys1.publish(`$SYS.REQ.SERVER.${n3}.STATSZ`);
    await sys1.flush();
    const m = await statsz.next();
    expect(m.json['server']['name']).toBe('n3');
    expect(m.json['statsz']['active_servers']).toBe(3);
  });

  it("node 3's SHUTDOWN reaches a subscriber on node 1", async () => {
    const n3 = await idOf(3);
    const sys = await on(1, 'sys');
    const shutdown = new JsonMailbox(sys, `$SYS.SERVER.${n3}.SHUTDOWN`);
    await sys.flush();
    await sleep(200);
    await nodes[2]!.stop();
    const m = await shutdown.next(5000);
    expect(m.json['name']).toBe('n3');
    nodes = nodes.slice(0, 2);
  });
});
