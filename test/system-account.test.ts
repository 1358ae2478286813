// The system account on one node with the stock client, as the `nats` CLI uses it: `nats server ls`
// ($SYS.REQ.SERVER.PING), `nats server req varz|connz|subsz|...` ($SYS.REQ.SERVER.PING.<endpoint> and
// $SYS.REQ.SERVER.<id>.<endpoint>), the account requests ($SYS.REQ.ACCOUNT.<acc>.*), the filters a request
// may carry, and what an ordinary account may ask through the system imports. With E2E_SERVER=nats-server
// the same cases run against nats-server 2.9.10; what 2.9 lacks (IDZ, USER.INFO, 2.14 fields) is checked
// against Flotilla only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { expectServerInfo, sysAnswer, sysRequest } from './helpers/system-requests.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-sysacct-'));
const SERVER_NAME = 'sysacct-one';

const CONF = `
server_name: ${SERVER_NAME}
accounts {
  A: {
    users: [ { user: a, password: a, permissions: { publish: { allow: ["orders.>", "$SYS.REQ.>"] }, subscribe: { allow: ["orders.>", "_INBOX.>"] } } } ]
    exports: [ { service: "svc.time" } ]
  }
  B: { users: [ { user: b, password: b } ], imports: [ { service: { account: A, subject: "svc.time" } } ] }
  SYS: { users: [ { user: sys, password: sys } ] }
}
system_account: SYS
`;

let server: FlotillaProcess;
let sys: NatsConnection;
let a: NatsConnection;
let serverId: string;
const conns: NatsConnection[] = [];

async function login(user: string, extra: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, user, pass: user, reconnect: false, ...extra });
  conns.push(nc);
  return nc;
}

beforeAll(async () => {
  const file = join(dir, 'sys.conf');
  writeFileSync(file, CONF);
  server = await startFlotilla({ args: ['-c', file] });
  sys = await login('sys', { name: 'operator' });
  a = await login('a', { name: 'app-a' });
  serverId = sys.info!.server_id;
  a.subscribe('orders.x');
  await a.flush();
});

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  const code = await server.stop();
  if (!AGAINST_NATS_SERVER) expect(code).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const info = (): { name: string; id: string; jetstream: boolean } => ({ name: SERVER_NAME, id: serverId, jetstream: false });

