// Authentication with the real client: user/password, token, users list, refusal and timeout.
import { describe, it, expect, afterAll } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection, type NatsError, ErrorCode } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { RawClient } from './helpers/raw-client.js';

const servers: FlotillaProcess[] = [];
const conns: NatsConnection[] = [];

async function server(args: string[]): Promise<FlotillaProcess> {
  const s = await startFlotilla({ args });
  servers.push(s);
  return s;
}

async function tryConnect(s: FlotillaProcess, opts: Record<string, unknown>): Promise<NatsConnection | NatsError> {
  try {
    const nc = await connect({ servers: s.url, reconnect: false, ...opts });
    conns.push(nc);
    return nc;
  } catch (err) {
    return err as NatsError;
  }
}

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  for (const s of servers) expect(await s.stop()).toBe(0);
});

describe('authorization', () => {
  it('user and password from flags: right credentials work, wrong ones are refused', async () => {
    const s = await server(['--user', 'alice', '--pass', 's3cret']);
    const ok = await tryConnect(s, { user: 'alice', pass: 's3cret' });
    expect('publish' in ok).toBe(true);
    const nc = ok as NatsConnection;
    expect(nc.info?.auth_required).toBe(true);
    const bad = (await tryConnect(s, { user: 'alice', pass: 'wrong' })) as NatsError;
    expect(bad.code).toBe(ErrorCode.AuthorizationViolation);
    const none = (await tryConnect(s, {})) as NatsError;
    expect(none.code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('token from --auth', async () => {
    const s = await server(['--auth', 'tok3n']);
    const ok = await tryConnect(s, { token: 'tok3n' });
    expect('publish' in ok).toBe(true);
    const bad = (await tryConnect(s, { token: 'nope' })) as NatsError;
    expect(bad.code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('a users list from a config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-auth-'));
    const conf = join(dir, 'auth.conf');
    writeFileSync(conf, 'authorization {\n  users = [\n    {user: a, password: pa}\n    {user: "b", password: "pb"}\n  ]\n}\n');
    const s = await server(['-c', conf]);
    for (const [user, pass] of [['a', 'pa'], ['b', 'pb']]) {
      const nc = (await tryConnect(s, { user, pass })) as NatsConnection;
      const sub = nc.subscribe('hello', { max: 1 });
      nc.publish('hello', user);
      for await (const m of sub) expect(new TextDecoder().decode(m.data)).toBe(user);
    }
    const bad = (await tryConnect(s, { user: 'a', pass: 'pb' })) as NatsError;
    expect(bad.code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('on the wire: an op before CONNECT is an Authorization Violation and the socket closes', async () => {
    const s = await server(['--user', 'u', '--pass', 'p']);
    const c = await RawClient.connect(s.port);
    c.clear();
    c.send('PING\r\n');
    await c.waitClosed();
    expect(c.received).toBe("-ERR 'Authorization Violation'\r\n");
  });

  it('on the wire: no CONNECT within the auth timeout closes with Authentication Timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-auth-'));
    const conf = join(dir, 'timeout.conf');
    writeFileSync(conf, 'authorization { token: abc, timeout: 0.5 }\n');
    const s = await server(['-c', conf]);
    const c = await RawClient.connect(s.port);
    c.clear();
    const started = Date.now();
    await c.waitClosed(5_000);
    expect(c.received).toBe("-ERR 'Authentication Timeout'\r\n");
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });
});
