// Accounts on one node with the stock client: each account its own subject space, stream and service
// imports/exports (public, private, `to`, `prefix`), reply mapping across the boundary, no_auth_user, nkey
// users. With E2E_SERVER=nats-server every case runs against nats-server to show it is its behaviour.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connect, nkeyAuthenticator, StringCodec, ErrorCode, type NatsConnection, type NatsError, type Subscription } from 'nats';
import nkeys from '@nats-io/nkeys';
import { FLOTILLA_NODE_ARGS, sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { RawClient } from './helpers/raw-client.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const { conns, writeConf, serverWith } = useConfServers('accounts', { expectCleanExit: true });

async function login(s: FlotillaProcess, opts: Record<string, unknown>): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, ...opts });
  conns.push(nc);
  return nc;
}

/** What a subscription received within a short wait after the publishers flushed. */
async function drain(sub: Subscription, waitMs = 150): Promise<string[]> {
  await sleep(waitMs);
  const got: string[] = [];
  sub.unsubscribe();
  for await (const m of sub) got.push(`${m.subject}:${sc.decode(m.data)}`);
  return got;
}

/** `-t -c` with the binary under test: exit code and everything it printed. */
async function checkConfig(conf: string): Promise<{ code: number | null; output: string }> {
  const file = writeConf(conf);
  const [cmd, args] = AGAINST_NATS_SERVER ? ['nats-server', ['-t', '-c', file]] : [process.execPath, [...FLOTILLA_NODE_ARGS, '-t', '-c', file]];
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  return { code, output };
}

const TWO_ACCOUNTS = `
authorization { users: [ { user: g, password: g } ] }
accounts {
  A: { users: [ { user: a, password: a } ] }
  B: { users: [ { user: b, password: b } ] }
}`;

