// Operator mode on one node with stock clients: an operator JWT, a MEMORY resolver preloaded with account
// JWTs, users authenticating with `.creds` (user JWT + nonce signature), the user's and the account's
// claims enforced. With E2E_SERVER=nats-server every case runs against nats-server 2.9 to show it is its behaviour.
import { beforeAll, describe, expect, it } from 'vitest';
import { connect, credsAuthenticator, jwtAuthenticator, StringCodec, type NatsConnection, type NatsError } from 'nats';
import { connect as connectV3, credsAuthenticator as credsV3 } from '@nats-io/transport-node';
import { createAccount, createUser, encodeUser } from '@nats-io/jwt';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { drain } from './helpers/subscription-drain.js';
import { TestOperator, testUser, type TestAccount, type TestUser } from './helpers/operator-jwts.js';
import { until } from './helpers/until.js';
import { RawClient } from './helpers/raw-client.js';
import { OP_CLOSE, RawWebSocket, websocketPort } from './helpers/raw-websocket.js';

const sc = StringCodec();
const { conns, serverWith } = useConfServers('jwt-operator');

let op: TestOperator;
let a: TestAccount;
let b: TestAccount;
let limited: TestAccount;
let s: FlotillaProcess;
const revokedKp = createUser();
const scopedKp = createAccount();

async function login(creds: Uint8Array): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, authenticator: credsAuthenticator(creds) });
  conns.push(nc);
  return nc;
}

async function refusal(opts: Record<string, unknown>): Promise<string> {
  try {
    const nc = await connect({ servers: s.url, reconnect: false, ...opts });
    await nc.close();
    return 'connected';
  } catch (err) {
    return (err as NatsError).message;
  }
}

