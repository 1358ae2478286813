// Live account updates in operator mode with stock clients: claim pushes (`nsc push` sends
// `$SYS.REQ.ACCOUNT.<id>.CLAIMS.UPDATE`; the full resolver also takes `$SYS.REQ.CLAIMS.UPDATE`), lookups,
// lists and deletes, on one node and across three. A revocation pushed to one node disconnects the user
// on all three; the time it takes is measured and printed. With E2E_SERVER=nats-server every case runs
// against nats-server 2.9 to show it is its behaviour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection, type NatsError } from 'nats';
import { createOperator, encodeGeneric } from '@nats-io/jwt';
import { useConfServers } from './helpers/conf-servers.js';
import { AccountsCluster, NODE_NAMES } from './helpers/accounts-cluster.js';
import { TestOperator, testUser, type TestAccount, type TestUser } from './helpers/operator-jwts.js';
import { until } from './helpers/until.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const { conns, dir, serverWith } = useConfServers('jwt-resolver');

async function login(url: string, u: TestUser): Promise<NatsConnection> {
  const nc = await connect({ servers: url, reconnect: false, authenticator: credsAuthenticator(u.creds) });
  conns.push(nc);
  return nc;
}

/** The error the server closed `nc` with, once it did. */
function closedWith(nc: NatsConnection): Promise<string> {
  return nc.closed().then((err) => (err === undefined ? 'closed' : (err as NatsError).message));
}

async function claims(nc: NatsConnection, subject: string, body: string | Uint8Array): Promise<Record<string, any>> {
  const m = await nc.request(subject, typeof body === 'string' ? enc.encode(body) : body, { timeout: 5000 });
  return JSON.parse(dec.decode(m.data)) as Record<string, any>;
}

async function revoke(op: TestOperator, account: TestAccount, name: string, user: TestUser): Promise<string> {
  return op.signAccount(name, account.kp, { revocations: { [user.kp.getPublicKey()]: Math.floor(Date.now() / 1000) + 1 } });
}

describe('full resolver on one node', () => {
  let op: TestOperator;
  let a: TestAccount;
  let url: string;
  let sys: NatsConnection;
  const resolverDir = join(dir, 'jwt');

  beforeAll(async () => {
    op = await TestOperator.create();
    a = await op.account('A');
    const s = await serverWith(`${op.conf([a], `{ type: full, dir: "${resolverDir}", allow_delete: true }`)}\njetstream { store_dir: "${join(dir, 'js')}" }`);
    url = s.url;
    sys = await login(url, await testUser(op.system));
  });

  it('$SYS.REQ.CLAIMS.UPDATE adds an account: stored as <key>.jwt, its users connect, LIST and LOOKUP show it', async () => {
    const b = await op.account('B');
    const r = await claims(sys, '$SYS.REQ.CLAIMS.UPDATE', b.jwt);
    expect(r['data']).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    expect(readFileSync(join(resolverDir, `${b.pub}.jwt`), 'utf8').trim()).toBe(b.jwt);
    const nc = await login(url, await testUser(b));
    await nc.flush();
    const list = await claims(sys, '$SYS.REQ.CLAIMS.LIST', '');
    expect([...(list['data'] as string[])].sort()).toEqual([a.pub, b.pub, op.system.pub].sort());
    const lookup = await sys.request(`$SYS.REQ.ACCOUNT.${b.pub}.CLAIMS.LOOKUP`, enc.encode(''), { timeout: 5000 });
    expect(dec.decode(lookup.data)).toBe(b.jwt);
    // an account added live without JetStream limits still gets an answer from $JS.API: 10039
    const info = await claims(nc, '$JS.API.INFO', '');
    expect(info['error']).toMatchObject({ code: 503, err_code: 10039 });
  });

  it('an account JWT no trusted operator signed is refused (flotilla: code 500, not stored); its users never connect', async () => {
    const other = await TestOperator.create();
    const c = await other.account('C');
    const r = await claims(sys, '$SYS.REQ.CLAIMS.UPDATE', c.jwt);
    if (!AGAINST_NATS_SERVER) {
      // nats-server stores it and answers 200, then refuses its users: flotilla refuses it at the door
      expect(r['error']).toMatchObject({ account: c.pub, code: 500 });
      expect(r['data']).toBeUndefined();
      expect(existsSync(join(resolverDir, `${c.pub}.jwt`))).toBe(false);
    }
    const u = await testUser(c);
    await expect(connect({ servers: url, reconnect: false, authenticator: credsAuthenticator(u.creds) })).rejects.toThrow(/Authorization Violation/);
  });

  it("a pushed revocation disconnects the revoked user with 'User Authentication Revoked'; others stay", async () => {
    const victim = await testUser(a);
    const bystander = await testUser(a);
    const v = await login(url, victim);
    const b = await login(url, bystander);
    const ended = closedWith(v);
    const r = await claims(sys, `$SYS.REQ.ACCOUNT.${a.pub}.CLAIMS.UPDATE`, await revoke(op, a, 'A', victim));
    expect(r['data']).toMatchObject({ account: a.pub, code: 200 });
    expect(await ended).toMatch(/user authentication revoked/i);
    await b.flush();
    expect(b.isClosed()).toBe(false);
    await expect(connect({ servers: url, reconnect: false, authenticator: credsAuthenticator(victim.creds) })).rejects.toThrow(/Authorization Violation/);
  });

  it('$SYS.REQ.CLAIMS.DELETE by the operator removes an account and closes its clients; by another key it fails', async () => {
    const d = await op.account('D');
    await claims(sys, '$SYS.REQ.CLAIMS.UPDATE', d.jwt);
    const nc = await login(url, await testUser(d));
    const ended = closedWith(nc);
    const stranger = createOperator();
    const bad = await claims(sys, '$SYS.REQ.CLAIMS.DELETE', await encodeGeneric('del', stranger, 'generic', { accounts: [d.pub] } as never));
    expect(bad['error']).toMatchObject({ code: 500 });
    expect(String(bad['error'].description)).toMatch(/not trusted/);
    const del = await claims(sys, '$SYS.REQ.CLAIMS.DELETE', await encodeGeneric('del', op.kp, 'generic', { accounts: [d.pub] } as never));
    expect(del['data']).toMatchObject({ code: 200, message: 'deleted 1 accounts' });
    await ended;
    expect(existsSync(join(resolverDir, `${d.pub}.jwt`))).toBe(false);
    const list = await claims(sys, '$SYS.REQ.CLAIMS.LIST', '');
    expect(list['data']).not.toContain(d.pub);
  });
});

