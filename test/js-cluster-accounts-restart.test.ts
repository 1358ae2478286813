// Two JetStream accounts on three real nodes: their R3 streams are placed on all three nodes, R1 streams of
// both accounts are spread over the nodes together (Flotilla balances over every account's catalogue);
// monitoring on every node covers both accounts (/jsz with each account's bytes on every node, /varz, /healthz,
// the Raft group metrics); and a crash
// of the whole cluster (every node SIGKILLed at once, then started again) keeps each account's streams, their
// messages and their consumers' acks, in their own account. Also against nats-server 2.9.10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';
import { AccountsCluster, NODE_NAMES, api, apiSettled, errorOf, fileStream } from './helpers/accounts-cluster.js';

let cluster: AccountsCluster;

beforeAll(async () => {
  cluster = await AccountsCluster.start(
    'JSRESTART',
    `accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: enabled, users: [ { user: b, password: b } ] }
}`,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

type Info = { cluster: { leader?: string; replicas?: Array<{ name: string }> }; state: { messages: number; bytes: number; last_seq: number } };

async function info(nc: NatsConnection, stream: string): Promise<Info> {
  return (await apiSettled(nc, `$JS.API.STREAM.INFO.${stream}`)) as unknown as Info;
}

/** Every node of the stream's group, leader first (once it has one). */
async function nodesOf(nc: NatsConnection, stream: string): Promise<string[]> {
  for (const deadline = Date.now() + 30_000; ; await sleep(250)) {
    const i = await info(nc, stream);
    if (i.cluster.leader !== undefined) return [i.cluster.leader, ...(i.cluster.replicas ?? []).map((r) => r.name)];
    if (Date.now() > deadline) throw new Error(`${stream}: no leader`);
  }
}

async function monitoring(node: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`http://127.0.0.1:${cluster.node(node).httpPort}${path}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function healthyEverywhere(timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(250)) {
    const all = await Promise.all(NODE_NAMES.map((n) => monitoring(n, '/healthz').catch(() => ({ status: 0, body: {} }))));
    if (all.every((h) => h.status === 200)) return;
    if (Date.now() > deadline) throw new Error(`not healthy: ${JSON.stringify(all)}`);
  }
}

const durable = (stream: string, name: string): object => ({ stream_name: stream, config: { durable_name: name, ack_policy: 'explicit' } });

/** Fetches `count` messages of the durable and acks the first `ack` of them; returns their payloads. */
async function fetchAndAck(nc: NatsConnection, stream: string, name: string, count: number, ack: number): Promise<string[]> {
  const got: string[] = [];
  const inbox = nc.subscribe(`_INBOX.fetch.${stream}.${name}.${Date.now()}`, { max: count });
  const done = (async () => {
    for await (const m of inbox) {
      got.push(new TextDecoder().decode(m.data));
      if (got.length <= ack) m.respond(new TextEncoder().encode('+ACK'));
    }
  })();
  nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`, JSON.stringify({ batch: count, expires: 5_000_000_000 }), { reply: inbox.getSubject() });
  await Promise.race([done, sleep(6_000)]);
  inbox.unsubscribe();
  await nc.flush();
  return got;
}

describe('JetStream accounts across a whole-cluster restart', () => {
  it('R3 streams of both accounts on all three nodes; R1 streams of the two accounts spread over the nodes', async () => {
    const a = await cluster.login('n1', 'a');
    const b = await cluster.login('n2', 'b');
    expect(errorOf(await apiSettled(a, '$JS.API.STREAM.CREATE.ORDERS', fileStream('ORDERS', 3)))).toBeUndefined();
    expect(errorOf(await apiSettled(b, '$JS.API.STREAM.CREATE.ORDERS', fileStream('ORDERS', 3)))).toBeUndefined();
    for (const nc of [a, b]) expect((await nodesOf(nc, 'ORDERS')).sort()).toEqual([...NODE_NAMES]);
    expect(errorOf(await apiSettled(a, '$JS.API.STREAM.CREATE.ONE1', fileStream('ONE1', 1)))).toBeUndefined();
    expect(errorOf(await apiSettled(b, '$JS.API.STREAM.CREATE.ONE2', fileStream('ONE2', 1)))).toBeUndefined();
    expect(errorOf(await apiSettled(a, '$JS.API.STREAM.CREATE.ONE3', fileStream('ONE3', 1)))).toBeUndefined();
    const homes = [(await nodesOf(a, 'ONE1'))[0], (await nodesOf(b, 'ONE2'))[0], (await nodesOf(a, 'ONE3'))[0]];
    // nats-server picks among equally loaded nodes at random; Flotilla balances them over both catalogues.
    if (!AGAINST_NATS_SERVER) expect([...homes].sort()).toEqual([...NODE_NAMES]);
    for (const h of homes) expect(NODE_NAMES).toContain(h);
  }, 120_000);

  it('monitoring on every node covers both accounts', async () => {
    const a = await cluster.login('n3', 'a');
    const b = await cluster.login('n3', 'b');
    for (let i = 0; i < 5; i++) expect(await apiSettled(a, 'orders.x', `a${i}`)).toEqual({ stream: 'ORDERS', seq: i + 1 });
    for (let i = 0; i < 3; i++) expect(await apiSettled(b, 'orders.x', `b${i}`)).toEqual({ stream: 'ORDERS', seq: i + 1 });
    await healthyEverywhere();
    // Each account's bytes on every node (its R3 stream three times), on every node's /jsz.
    const want = { A: 3 * (await info(a, 'ORDERS')).state.bytes, B: 3 * (await info(b, 'ORDERS')).state.bytes };
    for (const node of NODE_NAMES) {
      let got: Record<string, number> = {};
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(250)) {
        const details = (await monitoring(node, '/jsz?accounts=true')).body['account_details'] as Array<{ name: string; storage: number }>;
        got = Object.fromEntries(details.map((d) => [d.name, d.storage]));
        if (got['A'] === want.A && got['B'] === want.B) break;
      }
      expect(got).toEqual(want);
    }
    for (const node of NODE_NAMES) {
      const jsz = (await monitoring(node, '/jsz?accounts=true')).body;
      const details = (jsz['account_details'] as Array<{ name: string }>).map((d) => d.name).sort();
      expect(details).toEqual(['A', 'B']);
      expect(((await monitoring(node, '/varz')).body['jetstream'] as { stats: { accounts: number } }).stats.accounts).toBe(2);
      // Both accounts' R3 streams have a replica here: 2 ORDERS streams plus this node's R1s.
      expect(jsz['streams']).toBeGreaterThanOrEqual(2);
      expect(jsz['messages']).toBeGreaterThanOrEqual(8);
      if (!AGAINST_NATS_SERVER) {
        // Each account's own meta group, with its leader (Flotilla's field: nats-server has one meta group).
        for (const d of jsz['account_details'] as Array<{ name: string; meta_cluster: { name: string; leader: string; cluster_size: number } }>) {
          expect(d.meta_cluster).toMatchObject({ name: 'JSRESTART', cluster_size: 3 });
          expect(NODE_NAMES).toContain(d.meta_cluster.leader);
        }
        const metrics = await (await fetch(`http://127.0.0.1:${cluster.node(node).httpPort}/metrics`)).text();
        for (const acc of ['A', 'B']) {
          expect(metrics).toMatch(new RegExp(`flotilla_raft_group_has_leader\\{[^}]*kind="meta"[^}]*account="${acc}"[^}]*\\} 1`));
          expect(metrics).toMatch(new RegExp(`flotilla_raft_group_role\\{[^}]*stream="ORDERS"[^}]*account="${acc}"`));
        }
      }
    }
  }, 120_000);

  it('every node SIGKILLed and started again: each account keeps its streams, messages and consumer acks', async () => {
    const a = await cluster.login('n1', 'a');
    const b = await cluster.login('n1', 'b');
    expect(errorOf(await apiSettled(a, '$JS.API.CONSUMER.DURABLE.CREATE.ORDERS.worker', durable('ORDERS', 'worker')))).toBeUndefined();
    expect(errorOf(await apiSettled(b, '$JS.API.CONSUMER.DURABLE.CREATE.ORDERS.worker', durable('ORDERS', 'worker')))).toBeUndefined();
    expect(await fetchAndAck(a, 'ORDERS', 'worker', 3, 2)).toEqual(['a0', 'a1', 'a2']);
    expect(await fetchAndAck(b, 'ORDERS', 'worker', 1, 1)).toEqual(['b0']);
    expect(await apiSettled(b, 'one2.x', 'r1')).toEqual({ stream: 'ONE2', seq: 1 });
    // The acks are applied on the consumer's group before the crash.
    for (const deadline = Date.now() + 10_000; ; await sleep(200)) {
      const ca = await apiSettled(a, '$JS.API.CONSUMER.INFO.ORDERS.worker');
      const cb = await apiSettled(b, '$JS.API.CONSUMER.INFO.ORDERS.worker');
      const floors = [(ca['ack_floor'] as { stream_seq: number }).stream_seq, (cb['ack_floor'] as { stream_seq: number }).stream_seq];
      if (floors[0] === 2 && floors[1] === 1) break;
      if (Date.now() > deadline) throw new Error(`acks not applied: ${JSON.stringify(floors)}`);
    }
    await sleep(500);

    await cluster.killAll();
    await cluster.startAll();
    await healthyEverywhere(90_000);

    for (const node of NODE_NAMES) {
      const a2 = await cluster.login(node, 'a');
      const b2 = await cluster.login(node, 'b');
      expect(((await apiSettled(a2, '$JS.API.STREAM.NAMES'))['streams'] as string[]).sort()).toEqual(['ONE1', 'ONE3', 'ORDERS']);
      expect(((await apiSettled(b2, '$JS.API.STREAM.NAMES'))['streams'] as string[]).sort()).toEqual(['ONE2', 'ORDERS']);
      expect((await info(a2, 'ORDERS')).state.messages).toBe(5);
      expect((await info(b2, 'ORDERS')).state.messages).toBe(3);
      expect((await info(b2, 'ONE2')).state.messages).toBe(1);
      const ca = await apiSettled(a2, '$JS.API.CONSUMER.INFO.ORDERS.worker');
      const cb = await apiSettled(b2, '$JS.API.CONSUMER.INFO.ORDERS.worker');
      expect([(ca['ack_floor'] as { stream_seq: number }).stream_seq, ca['num_pending']]).toEqual([2, 2]);
      expect([(cb['ack_floor'] as { stream_seq: number }).stream_seq, cb['num_pending']]).toEqual([1, 2]);
    }
    // Both take new messages after the restart, numbered on.
    const a3 = await cluster.login('n2', 'a');
    const b3 = await cluster.login('n3', 'b');
    expect(await apiSettled(a3, 'orders.x', 'a5')).toEqual({ stream: 'ORDERS', seq: 6 });
    expect(await apiSettled(b3, 'orders.x', 'b3')).toEqual({ stream: 'ORDERS', seq: 4 });
    // B's worker goes on where it stopped.
    expect(await fetchAndAck(b3, 'ORDERS', 'worker', 3, 0)).toEqual(['b1', 'b2', 'b3']);
    expect(errorOf(await api(a3, '$JS.API.STREAM.INFO.ONE2'))).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
  }, 240_000);
});
