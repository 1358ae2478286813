// Client TLS end to end with certificates generated here: INFO flags, the upgrade after a plain-text
// INFO with the nats client, mutual TLS, certificate-to-user mapping with permissions, plain clients on
// a TLS port, the handshake timeout, and the start-up errors for missing certificates.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect as netConnect } from 'node:net';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection, type NatsError, ErrorCode } from 'nats';
import { runFlotilla, sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';
import { makeTestCertificates, type TestCertificates } from './security-certificates.js';

/** Exit codes after SIGTERM: flotilla 0; nats-server 2.9.10 exits 0 or 1. */
const CLEAN_EXITS = process.env['E2E_SERVER'] === 'nats-server' ? [0, 1] : [0];

let certs: TestCertificates;
beforeAll(() => {
  certs = makeTestCertificates();
});
afterAll(() => {
  rmSync(certs.dir, { recursive: true, force: true });
});

/** Connects with plain TCP, returns the INFO JSON, then sends `send` and collects what follows until close. */
async function plainClient(port: number, send: string | null, waitMs = 1500): Promise<{ info: Record<string, unknown>; after: string; closed: boolean }> {
  const socket = netConnect({ host: '127.0.0.1', port });
  let data = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  const deadline = Date.now() + 5000;
  while (!/\r\n/.test(data) && Date.now() < deadline) await sleep(10);
  const line = data.slice(0, data.indexOf('\r\n'));
  const info = JSON.parse(line.slice(5)) as Record<string, unknown>;
  data = data.slice(data.indexOf('\r\n') + 2);
  if (send !== null) socket.write(send);
  const until = Date.now() + waitMs;
  while (!closed && Date.now() < until) await sleep(10);
  socket.destroy();
  return { info, after: data, closed };
}

async function tryConnect(opts: Parameters<typeof connect>[0]): Promise<NatsConnection | NatsError> {
  try {
    return await connect({ reconnect: false, timeout: 5000, ...opts });
  } catch (err) {
    return err as NatsError;
  }
}

describe('TLS (--tls --tlscert --tlskey)', () => {
  let s: FlotillaProcess;
  beforeAll(async () => {
    s = await startServer({ args: ['--tls', '--tlscert', certs.server.cert, '--tlskey', certs.server.key] });
  });
  afterAll(async () => {
    expect(CLEAN_EXITS).toContain(await s.stop());
  });

  it('INFO arrives in plain text with tls_required and without tls_verify', async () => {
    const { info } = await plainClient(s.port, null, 0);
    expect(info['tls_required']).toBe(true);
    expect(info['tls_verify']).toBeUndefined();
  });

  it('the nats client upgrades after INFO and works over TLS', async () => {
    const nc = (await tryConnect({ servers: s.url, tls: { caFile: certs.caFile } })) as NatsConnection;
    expect(nc.info?.tls_required).toBe(true);
    const sub = nc.subscribe('tls.echo', { max: 1 });
    nc.publish('tls.echo', 'over tls');
    for await (const m of sub) expect(m.string()).toBe('over tls');
    const rtt = await nc.rtt();
    expect(rtt).toBeGreaterThanOrEqual(0);
    await nc.close();
  });

  it('a client that does not trust the server certificate fails the handshake', async () => {
    const err = (await tryConnect({ servers: s.url, tls: {} })) as NatsError;
    expect(err).toBeInstanceOf(Error);
    expect(String(err.code ?? err.message)).toMatch(/CERT|certificate|VERIFY/i);
  });

  it('a plain client that sends CONNECT on the TLS port is closed without a reply, as nats-server does', async () => {
    const r = await plainClient(s.port, 'CONNECT {"verbose":false}\r\nPING\r\n');
    expect(r.after).toBe('');
    expect(r.closed).toBe(true);
    await sleep(100);
    expect(s.output()).toMatch(/TLS handshake error/);
  });
});

describe('mutual TLS (--tlsverify --tlscacert)', () => {
  let s: FlotillaProcess;
  beforeAll(async () => {
    s = await startServer({
      args: ['--tlsverify', '--tlscert', certs.server.cert, '--tlskey', certs.server.key, '--tlscacert', certs.caFile],
    });
  });
  afterAll(async () => {
    expect(CLEAN_EXITS).toContain(await s.stop());
  });

  it('INFO advertises tls_required and tls_verify', async () => {
    const { info } = await plainClient(s.port, null, 0);
    expect(info).toMatchObject({ tls_required: true, tls_verify: true });
  });

  it('a client certificate signed by the CA is accepted', async () => {
    const nc = (await tryConnect({ servers: s.url, tls: { caFile: certs.caFile, certFile: certs.alice.cert, keyFile: certs.alice.key } })) as NatsConnection;
    expect(nc.info?.tls_verify).toBe(true);
    await nc.flush();
    await nc.close();
  });

  it('no client certificate, or one from another CA, is refused', async () => {
    const none = await tryConnect({ servers: s.url, tls: { caFile: certs.caFile } });
    expect(none).toBeInstanceOf(Error);
    const rogue = await tryConnect({ servers: s.url, tls: { caFile: certs.caFile, certFile: certs.rogue.cert, keyFile: certs.rogue.key } });
    expect(rogue).toBeInstanceOf(Error);
    await sleep(100);
    expect(s.output()).toMatch(/TLS handshake error/);
  });
});

describe('tls { verify_and_map } maps the certificate to a user and its permissions', () => {
  let s: FlotillaProcess;
  beforeAll(async () => {
    const conf = join(certs.dir, 'map.conf');
    writeFileSync(
      conf,
      `tls {
  cert_file: "${certs.server.cert}"
  key_file: "${certs.server.key}"
  ca_file: "${certs.caFile}"
  verify_and_map: true
  timeout: 0.5
}
authorization {
  users = [
    { user: "alice@example.com", permissions: { publish: "alice.>", subscribe: "alice.>" } }
    { user: "CN=bob,O=Flotilla", permissions: { publish: "bob.>", subscribe: "bob.>" } }
  ]
}
`,
    );
    s = await startServer({ args: ['-c', conf] });
  });
  afterAll(async () => {
    expect(CLEAN_EXITS).toContain(await s.stop());
  });

  async function permissionErrors(nc: NatsConnection, subject: string): Promise<string[]> {
    const errors: string[] = [];
    const done = (async () => {
      for await (const st of nc.status()) {
        const ctx = (st as { permissionContext?: { operation: string; subject: string } }).permissionContext;
        if (ctx) errors.push(`${ctx.operation} ${ctx.subject}`);
      }
    })();
    nc.publish(subject, 'x');
    await nc.flush();
    await sleep(50);
    void done;
    return errors;
  }

  it('by e-mail SAN: alice may use alice.> and nothing else', async () => {
    const nc = (await tryConnect({ servers: s.url, tls: { caFile: certs.caFile, certFile: certs.alice.cert, keyFile: certs.alice.key } })) as NatsConnection;
    const sub = nc.subscribe('alice.in', { max: 1 });
    nc.publish('alice.in', 'mine');
    for await (const m of sub) expect(m.string()).toBe('mine');
    expect(await permissionErrors(nc, 'bob.in')).toEqual(['publish bob.in']);
    await nc.close();
  });

  it('by subject (RFC 2253, as nats-server prints it): bob may use bob.>', async () => {
    const nc = (await tryConnect({ servers: s.url, tls: { caFile: certs.caFile, certFile: certs.bob.cert, keyFile: certs.bob.key } })) as NatsConnection;
    const sub = nc.subscribe('bob.in', { max: 1 });
    nc.publish('bob.in', 'mine');
    for await (const m of sub) expect(m.string()).toBe('mine');
    expect(await permissionErrors(nc, 'alice.in')).toEqual(['publish alice.in']);
    await nc.close();
  });

  it('a valid certificate that names no configured user is an Authorization Violation', async () => {
    const err = (await tryConnect({
      servers: s.url,
      user: 'alice@example.com',
      pass: 'ignored',
      tls: { caFile: certs.caFile, certFile: certs.carol.cert, keyFile: certs.carol.key },
    })) as NatsError;
    expect(err.code).toBe(ErrorCode.AuthorizationViolation);
  });

  it('a client that never starts the handshake is closed after the TLS timeout', async () => {
    const started = Date.now();
    const r = await plainClient(s.port, null, 3000);
    expect(r.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2500);
  });
});

describe('TLS configuration errors', () => {
  it('missing certificate or key, unreadable files and incomplete tls {} blocks refuse to start (exit 1)', async () => {
    const conf = join(certs.dir, 'bad.conf');
    writeFileSync(conf, `port: -1\ntls {\n  key_file: "${certs.server.key}"\n}\n`);
    // The four start attempts are independent: run them together.
    const [noCert, noKey, unreadable, badBlock] = await Promise.all([
      runFlotilla(['--tls', '-p', '-1']),
      runFlotilla(['--tlscert', certs.server.cert, '-p', '-1']),
      runFlotilla(['--tlscert', join(certs.dir, 'missing.pem'), '--tlskey', certs.server.key, '-p', '-1']),
      runFlotilla(['-c', conf]),
    ]);
    expect(noCert.code).toBe(1);
    expect(noCert.stderr).toMatch(/TLS Server certificate must be present and valid/);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/TLS Server private key must be present and valid/);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toMatch(/missing\.pem/);
    expect(badBlock.code).toBe(1);
    expect(badBlock.stderr).toMatch(/bad\.conf:2: missing 'cert_file' in TLS configuration/);
  });
});