describe('accounts: isolated subject spaces', () => {
  it('a subscriber on > in B (or in the global account) sees nothing of what A publishes; A sees its own', async () => {
    const s = await serverWith(TWO_ACCOUNTS);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const g = await login(s, { user: 'g', pass: 'g' });
    const inB = b.subscribe('>');
    const inG = g.subscribe('>');
    const inA = a.subscribe('>');
    await Promise.all([b.flush(), g.flush(), a.flush()]);
    a.publish('orders.new', sc.encode('1'));
    a.publish('_INBOX.x', sc.encode('2'));
    await a.flush();
    expect(await drain(inB)).toEqual([]);
    expect(await drain(inG, 0)).toEqual([]);
    expect(await drain(inA, 0)).toEqual(['orders.new:1', '_INBOX.x:2']);
  });

  it('a request in B finds no responder of A: no responders (503) rather than a cross-account answer', async () => {
    const s = await serverWith(TWO_ACCOUNTS);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    a.subscribe('svc', { callback: (_e, m) => m.respond(sc.encode('from A')) });
    await a.flush();
    const err = (await b.request('svc', sc.encode('q'), { timeout: 2000 }).catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe(ErrorCode.NoResponders);
  });
});

describe('accounts: stream exports and imports', () => {
  const conf = `
accounts {
  A: {
    users: [ { user: a, password: a } ]
    exports: [ { stream: "public.>" }, { stream: "private.>", accounts: [B] } ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { stream: { account: A, subject: "public.>" }, prefix: "fromA" }
      { stream: { account: A, subject: "private.orders" }, to: "orders.fromA" }
    ]
  }
  C: {
    users: [ { user: c, password: c } ]
    imports: [ { stream: { account: A, subject: "public.news" } } ]
  }
}`;

  it('B gets public.> under its prefix and a granted private subject under `to`; C gets what it imported as is', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const c = await login(s, { user: 'c', pass: 'c' });
    const inB = b.subscribe('>');
    const inC = c.subscribe('>');
    await Promise.all([b.flush(), c.flush()]);
    a.publish('public.news', sc.encode('n'));
    a.publish('public.weather.today', sc.encode('w'));
    a.publish('private.orders', sc.encode('o'));
    a.publish('private.other', sc.encode('x'));
    a.publish('unexported', sc.encode('u'));
    await a.flush();
    expect((await drain(inB)).sort()).toEqual(['fromA.public.news:n', 'fromA.public.weather.today:w', 'orders.fromA:o']);
    expect(await drain(inC, 0)).toEqual(['public.news:n']);
  });

  it('what B publishes on an imported subject stays in B', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const inA = a.subscribe('>');
    await a.flush();
    b.publish('public.news', sc.encode('from B'));
    b.publish('fromA.public.news', sc.encode('from B'));
    await b.flush();
    expect(await drain(inA)).toEqual([]);
  });

  it('importing a private stream the account was not granted refuses the config, as nats-server', async () => {
    const r = await checkConfig(`
accounts {
  A: { users: [ { user: a, password: a } ], exports: [ { stream: "private.>", accounts: [B] } ] }
  B: { users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ], imports: [ { stream: { account: A, subject: "private.>" } } ] }
}`);
    expect(r.output).toContain('Error adding stream import "private.>": stream import not authorized');
    expect(r.code).toBe(1);
  });

  it('importing a private service the account was not granted refuses the config, as nats-server', async () => {
    const r = await checkConfig(`
accounts {
  A: { users: [ { user: a, password: a } ], exports: [ { service: "svc.>", accounts: [B] } ] }
  B: { users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ], imports: [ { service: { account: A, subject: "svc.x" } } ] }
}`);
    expect(r.output).toContain('Error adding service import "svc.x": service import not authorized');
    expect(r.code).toBe(1);
  });

  it('account_token_position: each account imports the subjects that carry its own name, and nothing else', async () => {
    const EXPORT = `exports: [ { stream: "orders.*.>", account_token_position: 2 } ]`;
    const s = await serverWith(`
accounts {
  A: { users: [ { user: a, password: a } ], ${EXPORT} }
  B: { users: [ { user: b, password: b } ], imports: [ { stream: { account: A, subject: "orders.B.>" } } ] }
}`);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const inB = b.subscribe('>');
    await b.flush();
    a.publish('orders.B.1', sc.encode('for B'));
    a.publish('orders.C.1', sc.encode('for C'));
    await a.flush();
    expect(await drain(inB)).toEqual(['orders.B.1:for B']);
    const other = await checkConfig(`
accounts {
  A: { users: [ { user: a, password: a } ], ${EXPORT} }
  C: { users: [ { user: c, password: c } ], imports: [ { stream: { account: A, subject: "orders.B.>" } } ] }
}`);
    expect(other.output).toContain('Error adding stream import "orders.B.>": stream import not authorized');
    expect(other.code).toBe(1);
  });

  it('an import from an account that does not exist refuses the config', async () => {
    const r = await checkConfig(`accounts { B: { users: [ { user: b, password: b } ], imports: [ { stream: { account: Z, subject: "x" } } ] } }`);
    expect(r.output).toContain('"Z" account not defined for stream import');
    expect(r.code).toBe(1);
  });
});

