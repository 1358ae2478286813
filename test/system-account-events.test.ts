// What the system account publishes on its own — client connect / disconnect and auth error events, the
// STATSZ heartbeat, the shutdown event — and the system account nobody configured (`$SYS`, as nats-server
// makes it), `no_system_account`, the `system_account` config errors, and the monitoring endpoints that
// report accounts (/accountz, /accstatz, /subsz, /connz?acc=). With E2E_SERVER=nats-server the same
// cases run against nats-server 2.9.10.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connect, type NatsConnection } from 'nats';
import { FLOTILLA_NODE_ARGS, startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { expectServerInfo, JsonMailbox, sysAnswer, sysRequest } from './helpers/system-requests.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const { conns, writeConf, serverWith } = useConfServers('sysacct-events');

async function login(s: FlotillaProcess, opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, ...opts });
  conns.push(nc);
  return nc;
}

async function httpJson(s: FlotillaProcess, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${s.httpPort}${path}`);
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

/** `-t -c` with the binary under test: exit code and everything it printed. */
async function checkConfig(conf: string, test = true): Promise<{ code: number | null; output: string }> {
  const file = writeConf(conf);
  const args = [...(test ? ['-t'] : []), '-c', file, '-p', '-1'];
  const [cmd, cmdArgs] = AGAINST_NATS_SERVER ? ['nats-server', args] : [process.execPath, [...FLOTILLA_NODE_ARGS, ...args]];
  const proc = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

const CONF = `
server_name: events-one
accounts {
  A: { users: [ { user: a, password: a } ] }
  SYS: { users: [ { user: sys, password: sys } ] }
}
system_account: SYS
`;

describe('client events', () => {
  it('CONNECT and DISCONNECT of a client in A: its ClientInfo, then its traffic and why it went', async () => {
    const s = await serverWith(CONF);
    const sys = await login(s, { user: 'sys', pass: 'sys' });
    const serverId = sys.info!.server_id;
    const connects = new JsonMailbox(sys, '$SYS.ACCOUNT.*.CONNECT');
    const disconnects = new JsonMailbox(sys, '$SYS.ACCOUNT.*.DISCONNECT');
    await sys.flush();
    const a = await connect({ servers: s.url, user: 'a', pass: 'a', name: 'evt-a', reconnect: false });
    const cid = a.info!.client_id;
    const c = await connects.next();
    expect(c.subject).toBe('$SYS.ACCOUNT.A.CONNECT');
    expect(c.json['type']).toBe('io.nats.server.advisory.v1.client_connect');
    expect(typeof c.json['id']).toBe('string');
    expect(Date.parse(c.json['timestamp'])).toBeGreaterThan(0);
    expectServerInfo(c.json['server'], { name: 'events-one', id: serverId, jetstream: false }, expect);
    expect(c.json['client']).toMatchObject({ host: '127.0.0.1', id: cid, acc: 'A', user: 'a', name: 'evt-a', lang: 'nats.js' });
    expect(typeof c.json['client']['ver']).toBe('string');
    expect(Date.parse(c.json['client']['start'])).toBeGreaterThan(0);
    if (!AGAINST_NATS_SERVER) expect(c.json['client']).toMatchObject({ kind: 'Client', client_type: 'nats', name_tag: 'A' });
    a.publish('x.1', 'hello');
    a.publish('x.2', 'hi');
    await a.flush();
    await a.close();
    const d = await disconnects.next();
    expect(d.subject).toBe('$SYS.ACCOUNT.A.DISCONNECT');
    expect(d.json['type']).toBe('io.nats.server.advisory.v1.client_disconnect');
    expect(d.json['client']).toMatchObject({ id: cid, acc: 'A', user: 'a', name: 'evt-a' });
    expect(Date.parse(d.json['client']['stop'])).toBeGreaterThanOrEqual(Date.parse(d.json['client']['start']));
    // what the client sent: its two messages (7 bytes); what it received: nothing
    expect(d.json['sent']).toMatchObject({ msgs: 2, bytes: 7 });
    expect(d.json['received']).toMatchObject({ msgs: 0, bytes: 0 });
    expect(d.json['reason']).toBe('Client Closed');
    expect(d.json['server']['seq']).toBeGreaterThan(c.json['server']['seq']);
  });

  it('an authentication failure: $SYS.SERVER.<id>.CLIENT.AUTH.ERR with the disconnect shape', async () => {
    const s = await serverWith(CONF);
    const sys = await login(s, { user: 'sys', pass: 'sys' });
    const serverId = sys.info!.server_id;
    const errors = new JsonMailbox(sys, `$SYS.SERVER.${serverId}.CLIENT.AUTH.ERR`);
    await sys.flush();
    await expect(connect({ servers: s.url, user: 'a', pass: 'wrong', reconnect: false })).rejects.toThrow();
    const e = await errors.next();
    expect(e.json['type']).toBe('io.nats.server.advisory.v1.client_disconnect');
    expect(e.json['reason']).toBe('Authentication Failure');
    expect(e.json['client']['host']).toBe('127.0.0.1');
    expectServerInfo(e.json['server'], { name: 'events-one', id: serverId, jetstream: false }, expect);
  });
});

describe('account connection counts', () => {
  it('$SYS.ACCOUNT.<acc>.SERVER.CONNS (and the old subject) when a client of A comes and goes', async () => {
    const s = await serverWith(CONF);
    const sys = await login(s, { user: 'sys', pass: 'sys' });
    const counts = new JsonMailbox(sys, '$SYS.ACCOUNT.A.SERVER.CONNS');
    const old = new JsonMailbox(sys, '$SYS.SERVER.ACCOUNT.A.CONNS');
    await sys.flush();
    const a = await connect({ servers: s.url, user: 'a', pass: 'a', reconnect: false });
    const up = await counts.next();
    expect(up.json).toMatchObject({ type: 'io.nats.server.advisory.v1.account_connections', acc: 'A', conns: 1, leafnodes: 0, total_conns: 1 });
    expectServerInfo(up.json['server'], { name: 'events-one', id: sys.info!.server_id, jetstream: false }, expect);
    expect((await old.next()).json).toMatchObject({ acc: 'A', conns: 1 });
    await a.close();
    expect((await counts.next()).json).toMatchObject({ acc: 'A', conns: 0, total_conns: 0 });
  });
});

describe('server events', () => {
  it('STATSZ heartbeat on $SYS.SERVER.<id>.STATSZ while someone listens', async () => {
    const s = await serverWith(CONF);
    const sys = await login(s, { user: 'sys', pass: 'sys' });
    const serverId = sys.info!.server_id;
    const beats = new JsonMailbox(sys, `$SYS.SERVER.${serverId}.STATSZ`);
    const first = await beats.next(12_000);
    expectServerInfo(first.json['server'], { name: 'events-one', id: serverId, jetstream: false }, expect);
    expect(first.json['statsz']).toMatchObject({ connections: 1, slow_consumers: 0 });
    // a STATSZ ping without a reply: the answer is the broadcast
    sys.publish('$SYS.REQ.SERVER.PING.STATSZ');
    const broadcast = await beats.next(5_000);
    expect(broadcast.json['server']['seq']).toBeGreaterThan(first.json['server']['seq']);
  });

  it('SHUTDOWN on $SYS.SERVER.<id>.SHUTDOWN: the server info, before the connections close', async () => {
    const s = await startFlotilla({ args: ['-c', writeConf(CONF)] });
    const sys = await connect({ servers: s.url, user: 'sys', pass: 'sys', reconnect: false });
    const serverId = sys.info!.server_id;
    const down = new JsonMailbox(sys, `$SYS.SERVER.${serverId}.SHUTDOWN`);
    await sys.flush();
    const got = down.next(10_000);
    const stopped = s.stop();
    const m = await got;
    expect(m.json).toMatchObject({ name: 'events-one', id: serverId, jetstream: false });
    expect(m.json['seq']).toBeGreaterThan(0);
    await stopped;
    await sys.close().catch(() => undefined);
  });
});

describe('lame duck', () => {
  it('$SYS.SERVER.<id>.LAMEDUCK when the server enters lame-duck mode (2.10+; 2.9 sends none)', async () => {
    const s = await serverWith(CONF, { env: { FLOTILLA_LAME_DUCK_DURATION_MS: '1000', FLOTILLA_LAME_DUCK_GRACE_MS: '200' } });
    const sys = await connect({ servers: s.url, user: 'sys', pass: 'sys', reconnect: false });
    const serverId = sys.info!.server_id;
    const ldm = new JsonMailbox(sys, `$SYS.SERVER.${serverId}.LAMEDUCK`);
    await sys.flush();
    s.proc.kill('SIGUSR2');
    if (AGAINST_NATS_SERVER) {
      await expect(ldm.next(1000)).rejects.toThrow('no message');
    } else {
      const m = await ldm.next(5000);
      expect(m.json).toMatchObject({ name: 'events-one', id: serverId });
    }
    await sys.close().catch(() => undefined);
  });
});

describe('the system account nobody configured', () => {
  it('$SYS exists: a client of the global account sees its own connections and statistics, nothing else', async () => {
    const s = await serverWith('server_name: plain-one');
    const nc = await login(s, { name: 'plain' });
    const connz = await sysAnswer(nc, '$SYS.REQ.SERVER.PING.CONNZ');
    expectServerInfo(connz['server'], { name: 'plain-one', id: nc.info!.server_id, jetstream: false }, expect);
    expect(connz['data']['num_connections']).toBe(1);
    expect(connz['data']['connections'][0]).toMatchObject({ cid: nc.info!.client_id, name: 'plain' });
    const statz = (await sysAnswer(nc, '$SYS.REQ.ACCOUNT.PING.STATZ'))['data'];
    expect(statz['account_statz']).toHaveLength(1);
    expect(statz['account_statz'][0]).toMatchObject({ acc: '$G', conns: 1, total_conns: 1 });
    expect(await sysRequest(nc, '$SYS.REQ.SERVER.PING')).toBe('no-responders');
    const accountz = await httpJson(s, '/accountz');
    expect(accountz.body['system_account']).toBe('$SYS');
    expect([...accountz.body['accounts']].sort()).toEqual(['$G', '$SYS']);
  });

  it('no_system_account: no $SYS and no system imports', async () => {
    const s = await serverWith('no_system_account: true');
    const nc = await login(s);
    expect(await sysRequest(nc, '$SYS.REQ.SERVER.PING.CONNZ')).toBe('no-responders');
    const accountz = await httpJson(s, '/accountz');
    expect(accountz.body['system_account']).toBeUndefined();
    expect(accountz.body['accounts']).toEqual(['$G']);
  });

  it('an account called $SYS is the system account without system_account', async () => {
    const s = await serverWith('accounts { $SYS: { users: [ { user: s, password: s } ] } }');
    const nc = await login(s, { user: 's', pass: 's' });
    const r = await sysAnswer(nc, '$SYS.REQ.SERVER.PING');
    expect(r['statsz']['connections']).toBe(1);
  });
});

describe('system_account in the config', () => {
  it('naming an account that is not configured: the server does not start', async () => {
    const r = await checkConfig('system_account: NOPE', false);
    expect(r.output).toContain('error resolving system account: account missing');
    expect(r.code).toBe(1);
  });

  it('a name that is not a string is an error naming the line', async () => {
    const r = await checkConfig('system_account: 5');
    expect(r.output).toContain('system account name must be a string');
    expect(r.code).toBe(1);
  });

  it('`system` is the same key', async () => {
    const s = await serverWith('accounts { OPS: { users: [ { user: o, password: o } ] } }\nsystem: OPS');
    const nc = await login(s, { user: 'o', pass: 'o' });
    const accz = (await sysAnswer(nc, '$SYS.REQ.SERVER.PING.ACCOUNTZ'))['data'];
    expect(accz['system_account']).toBe('OPS');
  });
});

describe('monitoring: accounts over HTTP', () => {
  it('/accountz, /accountz?acc=, /accstatz, /subsz, /connz?acc= and the account field of /connz?auth=1', async () => {
    const s = await serverWith(CONF);
    const a = await login(s, { user: 'a', pass: 'a', name: 'mon-a' });
    const sys = await login(s, { user: 'sys', pass: 'sys' });
    a.subscribe('mon.one');
    a.subscribe('mon.two', { queue: 'q' });
    await a.flush();
    await sys.flush();
    const serverId = a.info!.server_id;

    const accountz = (await httpJson(s, '/accountz')).body;
    expect(accountz).toMatchObject({ server_id: serverId, system_account: 'SYS' });
    expect([...accountz['accounts']].sort()).toEqual(['$G', 'A', 'SYS']);
    const detail = (await httpJson(s, '/accountz?acc=A')).body['account_detail'];
    expect(detail).toMatchObject({ account_name: 'A', client_connections: 1, jetstream_enabled: false, expired: false, complete: true });
    expect(detail['sublist_stats']['num_subscriptions']).toBe(detail['subscriptions']);
    const missing = await httpJson(s, '/accountz?acc=NOPE');
    expect(missing.status).toBe(400);
    expect(missing.body).toBe('Account NOPE does not exist');

    const accstatz = (await httpJson(s, '/accstatz')).body;
    expect(accstatz['server_id']).toBe(serverId);
    expect((accstatz['account_statz'] as any[]).map((x) => x.acc).sort()).toEqual(['A', 'SYS']);
    const withUnused = (await httpJson(s, '/accstatz?unused=1')).body;
    expect((withUnused['account_statz'] as any[]).map((x) => x.acc).sort()).toEqual(['$G', 'A', 'SYS']);

    const subsz = (await httpJson(s, '/subsz')).body;
    if (!AGAINST_NATS_SERVER) expect(subsz['server_id']).toBe(serverId); // 2.14's; 2.9 has no server_id here
    expect(subsz['num_subscriptions']).toBeGreaterThanOrEqual(2);
    expect(subsz['subscriptions_list']).toBeUndefined();
    const subsA = (await httpJson(s, '/subsz?subs=1&acc=A')).body;
    const mine = (subsA['subscriptions_list'] as any[]).filter((x) => x.cid === a.info!.client_id);
    expect(mine.map((x) => [x.subject, x.qgroup ?? null, x.account]).sort()).toEqual([
      ['mon.one', null, 'A'],
      ['mon.two', 'q', 'A'],
    ]);
    expect((subsA['subscriptions_list'] as any[]).every((x) => x.account === 'A')).toBe(true);
    const badTest = await httpJson(s, '/subsz?subs=1&test=mon.*');
    expect(badTest.status).toBe(400);

    const connzA = (await httpJson(s, '/connz?acc=A')).body;
    expect(connzA['num_connections']).toBe(1);
    expect(connzA['connections'][0]['name']).toBe('mon-a');
    const connzAuth = (await httpJson(s, '/connz?auth=1')).body;
    const accountOf = new Map((connzAuth['connections'] as any[]).map((c) => [c.cid, c.account]));
    expect(accountOf.get(a.info!.client_id)).toBe('A');
    expect(accountOf.get(sys.info!.client_id)).toBe('SYS');
  });
});
