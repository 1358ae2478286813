// Server PINGs, stale-connection close, slow-consumer protection and graceful shutdown.
import { describe, it, expect, afterAll } from 'vitest';
import { writeFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { startFlotilla, type FlotillaProcess, sleep } from './helpers/flotilla-process.js';
import { RawClient } from './helpers/raw-client.js';

const servers: FlotillaProcess[] = [];

async function serverWithConf(text: string): Promise<FlotillaProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-ka-'));
  const conf = join(dir, 'server.conf');
  writeFileSync(conf, text);
  const s = await startFlotilla({ args: ['-c', conf] });
  servers.push(s);
  return s;
}

afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe('keep-alive and protection', () => {
  it('pings clients every ping_interval and closes a client that never answers', async () => {
    const s = await serverWithConf('ping_interval: "300ms"\nping_max: 2\n');
    const c = await RawClient.connect(s.port);
    c.send('CONNECT {}\r\n');
    await c.waitFor(/PING\r\n/, 2_000);
    await c.waitClosed(5_000);
    expect(c.received).toMatch(/PING\r\nPING\r\n-ERR 'Stale Connection'\r\n$/);
  });

  it('keeps a client that answers the pings', async () => {
    const s = await serverWithConf('ping_interval: "200ms"\nping_max: 1\n');
    const nc = await connect({ servers: s.url, reconnect: false });
    await sleep(1_200); // six server pings, each answered by the client
    expect(nc.isClosed()).toBe(false);
    await nc.close();
  });

  it('closes a subscriber that does not read once its pending bytes exceed max_pending', async () => {
    const s = await serverWithConf('max_pending: 256KB\nmax_payload: 64KB\n');
    const slow = await RawClient.connect(s.port);
    slow.send('CONNECT {}\r\nSUB flood 1\r\n');
    await slow.flush();
    slow.socket.pause(); // stop reading: the kernel buffers fill, then the server's pending bytes grow
    const nc = await connect({ servers: s.url, reconnect: false });
    const payload = new Uint8Array(8 * 1024);
    for (let i = 0; i < 4_000 && !slow.closed; i++) {
      nc.publish('flood', payload);
      if (i % 100 === 0) await nc.flush();
    }
    await nc.flush();
    const res = await fetch(`http://127.0.0.1:${s.httpPort}/varz`);
    const varz = (await res.json()) as Record<string, number>;
    expect(varz['slow_consumers']).toBe(1);
    expect(varz['connections']).toBe(1); // only the publisher remains
    const closed = (await (await fetch(`http://127.0.0.1:${s.httpPort}/connz?state=closed`)).json()) as {
      connections: Array<{ reason: string }>;
    };
    expect(closed.connections.map((c) => c.reason)).toContain('Slow Consumer (Pending Bytes)');
    expect(nc.isClosed()).toBe(false);
    await nc.close();
  });

  it('shuts down gracefully on SIGTERM and SIGINT: exit 0, clients see the close', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const s = await startFlotilla();
      const nc = await connect({ servers: s.url, reconnect: false });
      const closed = nc.closed();
      const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
      s.proc.kill(signal);
      expect(await exited).toBe(0);
      await closed;
      expect(nc.isClosed()).toBe(true);
      expect(s.output()).toContain('shutting down');
      await s.stop();
    }
  });
});

describe('limits and logging', () => {
  it('refuses connections beyond max_connections with INFO then the -ERR', async () => {
    const s = await serverWithConf('max_connections: 2\n');
    const a = await connect({ servers: s.url, reconnect: false });
    const b = await connect({ servers: s.url, reconnect: false });
    const third = await RawClient.connect(s.port); // INFO arrives first, as from nats-server
    await third.waitClosed();
    expect(third.received).toMatch(/^INFO \{.*\} \r\n-ERR 'maximum connections exceeded'\r\n$/);
    const err = await connect({ servers: s.url, reconnect: false }).catch((e: Error) => e);
    expect(String(err)).toMatch(/maximum connections exceeded/i);
    await a.close();
    await b.close();
  });

  it('-DV logs protocol ops at trace level and -l writes the log to a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-log-'));
    const logFile = join(dir, 'flotilla.log');
    const s = await startFlotilla({ args: ['-DV', '-l', logFile] });
    servers.push(s);
    const nc = await connect({ servers: s.url, reconnect: false });
    nc.subscribe('traced.subject');
    await nc.flush();
    await nc.close();
    await s.stop();
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l['op'] === 'SUB' && l['subject'] === 'traced.subject' && l['level'] === 10)).toBe(true);
    expect(lines.some((l) => l['msg'] === 'client connection created' && l['level'] === 20)).toBe(true);
  });

  it('logs at info by default: no debug or trace lines', async () => {
    const s = await startFlotilla();
    servers.push(s);
    const nc = await connect({ servers: s.url, reconnect: false });
    nc.subscribe('quiet.subject');
    await nc.flush();
    await nc.close();
    await s.stop();
    const lines = s.output().trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.every((l) => l['level']! >= 30)).toBe(true);
  });
});
