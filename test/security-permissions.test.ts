// Users with subject permissions, end to end: every rule allowed and refused, with nats-server's exact
// -ERR texts (checked on raw sockets) and with the nats client; bcrypt passwords and tokens;
// allow_responses; max_subscriptions; the JetStream API governed by the same rules.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { connect, type NatsConnection, type NatsError, ErrorCode } from 'nats';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';
import { RawClient } from './helpers/raw-client.js';

/** Exit codes after SIGTERM: flotilla 0; nats-server 2.9.10 exits 0 or 1. */
const CLEAN_EXITS = process.env['E2E_SERVER'] === 'nats-server' ? [0, 1] : [0];
const PUB_DENIED = (s: string): string => `-ERR 'Permissions Violation for Publish to "${s}"'\r\n`;
const SUB_DENIED = (s: string): string => `-ERR 'Permissions Violation for Subscription to "${s}"'\r\n`;

// Low cost keeps the test fast; the server accepts any cost, as nats-server does.
const BCRYPT_PASSWORD = 'bcrypt-pass';
const BCRYPT_TOKEN = 'bcrypt-token';

function writeConf(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-perm-'));
  const file = join(dir, 'server.conf');
  writeFileSync(file, text);
  return file;
}

const USERS_CONF = `
max_subscriptions: 5
authorization {
  default_permissions { publish: "def.>", subscribe: "def.>" }
  users = [
    { user: alice, password: apass, permissions: {
        publish: { allow: ["foo.>", "svc.*"], deny: ["foo.secret", "foo.private.>"] }
        subscribe: { allow: ["foo.>", "q.* grp", "wild.v1.* workers.*", "_INBOX.>"], deny: "foo.hidden" }
    } }
    { user: pubonly, password: ppass, permissions: { publish: ["a.b", "a.c.*"], subscribe: { deny: ">" } } }
    { user: responder, password: rpass, permissions: { subscribe: "req.>", allow_responses: true } }
    { user: responder2, password: rpass, permissions: { subscribe: "req.>", allow_responses: { max: 2, expires: "500ms" } } }
    { user: free, password: fpass, permissions: { publish: ">", subscribe: ">" } }
    { user: plain, password: plainpass }
    { user: hashed, password: "${bcrypt.hashSync(BCRYPT_PASSWORD, 4)}", permissions: { publish: "h.>", subscribe: "h.>" } }
  ]
}
`;

async function raw(port: number, user: string, pass: string): Promise<RawClient> {
  const c = await RawClient.connect(port);
  c.send(`CONNECT {"verbose":false,"pedantic":false,"user":"${user}","pass":"${pass}"}\r\n`);
  await c.flush();
  c.clear();
  return c;
}