/** A raw connection that CONNECTs as `u` (JWT and the nonce signed by hand). */
async function rawLogin(u: TestUser, answer = /PONG\r\n/): Promise<RawClient> {
  const raw = await RawClient.connect(s.port);
  await raw.waitFor(/^INFO .*\r\n/);
  const nonce = (JSON.parse(/^INFO (.*)\r\n/.exec(raw.received)![1]!) as { nonce: string }).nonce;
  const sig = Buffer.from(u.kp.sign(Buffer.from(nonce))).toString('base64url');
  raw.send(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, jwt: u.jwt, sig })}\r\nPING\r\n`);
  await raw.waitFor(answer);
  return raw;
}


beforeAll(async () => {
  op = await TestOperator.create();
  a = await op.account('A', {
    signing_keys: [{ kind: 'user_scope', key: scopedKp.getPublicKey(), role: 'scoped', template: { pub: { allow: ['own.{{name()}}.>'] }, sub: { allow: ['own.{{name()}}.>'] }, subs: -1, data: -1, payload: -1 } }] as never,
    revocations: { [revokedKp.getPublicKey()]: Math.floor(Date.now() / 1000) + 60 },
  });
  b = await op.account('B');
  limited = await op.account('L', { limits: { conn: 1, disallow_bearer: true } as never });
  s = await serverWith(op.conf([a, b, limited]));
});

describe('operator mode: users from JWTs', () => {
  it('a .creds user connects (v2 and v3 clients) and talks within its account only', async () => {
    const ua = await testUser(a);
    const ub = await testUser(b);
    const nca = await login(ua.creds);
    const ncb = await login(ub.creds);
    const v3 = await connectV3({ servers: s.url, reconnect: false, authenticator: credsV3(ua.creds) });
    try {
      const inA = v3.subscribe('x.>');
      const inB = ncb.subscribe('x.>');
      await Promise.all([v3.flush(), ncb.flush()]);
      nca.publish('x.1', sc.encode('hi'));
      await nca.flush();
      const gotA: string[] = [];
      await until(async () => {
        const m = await Promise.race([inA[Symbol.asyncIterator]().next(), sleep(50).then(() => null)]);
        if (m !== null && m.value !== undefined) gotA.push(`${m.value.subject}:${new TextDecoder().decode(m.value.data)}`);
        return gotA.length > 0;
      });
      expect(gotA).toEqual(['x.1:hi']);
      expect(await drain(inB)).toEqual([]);
    } finally {
      await v3.close();
    }
  });

  it('no JWT, a JWT signed by an unknown account, or a signature by another key is refused', async () => {
    expect(await refusal({})).toMatch(/Authorization Violation/);
    const stranger = createAccount();
    const strangerJwt = await encodeUser('s', createUser(), stranger);
    expect(await refusal({ authenticator: jwtAuthenticator(strangerJwt, createUser().getSeed()) })).toMatch(/Authorization Violation/);
    const ua = await testUser(a);
    expect(await refusal({ authenticator: jwtAuthenticator(ua.jwt, createUser().getSeed()) })).toMatch(/Authorization Violation/);
  });

  it('a revoked user is refused; a user issued after the revocation time of another key is not affected', async () => {
    const jwt = await encodeUser('r', revokedKp, a.kp);
    expect(await refusal({ authenticator: jwtAuthenticator(jwt, revokedKp.getSeed()) })).toMatch(/Authorization Violation/);
    const ok = await testUser(a);
    expect(await refusal({ authenticator: credsAuthenticator(ok.creds) })).toBe('connected');
  });

  it('user pub/sub permissions are enforced: a denied publish reaches no one, a denied subscribe is refused', async () => {
    const u = await testUser(a, { pub: { allow: ['ok.>'], deny: [] }, sub: { allow: ['ok.>'], deny: [] } });
    const watcher = await login((await testUser(a)).creds);
    const all = watcher.subscribe('>');
    await watcher.flush();
    const nc = await login(u.creds);
    nc.publish('no.1', sc.encode('x'));
    nc.publish('ok.1', sc.encode('y'));
    await nc.flush();
    expect(await drain(all)).toEqual(['ok.1:y']);
    const denied = nc.subscribe('no.>');
    const ended = (async () => {
      try {
        for await (const _ of denied) void _;
        return 'ended';
      } catch (err) {
        return (err as NatsError).message;
      }
    })();
    await nc.flush();
    expect(await ended).toMatch(/Permissions Violation for Subscription to "no.>"/);
  });

  it('a scoped signing key gives its template, with {{name()}} filled in', async () => {
    const u = await testUser(a, {}, { signer: scopedKp, scoped: true, name: 'alice' });
    const watcher = await login((await testUser(a)).creds);
    const all = watcher.subscribe('own.>');
    await watcher.flush();
    const nc = await login(u.creds);
    nc.publish('own.alice.1', sc.encode('mine'));
    nc.publish('own.bob.1', sc.encode('theirs'));
    await nc.flush();
    expect(await drain(all)).toEqual(['own.alice.1:mine']);
  });

  it('bearer users connect without a signature unless the account disallows bearer tokens', async () => {
    const bearer = await testUser(a, { bearer_token: true } as never);
    expect(await refusal({ authenticator: jwtAuthenticator(bearer.jwt) })).toBe('connected');
    const denied = await testUser(limited, { bearer_token: true } as never);
    expect(await refusal({ authenticator: jwtAuthenticator(denied.jwt) })).toMatch(/Authorization Violation/);
  });

  it('the account conn limit refuses the second connection', async () => {
    const u = await testUser(limited);
    await login(u.creds);
    const second = await rawLogin(u, /-ERR 'maximum account active connections exceeded'\r\n/i);
    await second.waitClosed();
    second.close();
  });

  it("the user's subs and payload limits apply under the account's", async () => {
    const u = await testUser(a, { subs: 1, payload: 8 } as never);
    const raw = await rawLogin(u);
    raw.send('SUB a 1\r\nSUB b 2\r\nPING\r\n');
    await raw.waitFor(/-ERR 'maximum subscriptions exceeded'\r\n/i);
    raw.send('PUB a 9\r\n123456789\r\n');
    await raw.waitFor(/-ERR 'Maximum Payload Violation'\r\n/);
    raw.close();
  });

  it('times of day: a window around now admits the user, one twelve hours away refuses it', async () => {
    const clock = (offsetH: number): string => {
      const d = new Date(Date.now() + offsetH * 3_600_000);
      return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}:00`;
    };
    const now = await testUser(a, { times: [{ start: clock(-1), end: clock(1) }], times_location: 'UTC' } as never);
    expect(await refusal({ authenticator: credsAuthenticator(now.creds) })).toBe('connected');
    const later = await testUser(a, { times: [{ start: clock(11), end: clock(13) }], times_location: 'UTC' } as never);
    expect(await refusal({ authenticator: credsAuthenticator(later.creds) })).toMatch(/Authorization Violation/);
  });

  it('allow_responses (resp) lets a user without publish rights answer a request once', async () => {
    const responder = await testUser(a, { pub: { allow: [], deny: ['>'] }, sub: { allow: ['svc'], deny: [] }, resp: { max: 1, ttl: 0 } } as never);
    const r = await login(responder.creds);
    r.subscribe('svc', { callback: (_e, m) => m.respond(sc.encode('pong')) });
    await r.flush();
    const requester = await login((await testUser(a)).creds);
    const m = await requester.request('svc', sc.encode('ping'), { timeout: 5000 });
    expect(sc.decode(m.data)).toBe('pong');
  });

  it('src CIDRs the client is not in, and connection types that exclude it, refuse the user', async () => {
    const far = await testUser(a, { src: ['10.1.2.0/24'] } as never);
    expect(await refusal({ authenticator: credsAuthenticator(far.creds) })).toMatch(/Authorization Violation/);
    const near = await testUser(a, { src: ['127.0.0.0/8'] } as never);
    expect(await refusal({ authenticator: credsAuthenticator(near.creds) })).toBe('connected');
    const wsOnly = await testUser(a, { allowed_connection_types: ['WEBSOCKET'] } as never);
    expect(await refusal({ authenticator: credsAuthenticator(wsOnly.creds) })).toMatch(/Authorization Violation/);
  });

  it("a connected user whose JWT expires is disconnected with -ERR 'User Authentication Expired'", async () => {
    const u = await testUser(a, {}, { exp: Math.floor(Date.now() / 1000) + 3 });
    const nc = await login(u.creds);
    const errors: string[] = [];
    (async () => {
      for await (const st of nc.status()) if (st.type === 'error' || st.type === 'disconnect') errors.push(`${st.type}:${String(st.data)}`);
    })().catch(() => undefined);
    const closed = nc.closed();
    const err = await Promise.race([closed, sleep(15_000).then(() => 'timeout')]);
    expect(err).not.toBe('timeout');
    expect(String(err ?? errors.join(' '))).toMatch(/authentication expired/i);
  });
});

