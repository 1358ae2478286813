// The Helm chart's setup on three real nodes: the only configured account is the system account (a login for
// the operator's tools), JetStream on, clients without credentials in the global account. As nats-server
// does, JetStream is the global account's (an R3 stream works), never the system account's (its $JS.API
// answers 10039), and a system user's `$SYS.REQ.SERVER.PING.JSZ` gets every node's figures. With
// E2E_SERVER=nats-server the same cases run against a nats-server 2.9.10 cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createInbox, StringCodec, type NatsConnection } from 'nats';
import { freePort, startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { sleep } from './helpers/flotilla-process.js';
import { sysAnswer } from './helpers/system-requests.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const dir = mkdtempSync(join(tmpdir(), 'flotilla-sysclust-js-'));
const conns: NatsConnection[] = [];
let nodes: ClusterNodeProcess[] = [];

const CONF = `
accounts { SYS: { users: [ { user: sys, password: sys } ] } }
system_account: SYS
`;

function nodeArgs(name: string, conf: string): string[] {
  const store = join(dir, name);
  mkdirSync(store, { recursive: true });
  return ['-c', conf, '-js', '-sd', store];
}

beforeAll(async () => {
  const conf = join(dir, 'helm.conf');
  writeFileSync(conf, CONF);
  const natsServer = AGAINST_NATS_SERVER;
  // Every node names every other as a route (nats-server's clustered JetStream needs configured routes).
  const ports = [await freePort(), await freePort(), await freePort()];
  const names = ['n1', 'n2', 'n3'];
  const started = await Promise.allSettled(
    names.map((name, i) =>
      startNode({
        name,
        clusterName: 'helm',
        clusterPort: ports[i]!,
        routes: ports.filter((_, j) => j !== i).map((p) => `127.0.0.1:${p}`),
        extraArgs: nodeArgs(name, conf),
        natsServer,
      }),
    ),
  );
  for (const r of started) if (r.status === 'fulfilled') nodes.push(r.value);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await waitForMesh(nodes);
}, 90_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

async function on(n: number, user?: 'sys'): Promise<NatsConnection> {
  const nc = await connect({ servers: nodes[n - 1]!.url, reconnect: false, ...(user ? { user, pass: user } : {}) });
  conns.push(nc);
  return nc;
}

async function request(nc: NatsConnection, subject: string, body: unknown = ''): Promise<Record<string, any>> {
  const m = await nc.request(subject, sc.encode(typeof body === 'string' ? body : JSON.stringify(body)), { timeout: 2000 });
  return JSON.parse(sc.decode(m.data)) as Record<string, any>;
}

async function collect(nc: NatsConnection, subject: string, waitMs = 800): Promise<Array<Record<string, any>>> {
  const inbox = createInbox();
  const got: Array<Record<string, any>> = [];
  const sub = nc.subscribe(inbox, { callback: (_err, m) => got.push(JSON.parse(sc.decode(m.data)) as Record<string, any>) });
  await nc.flush();
  nc.publish(subject, sc.encode(''), { reply: inbox });
  await sleep(waitMs);
  sub.unsubscribe();
  return got;
}

describe('only the system account configured, JetStream on three nodes (the Helm chart)', () => {
  it('a client without credentials lands in $G and keeps an R3 stream there', async () => {
    const nc = await on(1);
    expect(nc.info!.jetstream).toBe(true);
    // the meta group may still be electing: a create answered with an error is asked again
    const deadline = Date.now() + 30_000;
    let created: Record<string, any> = {};
    for (;;) {
      created = await request(nc, '$JS.API.STREAM.CREATE.ORDERS', { name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 }).catch(() => ({}));
      if (created['config'] !== undefined || Date.now() > deadline) break;
      await sleep(500);
    }
    expect(created['config']?.['name']).toBe('ORDERS');
    const js = nc.jetstream();
    expect((await js.publish('orders.1', sc.encode('one'))).seq).toBe(1);
    const from3 = await on(3);
    const info = await request(from3, '$JS.API.STREAM.INFO.ORDERS');
    expect(info['state']['messages']).toBe(1);
    expect(info['cluster']['replicas']).toHaveLength(2);
  }, 40_000);

  it("the system account's $JS.API answers 10039 on every node: JetStream is never the system account's", async () => {
    for (const n of [1, 2, 3]) {
      const r = await request(await on(n, 'sys'), '$JS.API.INFO');
      expect(r['error']).toEqual({ code: 503, err_code: 10039, description: 'JetStream not enabled for account' });
    }
  });

  it('$SYS.REQ.SERVER.PING.JSZ from node 2: one answer per node, each with JetStream on and the meta group', async () => {
    const sys = await on(2, 'sys');
    const answers = await collect(sys, '$SYS.REQ.SERVER.PING.JSZ');
    expect(answers.map((a) => a['server']['name']).sort()).toEqual(['n1', 'n2', 'n3']);
    for (const a of answers) {
      expect(a['error']).toBeUndefined();
      expect(a['data']['disabled']).toBeUndefined();
      expect(a['data']['meta_cluster']['cluster_size']).toBe(3);
    }
    const direct = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.JSZ', { leader_only: true });
    expect(direct['data']['meta_cluster']['leader']).toBe(direct['server']['name']);
  });
});