describe('accounts: service exports and imports', () => {
  const conf = `
accounts {
  A: {
    users: [ { user: a, password: a } ]
    exports: [
      { service: "help.>" }
      { service: "feed", response_type: stream }
    ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { service: { account: A, subject: "help.billing" }, to: "billing" }
      { service: { account: A, subject: "feed" } }
    ]
  }
}`;

  it('a request in B on the import reaches A’s responder under A’s subject, and the answer comes back', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const seen: string[] = [];
    a.subscribe('help.>', {
      callback: (_e, m) => {
        seen.push(m.subject);
        m.respond(sc.encode(`answer to ${sc.decode(m.data)}`));
      },
    });
    await a.flush();
    const reply = await b.request('billing', sc.encode('q1'), { timeout: 2000 });
    expect(sc.decode(reply.data)).toBe('answer to q1');
    expect(seen).toEqual(['help.billing']);
  });

  it('the responder sees a mapped reply subject (_R_.), never the requester’s inbox', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const replies: string[] = [];
    a.subscribe('help.billing', {
      callback: (_e, m) => {
        replies.push(m.reply ?? '');
        m.respond(sc.encode('ok'));
      },
    });
    await a.flush();
    await b.request('billing', sc.encode('q'), { timeout: 2000 });
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/^_R_\./);
    expect(replies[0]).not.toContain('_INBOX');
  });

  it('singleton: only the first of two responses crosses back; stream: both do', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    for (const subject of ['help.billing', 'feed']) {
      a.subscribe(subject, {
        callback: (_e, m) => {
          m.respond(sc.encode('r1'));
          m.respond(sc.encode('r2'));
        },
      });
    }
    await a.flush();
    const single = b.subscribe('rep.single');
    const streamed = b.subscribe('rep.stream');
    await b.flush();
    b.publish('billing', sc.encode('q'), { reply: 'rep.single' });
    b.publish('feed', sc.encode('q'), { reply: 'rep.stream' });
    await b.flush();
    expect(await drain(single, 300)).toEqual(['rep.single:r1']);
    expect(await drain(streamed, 0)).toEqual(['rep.stream:r1', 'rep.stream:r2']);
  });

  it('an imported service nobody in A serves: the request times out, no 503 (nats-server 2.9.10 too)', async () => {
    const s = await serverWith(conf);
    const b = await login(s, { user: 'b', pass: 'b' });
    const err = (await b.request('billing', sc.encode('q'), { timeout: 1000 }).catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe(ErrorCode.Timeout);
  });

  it('A’s responders are not reachable from B on a subject B did not import', async () => {
    const s = await serverWith(conf);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    a.subscribe('help.>', { callback: (_e, m) => m.respond(sc.encode('leak')) });
    await a.flush();
    const err = (await b.request('help.other', sc.encode('q'), { timeout: 2000 }).catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe(ErrorCode.NoResponders);
  });
});

describe('accounts: wildcard imports remapped with `to`', () => {
  it('a stream import a.*.x → b.*.y and a service import local.* → svc.* keep the wildcard tokens', async () => {
    const s = await serverWith(`
accounts {
  A: { users: [ { user: a, password: a } ], exports: [ { stream: "a.>" }, { service: "svc.*" } ] }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { stream: { account: A, subject: "a.*.x" }, to: "b.*.y" }
      { service: { account: A, subject: "svc.*" }, to: "local.*" }
    ]
  }
}`);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    a.subscribe('svc.*', { callback: (_e, m) => m.respond(sc.encode(m.subject)) });
    await a.flush();
    const inB = b.subscribe('>');
    await b.flush();
    a.publish('a.7.x', sc.encode('1'));
    a.publish('a.7.z', sc.encode('2'));
    await a.flush();
    expect(await drain(inB)).toEqual(['b.7.y:1']);
    const reply = await b.request('local.42', sc.encode('q'), { timeout: 2000 });
    expect(sc.decode(reply.data)).toBe('svc.42');
  });
});