describe('$SYS.REQ.SERVER.PING: nats server ls', () => {
  it('answers with the server and its statsz; seq goes up from one message to the next', async () => {
    const first = await sysAnswer(sys, '$SYS.REQ.SERVER.PING');
    expectServerInfo(first['server'], info(), expect);
    const st = first['statsz'];
    expect(Date.parse(st['start'])).toBeLessThanOrEqual(Date.now());
    expect(st['mem']).toBeGreaterThan(0);
    expect(st['cores']).toBeGreaterThanOrEqual(1);
    expect(typeof st['cpu']).toBe('number');
    expect(st['connections']).toBe(2);
    expect(st['total_connections']).toBeGreaterThanOrEqual(2);
    expect(st['active_accounts']).toBe(2); // A and SYS have clients
    expect(st['subscriptions']).toBeGreaterThan(0);
    for (const k of ['sent', 'received']) {
      expect(Number.isInteger(st[k]['msgs'])).toBe(true);
      expect(Number.isInteger(st[k]['bytes'])).toBe(true);
    }
    expect(st['slow_consumers']).toBe(0);
    expect(st['active_servers']).toBe(1);
    if (!AGAINST_NATS_SERVER) {
      // 2.14's fields
      expect(first['server']['flags']).toBe(0);
      expect(st['sent_to_clients']).toEqual(st['sent']);
      expect(st['received_from_clients']).toEqual(st['received']);
    }
    const second = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.STATSZ');
    expect(second['server']['seq']).toBeGreaterThan(first['server']['seq']);
    expect(second['statsz']['connections']).toBe(2);
  });

  it('a request to this server by id is answered; one for another id finds no responder', async () => {
    const direct = await sysAnswer(sys, `$SYS.REQ.SERVER.${serverId}.STATSZ`);
    expect(direct['server']['id']).toBe(serverId);
    expect(await sysRequest(sys, '$SYS.REQ.SERVER.NOTTHISSERVER.STATSZ')).toBe('no-responders');
  });

  it('filters: a server that does not match server_name (contained, or exact) stays silent', async () => {
    expect(await sysRequest(sys, '$SYS.REQ.SERVER.PING', { server_name: 'other' }, 500)).toBe('timeout');
    expect((await sysAnswer(sys, '$SYS.REQ.SERVER.PING', { server_name: 'sysacct' }))['server']['name']).toBe(SERVER_NAME);
    // exact_match is 2.10's: 2.9 ignores it and matches the contained name
    if (!AGAINST_NATS_SERVER) expect(await sysRequest(sys, '$SYS.REQ.SERVER.PING.VARZ', { server_name: 'sysacct', exact_match: true }, 500)).toBe('timeout');
    expect((await sysAnswer(sys, '$SYS.REQ.SERVER.PING.VARZ', { server_name: SERVER_NAME, exact_match: true }))['data']['server_name']).toBe(SERVER_NAME);
    expect(await sysRequest(sys, '$SYS.REQ.SERVER.PING.VARZ', { cluster: 'nope' }, 500)).toBe('timeout');
  });

  it('options that are not JSON: error 400, no data', async () => {
    const bad = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.VARZ', '{bad');
    expectServerInfo(bad['server'], info(), expect);
    expect(bad['error']['code']).toBe(400);
    expect(typeof bad['error']['description']).toBe('string');
    expect(bad['data']).toBeUndefined();
  });
});

describe('$SYS.REQ.SERVER.PING.<endpoint>: nats server req', () => {
  it('VARZ: the server data of /varz', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.VARZ');
    expectServerInfo(r['server'], info(), expect);
    expect(r['data']).toMatchObject({ server_id: serverId, server_name: SERVER_NAME, connections: 2, port: server.port, system_account: 'SYS' });
  });

  it('CONNZ: every connection of the server, each with its counters; auth names the account', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.CONNZ', { auth: true });
    expect(r['data']).toMatchObject({ server_id: serverId, num_connections: 2, total: 2, offset: 0, limit: 1024 });
    const byName = new Map((r['data']['connections'] as any[]).map((c) => [c.name, c]));
    expect(byName.get('app-a')).toMatchObject({ cid: a.info!.client_id, kind: 'Client', type: 'nats', ip: '127.0.0.1', subscriptions: 1, lang: 'nats.js', authorized_user: 'a', account: 'A' });
    expect(byName.get('operator')).toMatchObject({ cid: sys.info!.client_id, authorized_user: 'sys', account: 'SYS' });
  });

  it('SUBSZ: the figures of every account and, with subscriptions, each subscription', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.SUBSZ', { subscriptions: true });
    const d = r['data'];
    expect(d['server_id']).toBe(serverId);
    expect(d['num_subscriptions']).toBe(d['total']);
    expect(d['offset']).toBe(0);
    expect(d['limit']).toBe(1024);
    const list = d['subscriptions_list'] as any[];
    expect(list.find((s) => s.subject === 'orders.x')).toMatchObject({ account: 'A', subject: 'orders.x', cid: a.info!.client_id, msgs: 0 });
    expect(list.some((s) => s.account === 'SYS' && s.subject === '$SYS.REQ.SERVER.PING')).toBe(true);
    const onlyTest = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.SUBSZ', { subscriptions: true, test: 'orders.x' });
    expect((onlyTest['data']['subscriptions_list'] as any[]).map((s) => s.subject)).toEqual(['orders.x']);
    const invalid = await sysAnswer(sys, '$SYS.REQ.SERVER.PING.SUBSZ', { subscriptions: true, test: 'orders.*' });
    expect(invalid['error']).toEqual({ code: 500, description: 'invalid test subject, must be valid publish subject: orders.*' });
  });

  it('HEALTHZ, ACCOUNTZ, JSZ, ROUTEZ', async () => {
    // 2.14 adds status_code; 2.9 has none
    expect((await sysAnswer(sys, '$SYS.REQ.SERVER.PING.HEALTHZ'))['data']).toEqual(AGAINST_NATS_SERVER ? { status: 'ok' } : { status: 'ok', status_code: 200 });
    if (!AGAINST_NATS_SERVER) {
      const jsOnly = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.HEALTHZ', { 'js-enabled-only': true }))['data'];
      expect(jsOnly).toEqual({ status: 'unavailable', error: 'JetStream not enabled', status_code: 503 });
    }
    const accz = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.ACCOUNTZ'))['data'];
    expect(accz['server_id']).toBe(serverId);
    expect(accz['system_account']).toBe('SYS');
    expect([...accz['accounts']].sort()).toEqual(['$G', 'A', 'B', 'SYS']);
    const one = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.ACCOUNTZ', { account: 'B' }))['data'];
    expect(one['account_detail']['account_name']).toBe('B');
    const jsz = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.JSZ'))['data'];
    expect(jsz['server_id']).toBe(serverId);
    expect(jsz['disabled']).toBe(true);
    const routez = (await sysAnswer(sys, '$SYS.REQ.SERVER.PING.ROUTEZ'))['data'];
    expect(routez).toMatchObject({ server_id: serverId, num_routes: 0 });
  });

  it('IDZ (2.10+; 2.9 has none): name, host and id without an envelope', async () => {
    if (AGAINST_NATS_SERVER) return expect(await sysRequest(sys, '$SYS.REQ.SERVER.PING.IDZ')).toBe('no-responders');
    expect(await sysAnswer(sys, '$SYS.REQ.SERVER.PING.IDZ')).toEqual({ name: SERVER_NAME, host: '127.0.0.1', id: serverId });
    expect(await sysAnswer(sys, `$SYS.REQ.SERVER.${serverId}.IDZ`)).toEqual({ name: SERVER_NAME, host: '127.0.0.1', id: serverId });
  });
});

