// Exact bytes on the wire, checked with raw sockets (the forms captured from nats-server in the reference).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { RawClient } from './helpers/raw-client.js';

let server: FlotillaProcess;
const clients: RawClient[] = [];

async function raw(connectOpts: Record<string, unknown> = {}): Promise<RawClient> {
  const c = await RawClient.connect(server.port);
  clients.push(c);
  c.send(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, headers: true, no_responders: true, ...connectOpts })}\r\n`);
  await c.flush();
  c.clear();
  return c;
}

beforeAll(async () => {
  server = await startFlotilla();
});

afterAll(async () => {
  for (const c of clients) c.close();
  expect(await server.stop()).toBe(0);
});

describe('wire format', () => {
  it('speaks first with an INFO line carrying the fields clients read', async () => {
    const c = await RawClient.connect(server.port);
    clients.push(c);
    const [line] = await c.waitFor(/^INFO (\{.*\}) \r\n/);
    const info = JSON.parse(line!.slice(5, -3)) as Record<string, unknown>;
    expect(info['server_id']).toMatch(/^N[A-Z2-7]{55}$/);
    expect(info['server_name']).toBe(info['server_id']);
    expect(info['version']).toMatch(/^2\.11\.\d+$/);
    expect(info['proto']).toBe(1);
    expect(info['headers']).toBe(true);
    expect(info['max_payload']).toBe(1048576);
    expect(info['port']).toBe(server.port);
    expect(typeof info['client_id']).toBe('number');
    expect(info['client_ip']).toBe('127.0.0.1');
    expect(info['auth_required']).toBeUndefined();
  });

  it('answers PING with PONG, and ops are case-insensitive', async () => {
    const c = await raw();
    c.send('ping\r\n');
    await c.waitFor(/^PONG\r\n$/);
  });

  it('delivers MSG with and without reply, once per matching sid', async () => {
    const c = await raw();
    c.send('SUB foo 1\r\nSUB foo q1 2\r\nPUB foo bar 5\r\nhello\r\n');
    await c.flush();
    expect(c.received).toBe('MSG foo 1 bar 5\r\nhello\r\nMSG foo 2 bar 5\r\nhello\r\nPONG\r\n');
    c.clear();
    c.send('PUB foo 0\r\n\r\n');
    await c.flush();
    expect(c.received).toBe('MSG foo 1 0\r\n\r\nMSG foo 2 0\r\n\r\nPONG\r\n');
  });

  it('delivers HMSG with the header block intact', async () => {
    const c = await raw();
    c.send('SUB hfoo 1\r\nHPUB hfoo r1 24 29\r\nNATS/1.0\r\nA: b\r\nA: c\r\n\r\nhello\r\n');
    await c.flush();
    expect(c.received).toBe('HMSG hfoo 1 r1 24 29\r\nNATS/1.0\r\nA: b\r\nA: c\r\n\r\nhello\r\nPONG\r\n');
  });

  it('treats a zero-length header block as a plain message', async () => {
    const c = await raw();
    c.send('SUB h0 1\r\nHPUB h0 0 5\r\nhello\r\nHPUB h0 12 12\r\nNATS/1.0\r\n\r\n\r\n');
    await c.flush();
    expect(c.received).toBe('MSG h0 1 5\r\nhello\r\nHMSG h0 1 12 12\r\nNATS/1.0\r\n\r\n\r\nPONG\r\n');
  });

  it('strips headers for a subscriber that did not negotiate them', async () => {
    const plain = await raw({ headers: false, no_responders: false });
    plain.send('SUB strip 1\r\n');
    await plain.flush();
    plain.clear();
    const pub = await raw();
    pub.send('HPUB strip 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n');
    await pub.flush();
    await plain.flush();
    expect(plain.received).toBe('MSG strip 1 2\r\nhi\r\nPONG\r\n');
  });

  it('sends the 503 no-responders status to a requester that asked for it', async () => {
    const c = await raw();
    c.send('SUB _INBOX.x 9\r\nPUB nobody _INBOX.x 0\r\n\r\n');
    await c.flush();
    expect(c.received).toBe('HMSG _INBOX.x 9 16 16\r\nNATS/1.0 503\r\n\r\n\r\nPONG\r\n');
  });

  it('in verbose mode acknowledges each op with +OK before the MSG it triggers', async () => {
    const c = await RawClient.connect(server.port);
    clients.push(c);
    c.send('CONNECT {"verbose":true}\r\n');
    await c.waitFor(/\+OK\r\n$/);
    c.clear();
    c.send('SUB v 1\r\nPUB v 2\r\nhi\r\nUNSUB 1\r\nPING\r\n');
    await c.waitFor(/PONG\r\n$/);
    expect(c.received).toBe('+OK\r\n+OK\r\nMSG v 1 2\r\nhi\r\n+OK\r\nPONG\r\n');
  });

  it('refuses an invalid subscription subject but keeps the connection', async () => {
    const c = await raw();
    c.send('SUB foo.>.bar 1\r\nSUB foo..bar 2\r\n');
    await c.flush();
    expect(c.received).toBe("-ERR 'Invalid Subject'\r\n-ERR 'Invalid Subject'\r\nPONG\r\n");
    expect(c.closed).toBe(false);
  });

  it('routes wildcard publish subjects literally, but refuses them in pedantic mode', async () => {
    const c = await raw();
    c.send('SUB foo.* 1\r\nPUB foo.* 1\r\nx\r\n');
    await c.flush();
    expect(c.received).toBe('MSG foo.* 1 1\r\nx\r\nPONG\r\n');
    const p = await raw({ pedantic: true });
    p.send('PUB foo.* 1\r\nx\r\n');
    await p.flush();
    expect(p.received).toBe("-ERR 'Invalid Publish Subject'\r\nPONG\r\n");
  });

  it.each([
    ['an unknown op', 'FOO bar\r\n', "-ERR 'Unknown Protocol Operation'\r\n"],
    ['a payload longer than declared', 'PUB foo 2\r\nhello\r\n', "-ERR 'Unknown Protocol Operation'\r\n"],
    ['a payload over max_payload', `PUB foo ${1024 * 1024 + 1}\r\n`, "-ERR 'Maximum Payload Violation'\r\n"],
    ['an over-long control line', `SUB ${'x'.repeat(5000)} 1\r\n`, "-ERR 'maximum control line exceeded'\r\n"],
    ['a negative size', 'PUB foo -1\r\n', ''],
    ['invalid CONNECT JSON', 'CONNECT {nope\r\n', ''],
    ['no_responders without headers', 'CONNECT {"no_responders":true}\r\n', "-ERR 'no responders requires headers support'\r\n"],
    ['a bad protocol version', 'CONNECT {"protocol":7}\r\n', "-ERR 'invalid client protocol'\r\n"],
  ])('closes the connection on %s with nats-server\'s reply', async (_name, input, reply) => {
    const c = await RawClient.connect(server.port);
    clients.push(c);
    c.clear();
    c.send(input);
    await c.waitClosed();
    expect(c.received).toBe(reply);
  });

  it('closes an HPUB from a connection without headers, without an -ERR', async () => {
    const c = await raw({ headers: false, no_responders: false });
    c.send('HPUB x 12 12\r\nNATS/1.0\r\n\r\n\r\n');
    await c.waitClosed();
    expect(c.received).toBe('');
  });

  it('keeps serving other clients after garbage on one connection', async () => {
    const bad = await RawClient.connect(server.port);
    clients.push(bad);
    bad.send(Buffer.from([0xff, 0x00, 0x13, 0x37, 0x0d, 0x0a]));
    await bad.waitClosed();
    expect(bad.received).toContain("-ERR 'Unknown Protocol Operation'");
    const good = await raw();
    good.send('SUB ok 1\r\nPUB ok 2\r\nok\r\n');
    await good.flush();
    expect(good.received).toBe('MSG ok 1 2\r\nok\r\nPONG\r\n');
  });

  it('survives 100 connections of seeded random garbage: each ends closed, the server keeps serving', async () => {
    let state = 0x9e3779b9;
    const rand = (): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 4294967296;
    };
    const prefixes = ['', 'PUB a 3\r\n', 'SUB x 1\r\n', 'HPUB a 5 9\r\n', 'CONNECT {}\r\n'];
    for (let i = 0; i < 100; i++) {
      const c = await RawClient.connect(server.port);
      const garbage = Buffer.alloc(1 + Math.floor(rand() * 300));
      for (let j = 0; j < garbage.length; j++) garbage[j] = Math.floor(rand() * 256);
      // A trailing unknown op guarantees the input is invalid even when the random bytes were not.
      c.send(Buffer.concat([Buffer.from(prefixes[i % prefixes.length]!), garbage, Buffer.from('\r\nXXX\r\n')]));
      await c.waitClosed(5_000);
      c.close();
    }
    const good = await raw();
    good.send('SUB alive 1\r\nPUB alive 3\r\nyes\r\n');
    await good.flush();
    expect(good.received).toBe('MSG alive 1 3\r\nyes\r\nPONG\r\n');
  });

  it('accepts arguments separated by runs of spaces and tabs, and bare LF line ends', async () => {
    const c = await raw();
    c.send('SUB  tabs\t 5\nPUB\ttabs  3\nabc\r\n');
    await c.flush();
    expect(c.received).toBe('MSG tabs 5 3\r\nabc\r\nPONG\r\n');
  });
});

describe('nats-server defaults when CONNECT omits options', () => {
  it('verbose and pedantic are on until CONNECT turns them off', async () => {
    const c = await RawClient.connect(server.port);
    clients.push(c);
    c.clear();
    c.send('SUB d 1\r\nPING\r\n'); // before any CONNECT: verbose
    await c.waitFor(/PONG\r\n$/);
    expect(c.received).toBe('+OK\r\nPONG\r\n');
    c.clear();
    c.send('CONNECT {}\r\nPUB d.* 1\r\nx\r\nPING\r\n'); // pedantic refuses the wildcard, verbose still acks
    await c.waitFor(/PONG\r\n$/);
    expect(c.received).toBe("+OK\r\n-ERR 'Invalid Publish Subject'\r\n+OK\r\nPONG\r\n");
    c.clear();
    c.send('CONNECT {"verbose":false}\r\nPUB d.* 1\r\nx\r\nPING\r\n'); // pedantic still on
    await c.waitFor(/PONG\r\n$/);
    expect(c.received).toBe("-ERR 'Invalid Publish Subject'\r\nPONG\r\n");
  });
});
