// JetStream per account across three real nodes: two JetStream accounts, each with its own meta group
// (catalogue), so the same stream name lives in both; streams of one account are not seen from the other
// from any node; an account's limits are enforced by its meta leader; an R3 stream survives the loss of
// its leader and stays its account's.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { freePort, startNode, stopAll, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { sleep } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

const NAMES = ['n1', 'n2', 'n3'];
const enc = new TextEncoder();
const dec = new TextDecoder();
let root: string;
let nodes: ClusterNodeProcess[] = [];
const conns: NatsConnection[] = [];

function confOf(name: string, clusterPort: number, routes: number[]): string {
  return `
server_name: ${name}
jetstream { store_dir: "${join(root, name)}" }
cluster { name: JSACC, listen: "127.0.0.1:${clusterPort}", routes: [ ${routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ')} ] }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: { max_streams: 2 }, users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ] }
  D: { jetstream: { max_file: 10000 }, users: [ { user: d, password: d } ] }
}`;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'flotilla-js-cluster-accounts-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  nodes = await Promise.all(
    NAMES.map((name, i) => {
      const file = join(root, `${name}.conf`);
      writeFileSync(file, confOf(name, ports[i]!, ports));
      return startNode({ name, clusterName: 'JSACC', rawClusterArgs: ['-c', file], natsServer: AGAINST_NATS_SERVER });
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => undefined);
  await stopAll(nodes);
  rmSync(root, { recursive: true, force: true });
});

function nodeOf(name: string): ClusterNodeProcess {
  return nodes.find((n) => n.name === name)!;
}

async function login(name: string, user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: nodeOf(name).url, user, pass: user, reconnect: false });
  conns.push(nc);
  return nc;
}

async function api(nc: NatsConnection, subject: string, body: object | string = ''): Promise<Record<string, unknown>> {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  const m = await nc.request(subject, enc.encode(data), { timeout: 10_000 });
  return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
}

/** Retried while the account's meta group (or a new stream group) has no leader yet. */
async function apiSettled(nc: NatsConnection, subject: string, body: object | string = '', timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let reply: Record<string, unknown> | null = null;
    try {
      reply = await api(nc, subject, body);
    } catch {
      reply = null; // no responder yet
    }
    const code = (reply?.['error'] as { err_code?: number } | undefined)?.err_code;
    if (reply !== null && code !== 10008 && code !== 10077) return reply;
    if (Date.now() > deadline) throw new Error(`${subject}: no settled answer: ${JSON.stringify(reply)}`);
    await sleep(250);
  }
}

const stream = (name: string, replicas: number): object => ({ name, subjects: [`${name.toLowerCase()}.>`], storage: 'file', num_replicas: replicas });

