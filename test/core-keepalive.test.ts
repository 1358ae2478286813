// Server PINGs, stale-connection close, slow-consumer protection and graceful shutdown.
import { describe, it, expect, afterAll } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
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