describe('operator mode over WebSocket', () => {
  let ws: FlotillaProcess;
  beforeAll(async () => {
    // the block's own auth timeout gives WebSocket clients their own authenticator: it must still be the JWT one
    ws = await serverWith(`${op.conf([a, b, limited])}\nwebsocket { port: -1, no_tls: true, jwt_cookie: natsjwt, authorization { timeout: 3 } }`);
  });

  async function wsConnect(cookie: string | null, connect: string): Promise<RawWebSocket> {
    const port = websocketPort(ws);
    const c = await RawWebSocket.open(port, RawWebSocket.request(port, { Cookie: cookie }));
    expect(c.response?.status).toBe(101);
    await c.waitFor(/^INFO \{.*\} ?\r\n/);
    c.sendText(`CONNECT ${connect}\r\nPING\r\n`);
    return c;
  }

  it('a bearer user JWT from jwt_cookie authenticates; no JWT, or a non-bearer JWT without a signature, is refused', async () => {
    const bearer = await testUser(a, { bearer_token: true } as never);
    const ok = await wsConnect(`natsjwt=${bearer.jwt}`, '{"verbose":false}');
    await ok.waitFor(/PONG\r\n/);
    expect(ok.text).not.toContain('-ERR');
    ok.close();
    const none = await wsConnect(null, '{"verbose":false}');
    await none.waitFrame(OP_CLOSE);
    expect(none.text).toContain("-ERR 'Authorization Violation'");
    const signed = await testUser(a);
    const unsigned = await wsConnect(`natsjwt=${signed.jwt}`, '{"verbose":false}');
    await unsigned.waitFrame(OP_CLOSE);
    expect(unsigned.text).toContain("-ERR 'Authorization Violation'");
  });
});
