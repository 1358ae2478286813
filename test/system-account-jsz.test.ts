// JSZ through the system account with JetStream per account (one node): `$SYS.REQ.ACCOUNT.<acc>.JSZ` answers
// from that account's own JetStream, names an account without JetStream or unknown as nats-server does, and
// `$SYS.REQ.SERVER.PING.JSZ` with `accounts` lists each JetStream account. With E2E_SERVER=nats-server the
// same cases run against nats-server 2.9.10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { sysAnswer } from './helpers/system-requests.js';

const sc = StringCodec();
const dir = mkdtempSync(join(tmpdir(), 'flotilla-sysjsz-'));
const CONF = `
accounts {
  SYS: { users: [ { user: sys, password: sys } ] }
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: enabled, users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ] }
}
system_account: SYS
`;

let server: FlotillaProcess;
const conns: NatsConnection[] = [];
let sys: NatsConnection;

async function login(user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, user, pass: user, reconnect: false });
  conns.push(nc);
  return nc;
}

beforeAll(async () => {
  const file = join(dir, 'jsz.conf');
  writeFileSync(file, CONF);
  server = await startFlotilla({ args: ['-c', file, '-js', '-sd', join(dir, 'store')] });
  const b = await login('b');
  const created = JSON.parse(sc.decode((await b.request('$JS.API.STREAM.CREATE.BS', sc.encode(JSON.stringify({ name: 'BS', subjects: ['b.>'] })))).data));
  expect(created['config']['name']).toBe('BS');
  await b.jetstream().publish('b.1', sc.encode('x'));
  sys = await login('sys');
});

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('JSZ through the system account, JetStream per account', () => {
  it("$SYS.REQ.ACCOUNT.B.JSZ: B's own figures, its streams with `streams`; A's are A's", async () => {
    const b = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.B.JSZ'))['data'];
    expect(b).toMatchObject({ name: 'B', id: 'B', api: { total: 1, errors: 0 } });
    expect(b['storage']).toBeGreaterThan(0);
    expect(b['stream_detail']).toBeUndefined();
    const withStreams = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.B.JSZ', { streams: true }))['data'];
    expect(withStreams['stream_detail'].map((s: Record<string, any>) => [s['name'], s['state']['messages']])).toEqual([['BS', 1]]);
    const a = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.JSZ', { streams: true }))['data'];
    expect(a).toMatchObject({ name: 'A', id: 'A', storage: 0, api: { total: 0, errors: 0 } });
    expect(a['stream_detail'] ?? []).toEqual([]);
  });

  it('an account without JetStream, and one not configured: error 500 naming it, data null', async () => {
    expect(await sysAnswer(sys, '$SYS.REQ.ACCOUNT.C.JSZ')).toMatchObject({ data: null, error: { code: 500, description: 'account "C" not jetstream enabled' } });
    expect(await sysAnswer(sys, '$SYS.REQ.ACCOUNT.NOPE.JSZ')).toMatchObject({ data: null, error: { code: 500, description: 'account "NOPE" not found' } });
  });

  it('$SYS.REQ.SERVER.PING.JSZ with accounts: both JetStream accounts, the totals over both', async () => {
    const d = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.JSZ', { accounts: true }))['data'];
    expect(d['account_details'].map((x: Record<string, any>) => x['name']).sort()).toEqual(['A', 'B']);
    expect(d).toMatchObject({ streams: 1, messages: 1 });
  });
});