describe('subject permissions', () => {
  let server: FlotillaProcess;
  const clients: RawClient[] = [];
  const conns: NatsConnection[] = [];

  beforeAll(async () => {
    server = await startServer({ args: ['-c', writeConf(USERS_CONF)] });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
    expect(CLEAN_EXITS).toContain(await server.stop());
  });

  async function client(user: string, pass: string): Promise<RawClient> {
    const c = await raw(server.port, user, pass);
    clients.push(c);
    return c;
  }

  it('publish: allow list with wildcards, deny list over it, exact -ERR text, connection stays open', async () => {
    const watcher = await client('free', 'fpass');
    watcher.send('SUB > 1\r\n');
    await watcher.flush();
    const alice = await client('alice', 'apass');
    for (const subject of ['foo.ok', 'foo.a.b', 'svc.x']) alice.send(`PUB ${subject} 2\r\nok\r\n`);
    for (const subject of ['foo.secret', 'foo.private.x', 'svc.x.y', 'bar', 'foo']) alice.send(`PUB ${subject} 2\r\nno\r\n`);
    await alice.flush();
    expect(alice.received).toBe(
      PUB_DENIED('foo.secret') + PUB_DENIED('foo.private.x') + PUB_DENIED('svc.x.y') + PUB_DENIED('bar') + PUB_DENIED('foo') + 'PONG\r\n',
    );
    expect(alice.closed).toBe(false);
    await watcher.flush();
    const delivered = [...watcher.received.matchAll(/MSG (\S+) 1 2\r\n/g)].map((m) => m[1]);
    expect(delivered).toEqual(['foo.ok', 'foo.a.b', 'svc.x']);
  });

  it('subscribe: allow and deny lists, queue-group rules ("subject queue"), exact -ERR texts', async () => {
    const alice = await client('alice', 'apass');
    alice.send('SUB foo.x 1\r\nSUB foo.> 2\r\nSUB foo.hidden 3\r\nSUB bar 4\r\n');
    await alice.flush();
    expect(alice.received).toBe(SUB_DENIED('foo.hidden') + SUB_DENIED('bar') + 'PONG\r\n');
    alice.clear();
    // "q.* grp": only queue group grp may subscribe to q.*; "wild.v1.* workers.*": queue names by wildcard
    alice.send('SUB q.a grp 5\r\nSUB q.a 6\r\nSUB q.a other 7\r\nSUB wild.v1.x workers.east 8\r\nSUB wild.v1.x builders 9\r\n');
    await alice.flush();
    expect(alice.received).toBe(
      SUB_DENIED('q.a') +
        `-ERR 'Permissions Violation for Subscription to "q.a" using queue "other"'\r\n` +
        `-ERR 'Permissions Violation for Subscription to "wild.v1.x" using queue "builders"'\r\n` +
        'PONG\r\n',
    );
    expect(alice.closed).toBe(false);
  });

  it('a wildcard subscription does not receive messages on denied subjects', async () => {
    const alice = await client('alice', 'apass');
    alice.send('SUB foo.* 1\r\n');
    await alice.flush();
    alice.clear();
    const free = await client('free', 'fpass');
    free.send('PUB foo.hidden 6\r\nhidden\r\nPUB foo.shown 5\r\nshown\r\n');
    await free.flush();
    await alice.flush();
    expect(alice.received).toBe('MSG foo.shown 1 5\r\nshown\r\nPONG\r\n');
  });

  it('publish as an array means allow; subscribe deny ">" refuses everything', async () => {
    const p = await client('pubonly', 'ppass');
    p.send('PUB a.b 0\r\n\r\nPUB a.c.d 0\r\n\r\nPUB a.d 0\r\n\r\nSUB a.b 1\r\nSUB x 2\r\n');
    await p.flush();
    expect(p.received).toBe(PUB_DENIED('a.d') + SUB_DENIED('a.b') + SUB_DENIED('x') + 'PONG\r\n');
  });

  it('default_permissions apply to users without their own; users with none are unrestricted only if defaults are absent', async () => {
    const p = await client('plain', 'plainpass');
    p.send('SUB def.x 1\r\nPUB def.x 2\r\nhi\r\nPUB other 0\r\n\r\nSUB other 2\r\n');
    await p.flush();
    expect(p.received).toBe('MSG def.x 1 2\r\nhi\r\n' + PUB_DENIED('other') + SUB_DENIED('other') + 'PONG\r\n');
  });

  it('allow_responses: true permits one reply per received request, and nothing else', async () => {
    const responder = await client('responder', 'rpass');
    responder.send('SUB req.> 1\r\nPUB anything 0\r\n\r\n');
    await responder.flush();
    expect(responder.received).toBe(PUB_DENIED('anything') + 'PONG\r\n');
    responder.clear();
    const requester = await client('free', 'fpass');
    requester.send('SUB reply.> 1\r\nPUB req.x reply.one 2\r\nhi\r\n');
    await requester.flush();
    requester.clear();
    await responder.waitFor(/MSG req.x 1 reply.one 2\r\nhi\r\n/);
    responder.clear();
    responder.send('PUB reply.one 1\r\na\r\nPUB reply.one 1\r\nb\r\nPUB reply.unknown 1\r\nc\r\n');
    await responder.flush();
    expect(responder.received).toBe(PUB_DENIED('reply.one') + PUB_DENIED('reply.unknown') + 'PONG\r\n');
    await requester.flush();
    expect(requester.received).toBe('MSG reply.one 1 1\r\na\r\nPONG\r\n');
  });

  it('allow_responses { max, expires }: max replies each, none after expiry', async () => {
    const responder = await client('responder2', 'rpass');
    responder.send('SUB req.> 1\r\n');
    await responder.flush();
    const requester = await client('free', 'fpass');
    requester.send('SUB reply.> 1\r\nPUB req.x reply.a 0\r\n\r\nPUB req.x reply.b 0\r\n\r\n');
    await requester.flush();
    requester.clear();
    await responder.waitFor(/reply\.b 0\r\n\r\n/);
    responder.clear();
    responder.send('PUB reply.a 1\r\n1\r\nPUB reply.a 1\r\n2\r\nPUB reply.a 1\r\n3\r\n');
    await responder.flush();
    expect(responder.received).toBe(PUB_DENIED('reply.a') + 'PONG\r\n');
    await sleep(700); // past expires: reply.b's permit is gone
    responder.clear();
    responder.send('PUB reply.b 1\r\n4\r\n');
    await responder.flush();
    expect(responder.received).toBe(PUB_DENIED('reply.b') + 'PONG\r\n');
    await requester.flush();
    expect([...requester.received.matchAll(/MSG (reply\.\S+) 1 1\r\n(\d)/g)].map((m) => `${m[1]}:${m[2]}`)).toEqual(['reply.a:1', 'reply.a:2']);
  });

  it('max_subscriptions: -ERR maximum subscriptions exceeded, the connection stays open', async () => {
    const c = await client('free', 'fpass');
    for (let i = 1; i <= 7; i++) c.send(`SUB s.${i} ${i}\r\n`);
    await c.flush();
    expect(c.received).toBe(`-ERR 'maximum subscriptions exceeded'\r\n`.repeat(2) + 'PONG\r\n');
    c.clear();
    c.send('UNSUB 1\r\nSUB s.8 8\r\nPUB s.8 1\r\nx\r\n');
    await c.flush();
    expect(c.received).toBe('MSG s.8 8 1\r\nx\r\nPONG\r\n');
  });

  it('bcrypt passwords are accepted as nats-server accepts them; a wrong password is refused', async () => {
    const nc = await connect({ servers: server.url, user: 'hashed', pass: BCRYPT_PASSWORD, reconnect: false });
    conns.push(nc);
    const sub = nc.subscribe('h.x', { max: 1 });
    nc.publish('h.x', 'hi');
    for await (const m of sub) expect(m.string()).toBe('hi');
    const err = await connect({ servers: server.url, user: 'hashed', pass: 'wrong', reconnect: false }).catch((e: NatsError) => e);
    expect((err as NatsError).code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('the nats client sees a permission error for a refused publish and keeps working', async () => {
    const nc = await connect({ servers: server.url, user: 'alice', pass: 'apass', reconnect: false });
    conns.push(nc);
    const errors: string[] = [];
    void (async () => {
      for await (const s of nc.status()) {
        const ctx = (s as { permissionContext?: { operation: string; subject: string } }).permissionContext;
        if (s.type === 'error' && ctx) errors.push(`${String(s.data)} ${ctx.operation} ${ctx.subject}`);
      }
    })();
    nc.publish('foo.secret', 'x');
    await nc.flush();
    const sub = nc.subscribe('foo.ok', { max: 1 });
    nc.publish('foo.ok', 'fine');
    for await (const m of sub) expect(m.string()).toBe('fine');
    await sleep(50);
    expect(errors).toEqual([`${ErrorCode.PermissionsViolation} publish foo.secret`]);
    expect(nc.isClosed()).toBe(false);
  });
});

describe('bcrypt token', () => {
  it('accepts the token whose bcrypt hash is configured, refuses others', async () => {
    const conf = writeConf(`authorization { token: "${bcrypt.hashSync(BCRYPT_TOKEN, 4)}" }\n`);
    const s = await startServer({ args: ['-c', conf] });
    try {
      const nc = await connect({ servers: s.url, token: BCRYPT_TOKEN, reconnect: false });
      await nc.flush();
      await nc.close();
      const err = await connect({ servers: s.url, token: 'other', reconnect: false }).catch((e: NatsError) => e);
      expect((err as NatsError).code).toBe(ErrorCode.AuthorizationViolation);
    } finally {
      expect(CLEAN_EXITS).toContain(await s.stop());
    }
  });
});

describe('the JetStream API is governed by subject permissions', () => {
  const conf = `
authorization {
  users = [
    { user: admin, password: adm }
    { user: app, password: app, permissions: { publish: { deny: ["$JS.API.STREAM.DELETE.>", "$JS.API.STREAM.CREATE.LOCKED"] } } }
    { user: reader, password: rd, permissions: { publish: ["$JS.API.INFO"], subscribe: "_INBOX.>" } }
  ]
}
`;
  let server: FlotillaProcess;
  beforeAll(async () => {
    server = await startServer({ args: ['-js', '-sd', mkdtempSync(join(tmpdir(), 'flotilla-perm-js-')), '-c', writeConf(conf)] });
  });
  afterAll(async () => {
    expect(CLEAN_EXITS).toContain(await server.stop());
  });

  it('refuses $JS.API.STREAM.DELETE at the protocol level with the publish violation -ERR', async () => {
    const c = await raw(server.port, 'app', 'app');
    c.send('PUB $JS.API.STREAM.DELETE.ORDERS _INBOX.x 0\r\n\r\nPUB $JS.API.STREAM.CREATE.LOCKED _INBOX.y 2\r\n{}\r\n');
    await c.flush();
    expect(c.received).toBe(PUB_DENIED('$JS.API.STREAM.DELETE.ORDERS') + PUB_DENIED('$JS.API.STREAM.CREATE.LOCKED') + 'PONG\r\n');
    c.close();
  });

  it('with the nats client: the user may create a stream and may not delete it; admin may', async () => {
    const app = await connect({ servers: server.url, user: 'app', pass: 'app', reconnect: false });
    const admin = await connect({ servers: server.url, user: 'admin', pass: 'adm', reconnect: false });
    try {
      const jsm = await app.jetstreamManager();
      const info = await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
      expect(info.config.name).toBe('ORDERS');
      // The refused request never reaches JetStream: the client gets the permission error (or a timeout
      // when its error routing does not tie the -ERR to the request).
      const err = await jsm.streams.delete('ORDERS').then(
        () => null,
        (e: Error) => e,
      );
      expect(err).not.toBeNull();
      expect(String(err?.message)).toMatch(/permissions violation|timeout/i);
      const adminJsm = await admin.jetstreamManager();
      expect((await adminJsm.streams.info('ORDERS')).config.name).toBe('ORDERS');
      expect(await adminJsm.streams.delete('ORDERS')).toBe(true);
    } finally {
      await app.close();
      await admin.close();
    }
  });

  it('a user limited to $JS.API.INFO gets account info and nothing else', async () => {
    const c = await raw(server.port, 'reader', 'rd');
    c.send('SUB _INBOX.r 1\r\nPUB $JS.API.INFO _INBOX.r 0\r\n\r\n');
    await c.waitFor(/MSG _INBOX\.r 1 \d+\r\n\{.*"type":"io\.nats\.jetstream\.api\.v1\.account_info_response"/);
    c.clear();
    c.send('PUB $JS.API.STREAM.NAMES _INBOX.r 0\r\n\r\n');
    await c.flush();
    expect(c.received).toBe(PUB_DENIED('$JS.API.STREAM.NAMES') + 'PONG\r\n');
    c.close();
  });
});
