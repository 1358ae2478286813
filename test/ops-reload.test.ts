// Config reload on SIGHUP (and `--signal reload`), against real server processes: permissions change on a
// live connection, users come and go without a restart, a broken or non-reloadable config keeps the old
// one, /varz config_load_time moves. Exact wire texts are checked with raw sockets, staying connected with
// the stock client. E2E_SERVER=nats-server runs the same against nats-server.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import bcrypt from 'bcryptjs';
import { connect, type NatsConnection } from 'nats';
import { FLOTILLA_NODE_ARGS, startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { RawClient } from './helpers/raw-client.js';
import { makeTestCertificates } from './security-certificates.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(20);
const againstNatsServer = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-reload-'));
const servers: FlotillaProcess[] = [];
const conns: NatsConnection[] = [];
const raws: RawClient[] = [];
const certDirs: string[] = [];
afterAll(async () => {
  for (const d of certDirs) rmSync(d, { recursive: true, force: true });
  for (const r of raws) r.close();
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
interface Reloadable {
  server: FlotillaProcess;
  conf: string;
  /** writes the config and sends SIGHUP; resolves with the outcome line once the server logged it */
  reload(text: string): Promise<'reloaded' | 'failed'>;
}

const OK_LINE = 'Reloaded server configuration';
const FAIL_LINE = 'Failed to reload server configuration';
const count = (text: string, needle: string): number => text.split(needle).length - 1;

async function serverOn(text: string, extraArgs: string[] = []): Promise<Reloadable> {
  const conf = join(dir, `reload-${++files}.conf`);
  writeFileSync(conf, text);
  const server = await startFlotilla({ args: ['-c', conf, ...extraArgs] });
  servers.push(server);
  const reload = async (next: string, send: () => void = () => server.proc.kill('SIGHUP')): Promise<'reloaded' | 'failed'> => {
    const ok = count(server.output(), OK_LINE);
    const failed = count(server.output(), FAIL_LINE);
    writeFileSync(conf, next);
    send();
    await until(() => count(server.output(), OK_LINE) > ok || count(server.output(), FAIL_LINE) > failed, 10_000, 'the reload outcome');
    return count(server.output(), OK_LINE) > ok ? 'reloaded' : 'failed';
  };
  return { server, conf, reload: (next) => reload(next) };
}

async function raw(port: number, connectJson: Record<string, unknown>, ops = ''): Promise<RawClient> {
  const r = await RawClient.connect(port);
  raws.push(r);
  r.send(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, ...connectJson })}\r\n${ops}`);
  await r.flush();
  return r;
}

async function client(s: FlotillaProcess, user: string, pass: string): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, user, pass, reconnect: false });
  conns.push(nc);
  return nc;
}

async function varzOf(s: FlotillaProcess): Promise<Record<string, unknown>> {
  return (await (await fetch(`http://127.0.0.1:${s.httpPort}/varz`)).json()) as Record<string, unknown>;
}

/** The common name of the certificate a new TLS handshake gets (INFO in plain text first, as nats-server 2.9). */
function peerCommonName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('error', reject);
    socket.once('data', () => {
      const secure = tlsConnect({ socket, rejectUnauthorized: false, servername: 'localhost' }, () => {
        const cn = secure.getPeerCertificate().subject?.CN;
        secure.destroy();
        resolve(Array.isArray(cn) ? cn.join(',') : (cn ?? ''));
      });
      secure.once('error', reject);
    });
  });
}

const users = (entries: string): string => `authorization { users = [ ${entries} ] }\n`;

