// Auth callout (nats-server 2.10) in config mode, with a real callout service on the stock client: the
// server's signed authorization request on `$SYS.REQ.USER.AUTH` in the callout account, the service's
// answer placing the user in an account with permissions, error answers, silence (timeout), a wrong
// issuer, and xkey-sealed requests and answers. nats-server 2.9.10 has no auth callout, so this file runs
// against Flotilla only.
import { beforeAll, describe, expect, it } from 'vitest';
import { connect, credsAuthenticator, jwtAuthenticator, StringCodec, type Msg, type NatsConnection } from 'nats';
import { createAccount, createCurve, createUser, decode, encodeAuthorizationResponse, encodeUser, type KeyPair } from '@nats-io/jwt';
import type { FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { drain } from './helpers/subscription-drain.js';
import { TestOperator, testUser, type TestAccount } from './helpers/operator-jwts.js';

const sc = StringCodec();
const enc = new TextEncoder();
const dec = new TextDecoder();
const { conns, serverWith } = useConfServers('auth-callout');

interface AuthRequest {
  user_nkey: string;
  server_id: { id: string; xkey?: string };
  connect_opts: { user?: string; pass?: string };
  client_info: { host: string; id: number };
  type: string;
}

/** A callout service: `pass` decides — "good" is placed in APP, "error" gets an error answer, "silent" none, "forged" a user signed by another key. */
async function startService(url: string, issuer: KeyPair, xkp: KeyPair | null, seen: AuthRequest[]): Promise<NatsConnection> {
  const nc = await connect({ servers: url, user: 'auth', pass: 'pwd', reconnect: false });
  conns.push(nc);
  const forger = createAccount();
  nc.subscribe('$SYS.REQ.USER.AUTH', {
    callback: (_err, m: Msg) => {
      void (async () => {
        let token = dec.decode(m.data);
        const serverXkey = m.headers?.get('Nats-Server-Xkey') ?? '';
        if (xkp !== null) token = dec.decode(xkp.open(m.data, serverXkey)!);
        const req = decode<AuthRequest>(token);
        seen.push(req.nats as AuthRequest);
        const { user_nkey: userKey, server_id: server, connect_opts: opts } = req.nats as AuthRequest;
        if (opts.pass === 'silent') return;
        let answer: string;
        if (opts.pass === 'good' || opts.pass === 'forged') {
          const signer = opts.pass === 'forged' ? forger : issuer;
          const jwt = await encodeUser(opts.user ?? 'x', userKey, signer, { pub: { allow: ['app.>'] }, sub: { allow: ['app.>', '_INBOX.>'] } }, { aud: 'APP' } as never);
          answer = await encodeAuthorizationResponse(userKey, server.id, issuer, { jwt }, {});
        } else answer = await encodeAuthorizationResponse(userKey, server.id, issuer, { error: 'not allowed' }, {});
        m.respond(xkp !== null ? xkp.seal(enc.encode(answer), serverXkey) : enc.encode(answer));
      })();
    },
  });
  await nc.flush();
  return nc;
}

function conf(issuer: KeyPair, xkp: KeyPair | null): string {
  const xkey = xkp !== null ? `, xkey: "${xkp.getPublicKey()}"` : '';
  return `
accounts {
  AUTH: { users: [ { user: auth, password: pwd } ] }
  APP: {}
}
authorization {
  timeout: 2
  auth_callout { issuer: "${issuer.getPublicKey()}", auth_users: [ auth ], account: AUTH${xkey} }
}`;
}

async function refusal(url: string, user: string, pass: string): Promise<string> {
  try {
    const nc = await connect({ servers: url, user, pass, reconnect: false });
    await nc.close();
    return 'connected';
  } catch (err) {
    return (err as Error).message;
  }
}


describe('auth callout, plain', () => {
  const issuer = createAccount();
  const seen: AuthRequest[] = [];
  let s: FlotillaProcess;
  beforeAll(async () => {
    s = await serverWith(conf(issuer, null));
    await startService(s.url, issuer, null, seen);
  });

  it('the service places the user in APP with its permissions; the request carries CONNECT and the server id', async () => {
    const a = await connect({ servers: s.url, user: 'alice', pass: 'good', reconnect: false });
    const b = await connect({ servers: s.url, user: 'bob', pass: 'good', reconnect: false });
    conns.push(a, b);
    const req = seen.find((r) => r.connect_opts.user === 'alice')!;
    expect(req.type).toBe('authorization_request');
    expect(req.user_nkey).toMatch(/^U[A-Z2-7]{55}$/);
    expect(req.server_id.id).toBe(a.info!.server_id);
    const sub = b.subscribe('app.>');
    // the callout account's own user sees nothing of APP
    const service = await connect({ servers: s.url, user: 'auth', pass: 'pwd', reconnect: false });
    conns.push(service);
    const inAuth = service.subscribe('app.>');
    await Promise.all([b.flush(), service.flush()]);
    a.publish('app.x', sc.encode('1'));
    await a.flush();
    expect(await drain(sub)).toEqual(['app.x:1']);
    expect(await drain(inAuth, 0)).toEqual([]);
    const denied = a.subscribe('other.>');
    const ended = (async () => {
      try {
        for await (const _ of denied) void _;
        return 'ended';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    await a.flush();
    expect(await ended).toMatch(/Permissions Violation for Subscription to "other.>"/);
  });

  it('an error answer, no answer within the auth timeout, or a user signed by another key refuse the client', async () => {
    expect(await refusal(s.url, 'carol', 'error')).toMatch(/Authorization Violation/);
    // silence: the callout waits the auth timeout, which also ends the connection's own auth timer
    expect(await refusal(s.url, 'dave', 'silent')).toMatch(/Authorization Violation|Authentication Timeout/);
    expect(await refusal(s.url, 'eve', 'forged')).toMatch(/Authorization Violation/);
  });
});

describe('auth callout with xkey', () => {
  const issuer = createAccount();
  const xkp = createCurve();
  const seen: AuthRequest[] = [];
  let s: FlotillaProcess;
  beforeAll(async () => {
    s = await serverWith(conf(issuer, xkp));
    await startService(s.url, issuer, xkp, seen);
  });

  it('requests are sealed to the service key, with the server xkey in the header and the claims; sealed answers are opened', async () => {
    const raw = await connect({ servers: s.url, user: 'auth', pass: 'pwd', reconnect: false });
    conns.push(raw);
    // what goes over the wire is not a readable JWT
    const tap = raw.subscribe('$SYS.REQ.USER.AUTH', { max: 1 });
    await raw.flush();
    const nc = await connect({ servers: s.url, user: 'frank', pass: 'good', reconnect: false });
    conns.push(nc);
    const [wire] = await (async () => {
      const out: Msg[] = [];
      for await (const m of tap) out.push(m);
      return out;
    })();
    expect(dec.decode(wire!.data).startsWith('eyJ')).toBe(false);
    expect(wire!.headers?.get('Nats-Server-Xkey')).toMatch(/^X[A-Z2-7]{55}$/);
    const req = seen.find((r) => r.connect_opts.user === 'frank')!;
    expect(req.server_id.xkey).toBe(wire!.headers?.get('Nats-Server-Xkey'));
    await nc.flush();
    expect(nc.isClosed()).toBe(false);
  });
});

describe('auth callout in operator mode (the account JWT asks for it)', () => {
  let op: TestOperator;
  let auth: TestAccount;
  let app: TestAccount;
  let s: FlotillaProcess;
  const serviceKp = createUser();

  beforeAll(async () => {
    op = await TestOperator.create();
    app = await op.account('APP');
    auth = await op.account('AUTH', { authorization: { auth_users: [serviceKp.getPublicKey()], allowed_accounts: [app.pub] } } as never);
    s = await serverWith(op.conf([auth, app]));
    const service = await testUser(auth, {}, { kp: serviceKp });
    const nc = await connect({ servers: s.url, reconnect: false, authenticator: credsAuthenticator(service.creds) });
    conns.push(nc);
    nc.subscribe('$SYS.REQ.USER.AUTH', {
      callback: (_err, m: Msg) => {
        void (async () => {
          const req = decode<AuthRequest>(dec.decode(m.data)).nats as AuthRequest;
          const answer =
            req.connect_opts.pass === 'good'
              ? await encodeAuthorizationResponse(req.user_nkey, req.server_id.id, auth.kp, { jwt: await encodeUser(req.connect_opts.user ?? 'x', req.user_nkey, app.kp, {}) }, {})
              : await encodeAuthorizationResponse(req.user_nkey, req.server_id.id, auth.kp, { error: 'no' }, {});
          m.respond(enc.encode(answer));
        })();
      },
    });
    await nc.flush();
  });

  it('a sentinel user of the callout account is placed in APP by the service; an error answer refuses it', async () => {
    const sentinel = await testUser(auth, { bearer_token: true, pub: { deny: ['>'] }, sub: { deny: ['>'] } } as never);
    const placed = await connect({ servers: s.url, reconnect: false, authenticator: jwtAuthenticator(sentinel.jwt), user: 'gina', pass: 'good' });
    conns.push(placed);
    const peer = await connect({ servers: s.url, reconnect: false, authenticator: credsAuthenticator((await testUser(app)).creds) });
    conns.push(peer);
    const sub = peer.subscribe('hello');
    await peer.flush();
    placed.publish('hello', sc.encode('from-callout'));
    await placed.flush();
    expect(await drain(sub)).toEqual(['hello:from-callout']);
    await expect(connect({ servers: s.url, reconnect: false, authenticator: jwtAuthenticator(sentinel.jwt), user: 'hank', pass: 'bad' })).rejects.toThrow(/Authorization Violation/);
  });
});
