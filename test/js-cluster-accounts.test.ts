// JetStream per account across three real nodes: two JetStream accounts, each with its own meta group
// (catalogue), so the same stream name lives in both; streams of one account are not seen from the other
// from any node; an account's limits are enforced by its meta leader; an R3 stream survives the loss of
// its leader and stays its account's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';
import { AccountsCluster, NODE_NAMES as NAMES, api, apiSettled, fileStream as stream } from './helpers/accounts-cluster.js';

const dec = new TextDecoder();
let cluster: AccountsCluster;

beforeAll(async () => {
  cluster = await AccountsCluster.start(
    'JSACC',
    `accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: { max_streams: 2 }, users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ] }
  D: { jetstream: { max_file: 10000 }, users: [ { user: d, password: d } ] }
}`,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

const login = (name: string, user: string) => cluster.login(name, user);

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
    await cluster.stop(leader);
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