describe('$SYS.REQ.ACCOUNT.<acc>.<endpoint>', () => {
  it('CONNZ and SUBSZ: only that account', async () => {
    const connz = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.CONNZ'))['data'];
    expect(connz['num_connections']).toBe(1);
    expect(connz['connections'][0]).toMatchObject({ cid: a.info!.client_id, name: 'app-a' });
    const subsz = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.SUBSZ'))['data'];
    const list = subsz['subscriptions_list'] as any[];
    expect(list.every((s) => s.account === 'A')).toBe(true);
    expect(list.filter((s) => s.cid === a.info!.client_id).map((s) => s.subject)).toContain('orders.x');
    expect(subsz['total']).toBe(list.length);
  });

  it('INFO: connections, subscriptions, exports and imports (the system ones included)', async () => {
    const d = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.INFO'))['data'];
    expect(d).toMatchObject({ account_name: 'A', expired: false, complete: true, jetstream_enabled: false, leafnode_connections: 0, client_connections: 1 });
    expect(d['subscriptions']).toBe(d['sublist_stats']['num_subscriptions']);
    expect(d['exports']).toEqual([expect.objectContaining({ subject: 'svc.time', type: 'service' })]);
    const imports = d['imports'] as any[];
    expect(imports.every((i) => i.account === 'SYS' && i.type === 'service' && i.invalid === false)).toBe(true);
    const b = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.B.INFO'))['data'];
    expect((b['imports'] as any[]).some((i) => i.account === 'A' && i.type === 'service' && (i.subject === 'svc.time' || i.to === 'svc.time'))).toBe(true);
    const sysInfo = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.SYS.INFO'))['data'];
    expect(sysInfo['account_name']).toBe('SYS');
    expect(sysInfo['client_connections']).toBe(1);
    if (!AGAINST_NATS_SERVER) {
      // 2.14: the exporter's subject, the local one in `to`; USER.INFO imported too
      expect(sysInfo['is_system']).toBe(true);
      expect(imports.map((i) => [i.subject, i.to, i.share]).sort()).toEqual(
        [
          ['$SYS.REQ.ACCOUNT.A.CONNZ', '$SYS.REQ.ACCOUNT.PING.CONNZ', false],
          ['$SYS.REQ.ACCOUNT.A.CONNZ', '$SYS.REQ.SERVER.PING.CONNZ', false],
          ['$SYS.REQ.ACCOUNT.A.STATZ', '$SYS.REQ.ACCOUNT.PING.STATZ', false],
          ['$SYS.REQ.USER.A.INFO', '$SYS.REQ.USER.INFO', true],
        ].sort(),
      );
      expect(d['exports']).toEqual([{ subject: 'svc.time', type: 'service', response_type: 'Singleton' }]);
      expect(d['name_tag']).toBe('A');
    }
  });

  it('INFO of an account that does not exist: error 500', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.ACCOUNT.NOPE.INFO');
    expect(r['error']).toEqual({ code: 500, description: 'Account NOPE does not exist' });
  });

  it('STATZ and CONNS: answered for an account with connections here, silent for one without', async () => {
    const statz = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.STATZ'))['data'];
    expect(statz['server_id']).toBe(serverId);
    expect(statz['account_statz']).toHaveLength(1);
    expect(statz['account_statz'][0]).toMatchObject({ acc: 'A', conns: 1, leafnodes: 0, total_conns: 1, slow_consumers: 0 });
    expect(await sysRequest(sys, '$SYS.REQ.ACCOUNT.B.STATZ', undefined, 500)).toBe('timeout');
    const unused = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.B.STATZ', { include_unused: true }))['data'];
    expect(unused['account_statz'][0]).toMatchObject({ acc: 'B', conns: 0, total_conns: 0 });
    const conns = await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.CONNS');
    expect(conns).toMatchObject({ type: 'io.nats.server.advisory.v1.account_connections', acc: 'A', conns: 1, total_conns: 1 });
    expectServerInfo(conns['server'], info(), expect);
    expect(await sysRequest(sys, '$SYS.REQ.ACCOUNT.B.CONNS', undefined, 500)).toBe('timeout');
    const all = (await sysAnswer(sys, '$SYS.REQ.ACCOUNT.PING.STATZ'))['data'];
    expect((all['account_statz'] as any[]).map((s) => s.acc).sort()).toEqual(['A', 'SYS']);
  });

  it('JSZ without JetStream: error 500 "jetstream not enabled", data null', async () => {
    const r = await sysAnswer(sys, '$SYS.REQ.ACCOUNT.A.JSZ');
    expect(r['data']).toBeNull();
    expect(r['error']).toEqual({ code: 500, description: 'jetstream not enabled' });
  });
});