describe('JetStream per account in a cluster', () => {
  it('the same stream name in two accounts: two streams, each seen only in its account, from every node', async () => {
    const a1 = await login('n1', 'a');
    const b2 = await login('n2', 'b');
    // A subscriber on '>' in B, on a third node, sees B's traffic only.
    const watcher = await login('n3', 'b');
    const payloads: string[] = [];
    watcher.subscribe('>', { callback: (_e, m) => payloads.push(dec.decode(m.data)) });
    await watcher.flush();
    expect((await apiSettled(a1, '$JS.API.STREAM.CREATE.ORDERS', stream('ORDERS', 3)))['error']).toBeUndefined();
    expect((await apiSettled(b2, '$JS.API.STREAM.CREATE.ORDERS', stream('ORDERS', 3)))['error']).toBeUndefined();
    expect((await apiSettled(a1, '$JS.API.STREAM.CREATE.ONLYA', stream('ONLYA', 1)))['error']).toBeUndefined();
    for (let i = 0; i < 3; i++) expect(await apiSettled(a1, 'orders.new', `a${i}`)).toEqual({ stream: 'ORDERS', seq: i + 1 });
    expect(await apiSettled(b2, 'orders.new', 'b0')).toEqual({ stream: 'ORDERS', seq: 1 });
    for (const deadline = Date.now() + 5_000; !payloads.includes('b0') && Date.now() < deadline; ) await sleep(50);
    expect(payloads).toContain('b0');
    expect(payloads.filter((p) => /^a[0-9]$/.test(p) || p.includes('ONLYA'))).toEqual([]);
    for (const name of NAMES) {
      const a = await login(name, 'a');
      const b = await login(name, 'b');
      expect((await apiSettled(a, '$JS.API.STREAM.NAMES'))['streams']).toEqual(['ONLYA', 'ORDERS']);
      expect((await apiSettled(b, '$JS.API.STREAM.NAMES'))['streams']).toEqual(['ORDERS']);
      expect((await apiSettled(b, '$JS.API.STREAM.INFO.ONLYA'))['error']).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
      const infoA = await apiSettled(a, '$JS.API.STREAM.INFO.ORDERS');
      const infoB = await apiSettled(b, '$JS.API.STREAM.INFO.ORDERS');
      expect([(infoA['state'] as { messages: number }).messages, (infoB['state'] as { messages: number }).messages]).toEqual([3, 1]);
      expect((infoA['cluster'] as { name: string }).name).toBe('JSACC');
      // Each stream's Raft group names its account (Flotilla's group names; nats-server's are random).
      if (!AGAINST_NATS_SERVER) {
        expect((infoA['cluster'] as { raft_group: string }).raft_group).toMatch(/^S-A-ORDERS-/);
        expect((infoB['cluster'] as { raft_group: string }).raft_group).toMatch(/^S-B-ORDERS-/);
      }
    }
  }, 180_000);

  it('an account without JetStream gets 10039 on every node', async () => {
    for (const name of NAMES) {
      const c = await login(name, 'c');
      expect((await api(c, '$JS.API.INFO'))['error']).toEqual({ code: 503, err_code: 10039, description: 'JetStream not enabled for account' });
    }
  });

  it("the account's max_streams is enforced by its meta leader, counting streams placed on any node", async () => {
    const b3 = await login('n3', 'b');
    expect((await apiSettled(b3, '$JS.API.STREAM.CREATE.SECOND', stream('SECOND', 1)))['error']).toBeUndefined();
    expect((await apiSettled(b3, '$JS.API.STREAM.CREATE.THIRD', stream('THIRD', 1)))['error']).toEqual({
      code: 400,
      err_code: 10027,
      description: 'maximum number of streams reached',
    });
    // A has no such limit.
    const a3 = await login('n3', 'a');
    expect((await apiSettled(a3, '$JS.API.STREAM.CREATE.THIRD', stream('THIRD', 1)))['error']).toBeUndefined();
  }, 120_000);

  it('an R3 stream reserves its max_bytes once per replica against the account max_file', async () => {
    const d = await login('n2', 'd');
    const r3 = { ...stream('BIG', 3), max_bytes: 4000 };
    expect((await apiSettled(d, '$JS.API.STREAM.CREATE.BIG', r3))['error']).toEqual({ code: 500, err_code: 10047, description: 'insufficient storage resources available' });
    // As R1 it fits, and then a second R3 of 3000 (9000 more) does not.
    expect((await apiSettled(d, '$JS.API.STREAM.CREATE.BIG', { ...r3, num_replicas: 1 }))['error']).toBeUndefined();
    expect((await apiSettled(d, '$JS.API.STREAM.CREATE.MORE', { ...stream('MORE', 3), max_bytes: 3000 }))['error']).toEqual({
      code: 500,
      err_code: 10047,
      description: 'insufficient storage resources available',
    });
  }, 120_000);

  it("an R3 stream keeps its account's messages when its leader goes", async () => {
    const a1 = await login('n1', 'a');
    const info = await apiSettled(a1, '$JS.API.STREAM.INFO.ORDERS');
    const leader = (info['cluster'] as { leader: string }).leader;
    expect(NAMES).toContain(leader);
    const survivor = NAMES.find((n) => n !== leader)!;
    await nodeOf(leader).stop();
    nodes = nodes.filter((n) => n.name !== leader);
    const a = await login(survivor, 'a');
    const b = await login(survivor, 'b');
    // A new leader among the two left; each account still reads its own stream of that name.
    const deadline = Date.now() + 60_000;
    let after: Record<string, unknown>;
    for (;;) {
      after = await apiSettled(a, '$JS.API.STREAM.INFO.ORDERS');
      const l = (after['cluster'] as { leader?: string } | undefined)?.leader;
      if (l !== undefined && l !== leader) break;
      if (Date.now() > deadline) throw new Error(`no new leader: ${JSON.stringify(after)}`);
      await sleep(250);
    }
    expect((after['state'] as { messages: number }).messages).toBe(3);
    expect(await apiSettled(a, 'orders.new', 'a3')).toEqual({ stream: 'ORDERS', seq: 4 });
    const infoB = await apiSettled(b, '$JS.API.STREAM.INFO.ORDERS');
    expect((infoB['state'] as { messages: number }).messages).toBe(1);
  }, 180_000);
});