describe('no_auth_user', () => {
  it('a client without credentials is that user, in its account; credentials still work as before', async () => {
    const s = await serverWith(`${TWO_ACCOUNTS}\nno_auth_user: b`);
    const anon = await login(s, {});
    const b = await login(s, { user: 'b', pass: 'b' });
    const a = await login(s, { user: 'a', pass: 'a' });
    const inB = b.subscribe('>');
    const inA = a.subscribe('>');
    await Promise.all([b.flush(), a.flush()]);
    anon.publish('hello', sc.encode('anon'));
    await anon.flush();
    expect(await drain(inB)).toEqual(['hello:anon']);
    expect(await drain(inA, 0)).toEqual([]);
    const bad = (await login(s, { user: 'a', pass: 'wrong' }).catch((e: unknown) => e)) as NatsError;
    expect(bad.code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('naming a user that does not exist stops the server at startup, as nats-server', async () => {
    // nats-server checks this when it starts, not under -t
    const started = await serverWith(`${TWO_ACCOUNTS}\nno_auth_user: nobody`).then(
      () => 'started',
      (err: unknown) => String(err),
    );
    // 2.9.10 says "as user in", later versions "as user or nkey in" (Flotilla's wording)
    expect(started).toMatch(/no_auth_user: "nobody" not present as user (or nkey )?in authorization block or account configuration/);
  });
});

describe('nkey users', () => {
  const user = nkeys.createUser();
  const seed = user.getSeed();
  const pub = user.getPublicKey();
  const other = nkeys.createUser();

  it('in authorization {}: INFO carries a nonce; the stock client signs it and is in', async () => {
    const s = await serverWith(`authorization { users: [ { nkey: "${pub}" } ] }`);
    const raw = await RawClient.connect(s.port);
    const info = JSON.parse(/^INFO (.*)\r\n/.exec(raw.received)![1]!) as { nonce?: string; auth_required?: boolean };
    raw.close();
    expect(info.auth_required).toBe(true);
    expect(info.nonce).toMatch(/^[A-Za-z0-9_-]{11,}$/);
    const nc = await login(s, { authenticator: nkeyAuthenticator(seed) });
    const sub = nc.subscribe('n.>');
    nc.publish('n.1', sc.encode('ok'));
    await nc.flush();
    expect(await drain(sub)).toEqual(['n.1:ok']);
  });

  it('a signature by another key, or none, is refused with -ERR Authorization Violation', async () => {
    const s = await serverWith(`authorization { users: [ { nkey: "${pub}" } ] }`);
    for (const sig of [(nonce: string) => Buffer.from(other.sign(Buffer.from(nonce))).toString('base64url'), () => '']) {
      const raw = await RawClient.connect(s.port);
      const nonce = (JSON.parse(/^INFO (.*)\r\n/.exec(raw.received)![1]!) as { nonce: string }).nonce;
      raw.send(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, nkey: pub, sig: sig(nonce) })}\r\nPING\r\n`);
      await raw.waitFor(/-ERR 'Authorization Violation'\r\n/);
      await raw.waitClosed();
      raw.close();
    }
    // The right signature over this connection's nonce, by hand, is accepted.
    const raw = await RawClient.connect(s.port);
    const nonce = (JSON.parse(/^INFO (.*)\r\n/.exec(raw.received)![1]!) as { nonce: string }).nonce;
    const good = Buffer.from(user.sign(Buffer.from(nonce))).toString('base64url');
    raw.send(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, nkey: pub, sig: good })}\r\nPING\r\n`);
    await raw.waitFor(/PONG\r\n/);
    raw.close();
  });

  it('in an account: the nkey user is in that account’s subject space', async () => {
    const s = await serverWith(`
accounts {
  A: { users: [ { nkey: "${pub}" } ] }
  B: { users: [ { user: b, password: b } ] }
}`);
    const a = await login(s, { authenticator: nkeyAuthenticator(seed) });
    const b = await login(s, { user: 'b', pass: 'b' });
    const inA = a.subscribe('>');
    const inB = b.subscribe('>');
    await Promise.all([a.flush(), b.flush()]);
    b.publish('from.b', sc.encode('1'));
    a.publish('from.a', sc.encode('2'));
    await Promise.all([a.flush(), b.flush()]);
    expect(await drain(inA)).toEqual(['from.a:2']);
    expect(await drain(inB, 0)).toEqual(['from.b:1']);
  });
});

describe('permissions within an account', () => {
  it('a user’s publish allow list applies to its own account’s subjects', async () => {
    const s = await serverWith(`
accounts {
  A: { users: [ { user: a, password: a, permissions: { publish: "ok.>" } }, { user: a2, password: a2 } ] }
}`);
    const a = await login(s, { user: 'a', pass: 'a' });
    const a2 = await login(s, { user: 'a2', pass: 'a2' });
    const sub = a2.subscribe('>');
    await a2.flush();
    a.publish('ok.1', sc.encode('yes'));
    a.publish('no.1', sc.encode('no'));
    await a.flush().catch(() => undefined);
    expect(await drain(sub)).toEqual(['ok.1:yes']);
  });
});
