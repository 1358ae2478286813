// Account claims in operator mode, one node, stock clients: stream and service exports/imports between
// account JWTs (public, and token_req with an activation token), subject mappings in the account JWT, the
// account's expiry, and JetStream limits from the JWT. With E2E_SERVER=nats-server every case runs against
// nats-server 2.9 to show it is its behaviour.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { connect, credsAuthenticator, StringCodec, type NatsConnection, type NatsError } from 'nats';
import { encodeActivation } from '@nats-io/jwt';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { drain } from './helpers/subscription-drain.js';
import { TestOperator, testUser, type TestAccount } from './helpers/operator-jwts.js';

const sc = StringCodec();
const { conns, dir, serverWith } = useConfServers('jwt-accounts');

let op: TestOperator;
let exporter: TestAccount;
let importer: TestAccount;
let noToken: TestAccount;
let mapped: TestAccount;
let js: TestAccount;
let s: FlotillaProcess;

async function login(account: TestAccount): Promise<NatsConnection> {
  const u = await testUser(account);
  const nc = await connect({ servers: s.url, reconnect: false, authenticator: credsAuthenticator(u.creds) });
  conns.push(nc);
  return nc;
}


beforeAll(async () => {
  op = await TestOperator.create();
  exporter = await op.account('EXP', {
    exports: [
      { name: 'feed', subject: 'feed.>', type: 'stream' },
      { name: 'svc', subject: 'svc.echo', type: 'service' },
      { name: 'private', subject: 'private.>', type: 'stream', token_req: true },
    ] as never,
  });
  const importerKp = (await op.account('tmp')).kp;
  const noTokenKp = (await op.account('tmp2')).kp;
  const activation = await encodeActivation('act', importerKp, exporter.kp, 'stream', { subject: 'private.>' } as never);
  const imports = [
    { name: 'feed', subject: 'feed.>', account: exporter.pub, type: 'stream', local_subject: 'in.feed.>' },
    { name: 'svc', subject: 'svc.echo', account: exporter.pub, type: 'service', local_subject: 'echo' },
  ];
  importer = {
    kp: importerKp,
    pub: importerKp.getPublicKey(),
    jwt: await op.signAccount('IMP', importerKp, { imports: [...imports, { name: 'p', subject: 'private.>', account: exporter.pub, type: 'stream', token: activation }] } as never),
  };
  noToken = {
    kp: noTokenKp,
    pub: noTokenKp.getPublicKey(),
    jwt: await op.signAccount('NOTOK', noTokenKp, { imports: [{ name: 'p', subject: 'private.>', account: exporter.pub, type: 'stream' }] } as never),
  };
  mapped = await op.account('MAP', { mappings: { 'old.*': [{ subject: 'new.$1', weight: 100 }] } } as never);
  js = await op.account('JS', { limits: { mem_storage: -1, disk_storage: 1024 * 1024, streams: 1, consumer: -1 } } as never);
  s = await serverWith(`${op.conf([exporter, importer, noToken, mapped, js])}\njetstream { store_dir: "${join(dir, 'js')}" }`);
});

describe('operator mode: account claims', () => {
  it('a stream import (with local_subject) delivers the exporter’s messages in the importer', async () => {
    const e = await login(exporter);
    const i = await login(importer);
    const sub = i.subscribe('in.feed.>');
    await i.flush();
    e.publish('feed.a', sc.encode('1'));
    await e.flush();
    expect(await drain(sub)).toEqual(['in.feed.a:1']);
  });

  it('a service import answers requests across accounts', async () => {
    const e = await login(exporter);
    const i = await login(importer);
    e.subscribe('svc.echo', { callback: (_err, m) => m.respond(sc.encode(`echo:${sc.decode(m.data)}`)) });
    await e.flush();
    const r = await i.request('echo', sc.encode('x'), { timeout: 5000 });
    expect(sc.decode(r.data)).toBe('echo:x');
  });

  it('a token_req export reaches the importer with a valid activation token, not the one without', async () => {
    const e = await login(exporter);
    const withToken = await login(importer);
    const without = await login(noToken);
    const a = withToken.subscribe('private.>');
    const b = without.subscribe('private.>');
    await Promise.all([withToken.flush(), without.flush()]);
    e.publish('private.x', sc.encode('secret'));
    await e.flush();
    expect(await drain(a)).toEqual(['private.x:secret']);
    expect(await drain(b, 50)).toEqual([]);
  });

  it('mappings in the account JWT rewrite its clients’ publishes', async () => {
    const nc = await login(mapped);
    const sub = nc.subscribe('new.>');
    await nc.flush();
    nc.publish('old.7', sc.encode('m'));
    await nc.flush();
    expect(await drain(sub)).toEqual(['new.7:m']);
  });

  it('JetStream limits from the account JWT: one stream allowed, the second refused with 10027', async () => {
    const nc = await login(js);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'ONE', subjects: ['one.>'] });
    const err = await jsm.streams.add({ name: 'TWO', subjects: ['two.>'] }).then(
      () => null,
      (e: NatsError) => e,
    );
    expect(err?.api_error?.err_code).toBe(10027);
    // a pushed JWT raising the limit takes effect without a restart
    const sys = await login(op.system);
    const raised = await op.signAccount('JS', js.kp, { limits: { mem_storage: -1, disk_storage: 1024 * 1024, streams: 2, consumer: -1 } } as never);
    const r = await sys.request(`$SYS.REQ.ACCOUNT.${js.pub}.CLAIMS.UPDATE`, sc.encode(raised), { timeout: 5000 });
    expect((JSON.parse(sc.decode(r.data)) as { data?: { code: number } }).data?.code).toBe(200);
    const two = await jsm.streams.add({ name: 'TWO', subjects: ['two.>'] });
    expect(two.config.name).toBe('TWO');
  });

  it("a connected user of an account whose JWT expires is disconnected with -ERR 'Account Authentication Expired'", async () => {
    const short = await op.account('SHORT', {}, { exp: Math.floor(Date.now() / 1000) + 3 });
    const s2 = await serverWith(op.conf([short]));
    const u = await testUser(short);
    const nc = await connect({ servers: s2.url, reconnect: false, authenticator: credsAuthenticator(u.creds) });
    conns.push(nc);
    const err = await Promise.race([nc.closed(), sleep(20_000).then(() => new Error('still connected'))]);
    expect(String((err as Error | undefined)?.message)).toMatch(/account authentication expired/i);
  });
});