describe('what an ordinary account sees of $SYS', () => {
  it('its own connections and statistics through the system imports; nothing server-wide', async () => {
    const connz = await sysAnswer(a, '$SYS.REQ.SERVER.PING.CONNZ');
    expectServerInfo(connz['server'], info(), expect);
    expect(connz['data']['num_connections']).toBe(1);
    expect(connz['data']['connections'][0]['cid']).toBe(a.info!.client_id);
    expect((await sysAnswer(a, '$SYS.REQ.ACCOUNT.PING.CONNZ'))['data']['num_connections']).toBe(1);
    const statz = (await sysAnswer(a, '$SYS.REQ.ACCOUNT.PING.STATZ'))['data'];
    expect((statz['account_statz'] as any[]).map((s) => s.acc)).toEqual(['A']);
    expect(await sysRequest(a, '$SYS.REQ.SERVER.PING')).toBe('no-responders');
    expect(await sysRequest(a, '$SYS.REQ.SERVER.PING.VARZ')).toBe('no-responders');
    expect(await sysRequest(a, '$SYS.REQ.ACCOUNT.A.INFO')).toBe('no-responders');
  });

  it('a subscriber on $SYS.> in another account sees none of the system account traffic', async () => {
    const b = await login('b');
    const spy = b.subscribe('$SYS.>');
    await b.flush();
    await sysAnswer(sys, '$SYS.REQ.SERVER.PING');
    const late = await login('b', { name: 'late' });
    await late.close();
    await b.flush();
    spy.unsubscribe();
    const seen: string[] = [];
    for await (const m of spy) seen.push(m.subject);
    expect(seen).toEqual([]);
  });

  it('USER.INFO (2.10+; 2.9 has none): the requester, its account and its permissions', async () => {
    if (AGAINST_NATS_SERVER) return expect(await sysRequest(a, '$SYS.REQ.USER.INFO')).toBe('no-responders');
    const mine = await sysAnswer(a, '$SYS.REQ.USER.INFO');
    expectServerInfo(mine['server'], info(), expect);
    expect(mine['data']).toEqual({
      user: 'a',
      account: 'A',
      account_name: 'A',
      permissions: { publish: { allow: ['orders.>', '$SYS.REQ.>'] }, subscribe: { allow: ['orders.>', '_INBOX.>'] } },
    });
    expect((await sysAnswer(sys, '$SYS.REQ.USER.INFO'))['data']).toEqual({ user: 'sys', account: 'SYS', account_name: 'SYS' });
  });

});