describe('MEMORY resolver', () => {
  it('$SYS.REQ.ACCOUNT.<id>.CLAIMS.UPDATE of a preloaded account applies its revocations', async () => {
    const op = await TestOperator.create();
    const a = await op.account('A');
    const s = await serverWith(op.conf([a]));
    const sys = await login(s.url, await testUser(op.system));
    const victim = await testUser(a);
    const v = await login(s.url, victim);
    const ended = closedWith(v);
    const r = await claims(sys, `$SYS.REQ.ACCOUNT.${a.pub}.CLAIMS.UPDATE`, await revoke(op, a, 'A', victim));
    expect(r['data']).toMatchObject({ account: a.pub, code: 200 });
    expect(await ended).toMatch(/user authentication revoked/i);
  });
});

describe('three nodes, a full resolver each', () => {
  let op: TestOperator;
  let a: TestAccount;
  let cluster: AccountsCluster;
  const resolverRoot = join(dir, 'cluster');

  beforeAll(async () => {
    op = await TestOperator.create();
    a = await op.account('A');
    cluster = await AccountsCluster.start('JWTC', (node) => op.conf([a], `{ type: full, dir: "${join(resolverRoot, `jwt-${node}`)}", interval: "1s" }`));
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('an account pushed to one node is usable on the others, and messages cross the cluster in it', async () => {
    const sys = await login(cluster.node('n1').url, await testUser(op.system));
    const b = await op.account('B');
    const r = await claims(sys, '$SYS.REQ.CLAIMS.UPDATE', b.jwt);
    expect(r['data']).toMatchObject({ account: b.pub, code: 200 });
    for (const n of NODE_NAMES) await until(() => existsSync(join(resolverRoot, `jwt-${n}`, `${b.pub}.jwt`)), 20_000);
    const sub = await login(cluster.node('n3').url, await testUser(b));
    const pub = await login(cluster.node('n2').url, await testUser(b));
    const got = sub.subscribe('b.x', { max: 1 });
    await sub.flush();
    await until(async () => {
      pub.publish('b.x', enc.encode('hi'));
      await pub.flush();
      return got.getReceived() > 0;
    }, 20_000);
    expect(got.getReceived()).toBe(1);
  });

  it('a node that was down while an account was pushed gets it from its peers (pack sync every interval)', async () => {
    await cluster.stop('n3');
    const sys = await login(cluster.node('n1').url, await testUser(op.system));
    const late = await op.account('LATE');
    expect((await claims(sys, '$SYS.REQ.CLAIMS.UPDATE', late.jwt))['data']).toMatchObject({ account: late.pub, code: 200 });
    await cluster.restart('n3');
    await until(() => existsSync(join(resolverRoot, 'jwt-n3', `${late.pub}.jwt`)), 30_000);
    const nc = await login(cluster.node('n3').url, await testUser(late));
    await nc.flush();
  });

  it('a revocation pushed to n1 disconnects the user on all three nodes (time measured)', async () => {
    const victim = await testUser(a);
    const conns3 = await Promise.all(NODE_NAMES.map((n) => login(cluster.node(n).url, victim)));
    const ends = conns3.map((nc) => closedWith(nc).then((reason) => ({ reason, at: performance.now() })));
    const sys = await login(cluster.node('n1').url, await testUser(op.system));
    const jwt = await revoke(op, a, 'A', victim);
    const sentAt = performance.now();
    sys.publish(`$SYS.REQ.ACCOUNT.${a.pub}.CLAIMS.UPDATE`, enc.encode(jwt));
    await sys.flush();
    const results = await Promise.all(ends);
    for (const r of results) expect(r.reason).toMatch(/user authentication revoked/i);
    const ms = results.map((r) => Math.round(r.at - sentAt));
    console.log(`revocation pushed to n1 -> disconnected on n1,n2,n3 after ${ms.join(', ')} ms (max ${Math.max(...ms)} ms)`);
  });
});
