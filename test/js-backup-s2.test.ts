// A Flotilla snapshot is an s2 stream, as the `nats` CLI expects: jsm.go passes every backup through an s2
// reader to count progress and fails on anything else. The check is nats-server's own s2 reader: restoring a
// Flotilla archive into nats-server 2.9.10 gets past s2 decoding and fails only at its tar layer (the archive
// inside is Flotilla's, not nats-server's; docs/architecture.md says why).
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { restore, snapshot } from './helpers/js-backup-client.js';
import { reservePort } from './helpers/port-reservation.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
let flotilla: JetStreamServer | undefined;
let natsServer: ChildProcess | undefined;
let nc: NatsConnection | undefined;
const dir = mkdtempSync(join(tmpdir(), 'flotilla-backup-s2-'));

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  natsServer?.kill('SIGKILL');
  await flotilla?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    if (reservePort(port)) return port;
  }
  throw new Error('no free port');
}

describe.skipIf(AGAINST_NATS_SERVER)('the snapshot stream', () => {
  it("is read by nats-server's s2 reader", async () => {
    flotilla = await startJetStreamServer('flotilla-backup-s2src-');
    await flotilla.jsm.streams.add({ name: 'X', subjects: ['x'] });
    for (let i = 0; i < 20; i++) await flotilla.js.publish('x', new TextEncoder().encode(`hello ${i}`.repeat(50)));
    const snap = await snapshot(flotilla.nc, 'X', { chunk_size: 1024 });
    const port = await freePort();
    natsServer = spawn('nats-server', ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    for (let attempt = 0; attempt < 50 && nc === undefined; attempt++) {
      nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false }).catch(async () => {
        await new Promise((r) => setTimeout(r, 100));
        return undefined;
      });
    }
    const { result } = await restore(nc!, 'X', { config: snap.response.config, state: snap.response.state }, snap.chunks);
    expect(result.error).toEqual({ code: 500, err_code: 10062, description: 'restore failed: archive/tar: invalid tar header' });
  }, 30_000);
});