describe.concurrent('config reload', () => {
  it('a permission change applies to a live connection: publish refused, a no longer allowed subscription removed', async () => {
    const before = users(`{user: a, password: a, permissions: {publish: ">", subscribe: ">"}}`);
    const { server, reload } = await serverOn(before);
    const nc = await client(server, 'a', 'a');
    const r = await raw(server.port, { user: 'a', pass: 'a' }, 'SUB secret.> 1\r\nSUB ok.> 2\r\n');
    const after = users(`{user: a, password: a, permissions: {publish: "ok.>", subscribe: "ok.>"}}`);
    expect(await reload(after)).toBe('reloaded');
    await r.waitFor(/-ERR 'Permissions Violation for Subscription to "secret\.>" \(sid "1"\)'\r\n/);
    r.clear();
    r.send('PUB secret.x 2\r\nhi\r\nPUB ok.x 2\r\nhi\r\n');
    await r.waitFor(/-ERR 'Permissions Violation for Publish to "secret\.x"'\r\n/);
    await r.flush();
    // ok.x still reaches the connection's own allowed subscription; the removed one gets nothing
    expect(r.received).toMatch(/MSG ok\.x 2 2\r\nhi\r\n/);
    expect(r.received).not.toContain('MSG secret');
    expect(r.closed).toBe(false);
    // the stock client stays connected and keeps working within the new permissions
    const got = nc.subscribe('ok.y', { max: 1 });
    nc.publish('ok.y', 'still here');
    for await (const m of got) expect(m.string()).toBe('still here');
    expect(nc.isClosed()).toBe(false);
  });

  it('an added user logs in without a restart; a removed user is disconnected; a changed password is an authorization violation', async () => {
    const { server, reload } = await serverOn(users(`{user: a, password: a}, {user: b, password: b}, {user: c, password: c}`));
    await expect(connect({ servers: server.url, user: 'd', pass: 'd', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    const a = await client(server, 'a', 'a');
    const b = await raw(server.port, { user: 'b', pass: 'b' });
    const c = await raw(server.port, { user: 'c', pass: 'c' });
    expect(await reload(users(`{user: a, password: a}, {user: c, password: changed}, {user: d, password: d}`))).toBe('reloaded');
    // nats-server closes a removed user's connection without an -ERR (the user "moved" out of its account)
    await b.waitClosed();
    expect(b.received).not.toContain('-ERR');
    await c.waitFor(/-ERR 'Authorization Violation'\r\n/);
    await c.waitClosed();
    const d = await client(server, 'd', 'd');
    await d.flush();
    await a.flush();
    expect(a.isClosed()).toBe(false);
  });

  it('a config with an error keeps the old one and says why; config_load_time moves only on success', async () => {
    const good = `http: 127.0.0.1:-1\n${users(`{user: a, password: a}`)}`;
    const { server, reload } = await serverOn(good, ['-m', '-1']);
    const loadedAt = (await varzOf(server))['config_load_time'] as string;
    expect(Date.parse(loadedAt)).toBeGreaterThan(Date.now() - 60_000);
    const a = await client(server, 'a', 'a');
    expect(await reload(`${users(`{user: a, password: a}, {user: b, password: b}`)}\nport: [ broken`)).toBe('failed');
    expect((await varzOf(server))['config_load_time']).toBe(loadedAt);
    await expect(connect({ servers: server.url, user: 'b', pass: 'b', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    await a.flush();
    expect(await reload(`${users(`{user: a, password: a}, {user: b, password: b}`)}`)).toBe('reloaded');
    await (await client(server, 'b', 'b')).flush();
    expect(Date.parse((await varzOf(server))['config_load_time'] as string)).toBeGreaterThan(Date.parse(loadedAt));
  });

  it("a key that cannot change at run time fails the reload with nats-server's text, and nothing of that config applies", async () => {
    const { server, reload } = await serverOn(`server_name: before\n${users(`{user: a, password: a}`)}`);
    const a = await client(server, 'a', 'a');
    expect(await reload(`server_name: after\n${users(`{user: a, password: a}, {user: b, password: b}`)}`)).toBe('failed');
    expect(server.output()).toContain('config reload not supported for ServerName: old=before, new=after');
    await expect(connect({ servers: server.url, user: 'b', pass: 'b', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    await a.flush();
    expect(a.info?.server_name).toBe('before');
  });

  it('max_payload applies to live connections and new INFO; max_subscriptions is not reloadable (as nats-server)', async () => {
    const { server, reload } = await serverOn(`max_subscriptions: 10\n`);
    const r = await raw(server.port, {}, 'SUB a 1\r\n');
    expect(await reload(`max_subscriptions: 2\n`)).toBe('failed');
    expect(server.output()).toContain('config reload not supported for MaxSubs: old=10, new=2');
    expect(await reload(`max_subscriptions: 10\nmax_payload: 8\n`)).toBe('reloaded');
    r.send('PUB a 9\r\n123456789\r\n');
    await r.waitFor(/-ERR 'Maximum Payload Violation'\r\n/);
    const fresh = await RawClient.connect(server.port);
    raws.push(fresh);
    expect(fresh.received).toMatch(/"max_payload":8[,}]/);
  });

  it("an account's imports and exports change on reload: a removed stream import stops delivering, a new one starts", async () => {
    const accounts = (importSubject: string): string => `accounts {
  SRC: { users: [ {user: src, password: src} ], exports: [ {stream: "orders.>"}, {stream: "audit.>"} ] }
  DST: { users: [ {user: dst, password: dst} ], imports: [ {stream: {account: SRC, subject: "${importSubject}"}} ] }
}
`;
    const { server, reload } = await serverOn(accounts('orders.>'));
    const src = await client(server, 'src', 'src');
    const dst = await client(server, 'dst', 'dst');
    const got: string[] = [];
    dst.subscribe('>', { callback: (_e, m) => got.push(`${m.subject}:${m.string()}`) });
    await dst.flush();
    src.publish('orders.1', 'a');
    src.publish('audit.1', 'b');
    await src.flush();
    await until(() => got.length >= 1, 5_000, 'the imported order');
    expect(await reload(accounts('audit.>'))).toBe('reloaded');
    src.publish('orders.2', 'c');
    src.publish('audit.2', 'd');
    await src.flush();
    await until(() => got.length >= 2, 5_000, 'the newly imported audit message');
    await dst.flush();
    expect(got).toEqual(['orders.1:a', 'audit.2:d']);
    expect(dst.isClosed()).toBe(false);
  });

  it('JetStream limits may grow at run time (nats-server 2.14; 2.9.10 refuses any change), never shrink; store_dir is fixed', async () => {
    const store = join(dir, `js-${++files}`);
    const js = (mem: string, file: string, storeDir = store): string => `http: "127.0.0.1:-1"\njetstream { store_dir: "${storeDir}", max_mem_store: ${mem}, max_file_store: ${file} }\n`;
    const { server, reload } = await serverOn(js('1MB', '10MB'));
    const limits = async (): Promise<unknown> => ((await varzOf(server))['jetstream'] as { config: Record<string, unknown> }).config;
    expect(await limits()).toMatchObject({ max_memory: 1024 * 1024, max_storage: 10 * 1024 * 1024 });
    expect(await reload(js('1MB', '5MB'))).toBe('failed');
    expect(server.output()).toMatch(/config reload not supported for (decreasing )?jetstream max memory and store/);
    expect(await reload(js('1MB', '10MB', join(dir, 'elsewhere')))).toBe('failed');
    expect(server.output()).toContain('config reload not supported for jetstream storage directory');
    if (!againstNatsServer) {
      expect(await reload(js('2MB', '20MB'))).toBe('reloaded');
      expect(await limits()).toMatchObject({ max_memory: 2 * 1024 * 1024, max_storage: 20 * 1024 * 1024 });
    }
    expect(await limits()).toMatchObject({ max_storage: againstNatsServer ? 10 * 1024 * 1024 : 20 * 1024 * 1024 });
  });

  it('new TLS certificates serve the next handshakes; connected TLS clients stay', async () => {
    const certs = makeTestCertificates();
    certDirs.push(certs.dir);
    const tlsConf = (pair: { cert: string; key: string }): string => `tls { cert_file: "${pair.cert}", key_file: "${pair.key}" }\n`;
    const { server, reload } = await serverOn(tlsConf(certs.server));
    const nc = await connect({ servers: server.url, tls: { caFile: certs.caFile }, reconnect: false });
    conns.push(nc);
    expect(await peerCommonName(server.port)).toBe('localhost');
    expect(await reload(tlsConf(certs.carol))).toBe('reloaded');
    expect(await peerCommonName(server.port)).toBe('carol');
    await nc.flush();
    expect(nc.isClosed()).toBe(false);
    expect(await reload(tlsConf({ cert: join(dir, 'missing.pem'), key: certs.carol.key }))).toBe('failed');
    expect(await peerCommonName(server.port)).toBe('carol');
  });

  it('a config whose only account is the system account reloads (its generated no_auth_user stays)', async () => {
    const conf = (maxPayload: number): string => `max_payload: ${maxPayload}\nsystem_account: SYS\naccounts { SYS: { users: [ {user: sys, password: sys} ] } }\n`;
    const { server, reload } = await serverOn(conf(4096));
    const anonymous = await connect({ servers: server.url, reconnect: false });
    conns.push(anonymous);
    expect(await reload(conf(2048))).toBe('reloaded');
    await anonymous.flush();
    expect(anonymous.isClosed()).toBe(false);
    const fresh = await connect({ servers: server.url, reconnect: false });
    conns.push(fresh);
    expect(fresh.info?.max_payload).toBe(2048);
  });

  it('a lowered max_connections closes connections until the count fits; debug turned on logs debug lines', async () => {
    const { server, reload } = await serverOn('max_connections: 10\n');
    const clients = await Promise.all([0, 1, 2, 3].map(() => raw(server.port, {})));
    expect(await reload('max_connections: 2\ndebug: true\n')).toBe('reloaded');
    await until(() => clients.filter((c) => c.closed).length === 2, 5_000, 'two connections closed');
    for (const c of clients.filter((x) => !x.closed)) await c.flush();
    const refused = await RawClient.connect(server.port);
    raws.push(refused);
    await refused.waitFor(/-ERR 'maximum connections exceeded'\r\n/);
    // a connection's close is logged at debug level now (nats-server: [DBG] lines; flotilla: level 20)
    const debugLine = /\[DBG\].*onnection closed|"level":20.*onnection closed/;
    const before = server.output().length;
    clients.find((c) => !c.closed)!.close();
    await until(() => debugLine.test(server.output().slice(before)), 5_000, 'a debug line');
  });

  it('many clients of a bcrypt user stay connected through a reload (their proven hash is not checked again)', async () => {
    const hash = bcrypt.hashSync('secret', 10);
    const conf = (extra: string): string => users(`{user: app, password: "${hash}"}${extra}`);
    const { server, reload } = await serverOn(conf(''));
    const connectStartMs = Date.now();
    const clients = await Promise.all(Array.from({ length: 30 }, () => connect({ servers: server.url, user: 'app', pass: 'secret', reconnect: false })));
    const connectMs = Date.now() - connectStartMs;
    conns.push(...clients);
    const reloadStartMs = Date.now();
    expect(await reload(conf(', {user: other, password: other}'))).toBe('reloaded');
    // 30 bcrypt checks took connectMs; flotilla's reload does none of them again (nats-server does)
    if (!againstNatsServer) expect(Date.now() - reloadStartMs).toBeLessThan(connectMs);
    await Promise.all(clients.map((nc) => nc.flush()));
    expect(clients.filter((nc) => nc.isClosed())).toEqual([]);
  });

  it('accounts come and go on reload: an added one serves its users and imports, a removed one closes its clients', async () => {
    const one = `accounts {
  A: { users: [ {user: a, password: a} ], exports: [ {stream: "news.>"} ] }
}
`;
    const two = `accounts {
  A: { users: [ {user: a, password: a} ], exports: [ {stream: "news.>"} ] }
  B: { users: [ {user: b, password: b} ], imports: [ {stream: {account: A, subject: "news.>"}} ] }
}
`;
    const { server, reload } = await serverOn(one);
    const a = await client(server, 'a', 'a');
    await expect(connect({ servers: server.url, user: 'b', pass: 'b', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    expect(await reload(two)).toBe('reloaded');
    const b = await raw(server.port, { user: 'b', pass: 'b' }, 'SUB news.> 1\r\n');
    await b.flush();
    a.publish('news.today', 'hello');
    await a.flush();
    await b.waitFor(/MSG news\.today 1 5\r\nhello\r\n/);
    expect(await reload(one)).toBe('reloaded');
    await b.waitClosed();
    await expect(connect({ servers: server.url, user: 'b', pass: 'b', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
    await a.flush();
    expect(a.isClosed()).toBe(false);
  });

  it.skipIf(againstNatsServer)('a new ping_interval re-arms the PINGs of live connections (nats-server: after the current period)', async () => {
    const { server, reload } = await serverOn('ping_interval: "1m"\nping_max: 1000\n');
    const r = await raw(server.port, {});
    r.clear();
    expect(await reload('ping_interval: "100ms"\nping_max: 1000\n')).toBe('reloaded');
    await until(() => (r.received.match(/PING\r\n/g) ?? []).length >= 3, 3_000, 'three PINGs at the new interval');
  });

  it('a lowered max_control_line applies to a live connection', async () => {
    const { server, reload } = await serverOn('max_control_line: 4096\n');
    const r = await raw(server.port, {}, `SUB ${'a'.repeat(100)} 1\r\n`);
    expect(r.received).not.toContain('-ERR');
    expect(await reload('max_control_line: 64\n')).toBe('reloaded');
    r.send(`SUB ${'b'.repeat(100)} 2\r\n`);
    await r.waitFor(/-ERR 'maximum control line exceeded'\r\n/);
    await r.waitClosed();
  });

  it('--signal reload=<pid file> reloads the config', async () => {
    const pidFile = join(dir, 'reload.pid');
    const { server, conf } = await serverOn(`pid_file: "${pidFile}"\n${users(`{user: a, password: a}`)}`);
    const ok = count(server.output(), OK_LINE);
    writeFileSync(conf, `pid_file: "${pidFile}"\n${users(`{user: a, password: a}, {user: b, password: b}`)}`);
    const [cmd, args] = againstNatsServer ? ['nats-server', ['--signal', `reload=${pidFile}`]] : [process.execPath, [...FLOTILLA_NODE_ARGS, '--signal', `reload=${pidFile}`]];
    const code = await new Promise<number | null>((resolve) => spawn(cmd, args, { stdio: 'ignore' }).once('close', resolve));
    expect(code).toBe(0);
    await until(() => count(server.output(), OK_LINE) > ok, 10_000, 'the reload');
    await (await client(server, 'b', 'b')).flush();
  });
});
