// JetStream of an account added or changed by a claims push, without a restart, stock clients: an account
// pushed with JetStream limits gets JetStream at once (on every node of a cluster), and a pushed JWT
// lowering its limits refuses what the new limits do not allow; one pushed without them has its JetStream
// disabled (10039) and, pushed with them again, finds its streams. With E2E_SERVER=nats-server every case
// runs against nats-server 2.9 to show it is its behaviour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { AccountsCluster, api, apiSettled, fileStream } from './helpers/accounts-cluster.js';
import { TestOperator, testUser, type TestAccount } from './helpers/operator-jwts.js';
import { until } from './helpers/until.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const { conns, dir, serverWith } = useConfServers('jwt-claims-js');
const MIB = 1024 * 1024;

async function login(url: string, account: TestAccount): Promise<NatsConnection> {
  const u = await testUser(account);
  const nc = await connect({ servers: url, reconnect: false, authenticator: credsAuthenticator(u.creds) });
  conns.push(nc);
  return nc;
}

async function push(sys: NatsConnection, jwt: string): Promise<unknown> {
  const m = await sys.request('$SYS.REQ.CLAIMS.UPDATE', enc.encode(jwt), { timeout: 5000 });
  return (JSON.parse(dec.decode(m.data)) as { data?: unknown }).data;
}

function errCode(reply: Record<string, unknown>): number | undefined {
  return (reply['error'] as { err_code?: number } | undefined)?.err_code;
}

const jsLimits = (streams: number, disk = 10 * MIB) => ({ limits: { mem_storage: -1, disk_storage: disk, streams, consumer: -1 } }) as never;

describe('one node, full resolver', () => {
  let op: TestOperator;
  let url: string;
  let sys: NatsConnection;

  beforeAll(async () => {
    op = await TestOperator.create();
    const a = await op.account('A');
    const s = await serverWith(`${op.conf([a], `{ type: full, dir: "${join(dir, 'jwt')}" }`)}\njetstream { store_dir: "${join(dir, 'js')}" }`);
    url = s.url;
    sys = await login(url, op.system);
  });

  it('an account pushed with JetStream limits has JetStream at once; its limits lowered by a push refuse the next stream', async () => {
    const b = await op.account('B', jsLimits(3));
    const plain = await op.account('PLAIN');
    expect(await push(sys, b.jwt)).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    expect(await push(sys, plain.jwt)).toEqual({ account: plain.pub, code: 200, message: 'jwt updated' });
    const nc = await login(url, b);
    const info = await apiSettled(nc, '$JS.API.INFO');
    expect((info['limits'] as Record<string, unknown>)['max_streams']).toBe(3);
    expect(errCode(await api(nc, '$JS.API.STREAM.CREATE.ONE', fileStream('ONE', 1)))).toBeUndefined();
    // an account pushed without JetStream limits answers 10039
    const none = await login(url, plain);
    expect(errCode(await api(none, '$JS.API.INFO'))).toBe(10039);

    // lowered to one stream, and its disk to 1 MiB
    const lowered = await op.signAccount('B', b.kp, jsLimits(1, MIB));
    expect(await push(sys, lowered)).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    expect(errCode(await api(nc, '$JS.API.STREAM.CREATE.TWO', fileStream('TWO', 1)))).toBe(10027);
    const after = await api(nc, '$JS.API.INFO');
    expect(after['limits']).toMatchObject({ max_streams: 1, max_storage: MIB });
    expect(after['streams']).toBe(1);
    // the stream it already has stays, and is limited by the lowered disk
    expect(errCode(await api(nc, '$JS.API.STREAM.UPDATE.ONE', fileStream('ONE', 1, { max_bytes: 2 * MIB })))).toBe(10047);

    // its JetStream limits removed: JetStream is disabled for it (10039), and back with them, its stream too
    expect(await push(sys, await op.signAccount('B', b.kp, {}))).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    // While the account's JetStream stops, its API has no responder for a moment (503): a known gap of the
    // disable path (the 10039 answer is installed after the stop), so the wait reads a 503 as "not yet".
    const infoOrNoResponders = () => api(nc, '$JS.API.INFO').catch((e: unknown) => ((e as { code?: string }).code === '503' ? null : Promise.reject(e)));
    await until(async () => {
      const r = await infoOrNoResponders();
      return r !== null && errCode(r) === 10039;
    }, 10_000, '10039 after JetStream was disabled', 100);
    expect(await push(sys, await op.signAccount('B', b.kp, jsLimits(3)))).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    const back = await apiSettled(nc, '$JS.API.STREAM.INFO.ONE');
    expect((back['config'] as { name?: string }).name).toBe('ONE');
  });
});

describe('three nodes, a full resolver each', () => {
  let op: TestOperator;
  let cluster: AccountsCluster;

  beforeAll(async () => {
    op = await TestOperator.create();
    const a = await op.account('A');
    cluster = await AccountsCluster.start('CLAIMSJS', (node) => op.conf([a], `{ type: full, dir: "${join(dir, `jwt-${node}`)}", interval: "1s" }`));
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('an account pushed to one node has JetStream on every node: an R3 stream created from another, its limits enforced', async () => {
    const sys = await login(cluster.node('n1').url, op.system);
    const b = await op.account('B', jsLimits(1));
    expect(await push(sys, b.jwt)).toEqual({ account: b.pub, code: 200, message: 'jwt updated' });
    const nc = await login(cluster.node('n2').url, b);
    const created = await apiSettled(nc, '$JS.API.STREAM.CREATE.R3', fileStream('R3', 3));
    expect(errCode(created)).toBeUndefined();
    expect(((created['cluster'] as { replicas?: unknown[] }).replicas ?? []).length).toBe(2);
    const ack = JSON.parse(dec.decode((await nc.request('r3.x', enc.encode('hi'), { timeout: 10_000 })).data)) as Record<string, unknown>;
    expect(ack['seq']).toBe(1);
    const other = await login(cluster.node('n3').url, b);
    expect(errCode(await apiSettled(other, '$JS.API.STREAM.CREATE.MORE', fileStream('MORE', 1)))).toBe(10027);
  }, 120_000);
});
