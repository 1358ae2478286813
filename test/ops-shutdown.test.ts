// SIGTERM ends a JetStream node cleanly and quickly; SIGUSR2 (nats-server's ldm signal) puts it in lame-duck
// mode: unhealthy, refusing new clients, closing the connected ones, then exiting 0.
import { describe, it, expect } from 'vitest';
import { connect } from 'nats';
import { connect as tcpConnect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFlotilla, sleep } from './helpers/flotilla-process.js';

function exitOf(proc: import('node:child_process').ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tcpConnect({ host: '127.0.0.1', port }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

describe('shutdown', () => {
  it('SIGTERM: flushes, exits 0 within the bound, and the acked messages are there after a restart', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'flotilla-ops-term-'));
    try {
      const server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
      const nc = await connect({ servers: server.url, reconnect: false });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'T', subjects: ['t.>'] });
      const js = nc.jetstream();
      for (let i = 0; i < 50; i++) await js.publish('t.x', new TextEncoder().encode(`m${i}`));
      const started = Date.now();
      server.proc.kill('SIGTERM');
      expect(await exitOf(server.proc)).toBe(0);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(server.output()).toMatch(/shutting down/);
      await nc.close().catch(() => undefined);
      await server.stop();

      const again = await startFlotilla({ args: ['-js', '-sd', storeDir] });
      const nc2 = await connect({ servers: again.url, reconnect: false });
      const info = await (await nc2.jetstreamManager()).streams.info('T');
      expect(info.state.messages).toBe(50);
      await nc2.close();
      await again.stop();
    } finally {
      rmSync(storeDir, { recursive: true, force: true });
    }
  });

  it('SIGUSR2 lame-duck mode: /healthz 503, new clients refused, clients closed, then exit 0', async () => {
    const server = await startFlotilla({ env: { FLOTILLA_LAME_DUCK_DURATION_MS: '1500', FLOTILLA_LAME_DUCK_GRACE_MS: '400' } });
    const nc = await connect({ servers: server.url, reconnect: false });
    const closed = nc.closed();
    // nats-server tells connected clients with an INFO carrying `ldm: true`; nats.js reports it as a status.
    let sawLdm = false;
    void (async () => {
      for await (const st of nc.status()) if (st.type === 'ldm') sawLdm = true;
    })();
    expect((await fetch(`http://127.0.0.1:${server.httpPort}/healthz`)).status).toBe(200);
    const started = Date.now();
    server.proc.kill('SIGUSR2');
    await sleep(200);
    const health = await fetch(`http://127.0.0.1:${server.httpPort}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'unavailable', error: 'server is in lame duck mode' });
    expect(await canConnect(server.port)).toBe(false);
    expect(sawLdm).toBe(true);
    // The connected client keeps working through the grace period …
    nc.publish('still.here');
    await nc.flush();
    // … and is closed within the lame-duck duration.
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(await exitOf(server.proc)).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.output()).toMatch(/entering lame duck mode/);
    await server.stop();
  });
});
