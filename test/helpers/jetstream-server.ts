// One JetStream-enabled server in a fresh store directory with one client connection: the setup most
// JetStream end-to-end files share (E2E_SERVER=nats-server runs it against nats-server, like startFlotilla).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { connect, type ConnectionOptions, type JetStreamClient, type JetStreamManager, type NatsConnection, type NatsError } from 'nats';
import { startFlotilla, type FlotillaProcess } from './flotilla-process.js';

export interface JetStreamServer {
  server: FlotillaProcess;
  nc: NatsConnection;
  jsm: JetStreamManager;
  js: JetStreamClient;
  storeDir: string;
  /** Closes the connection, stops the server (resolving with its exit code) and removes the store. */
  stop(): Promise<number | null>;
}

export async function startJetStreamServer(storePrefix: string, connectOpts: ConnectionOptions = {}): Promise<JetStreamServer> {
  const storeDir = mkdtempSync(join(tmpdir(), storePrefix));
  const server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
  const nc = await connect({ servers: server.url, ...connectOpts });
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  const stop = async (): Promise<number | null> => {
    await nc.close().catch(() => undefined);
    const code = await server.stop();
    rmSync(storeDir, { recursive: true, force: true });
    return code;
  };
  return { server, nc, jsm, js, storeDir, stop };
}

/**
 * One server for a whole test file: started in beforeAll (handed to `use`), stopped in afterAll, where a
 * Flotilla server must exit cleanly.
 */
export function useJetStreamServer(storePrefix: string, connectOpts: ConnectionOptions, use: (server: JetStreamServer) => void): void {
  let fixture: JetStreamServer | undefined;
  beforeAll(async () => {
    fixture = await startJetStreamServer(storePrefix, connectOpts);
    use(fixture);
  });
  afterAll(async () => {
    if (fixture === undefined) return;
    const code = await fixture.stop();
    if (EXPECT_CLEAN_EXIT) expect(code).toBe(0);
  });
}

/** Servers on store directories that outlive them, for kill -9 and restart tests; call `cleanup` in afterAll. */
export class RestartableJetStream {
  private readonly storeDirs: string[] = [];
  private readonly running: FlotillaProcess[] = [];

  newStoreDir(prefix = 'flotilla-durability-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.storeDirs.push(dir);
    return dir;
  }

  async start(storeDir: string): Promise<{ server: FlotillaProcess; nc: NatsConnection }> {
    const server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
    this.running.push(server);
    const nc = await connect({ servers: server.url, reconnect: false });
    return { server, nc };
  }

  /** SIGKILL and wait until the process is gone (the store directory is then free to reopen). */
  async killHard(server: FlotillaProcess): Promise<void> {
    const exited = new Promise<void>((resolve) => server.proc.once('exit', () => resolve()));
    server.proc.kill('SIGKILL');
    await exited;
    await server.stop(); // only removes the helper's own temp dir now
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.running.map((s) => s.stop().catch(() => undefined)));
    for (const d of this.storeDirs) rmSync(d, { recursive: true, force: true });
  }
}

/** nats-server 2.9 exits 1 on SIGTERM once JetStream is on; Flotilla must exit 0. */
export const EXPECT_CLEAN_EXIT = process.env['E2E_SERVER'] !== 'nats-server';

/** The error a call that must fail rejects with (throws when it succeeds). */
export async function rejectionOf(p: Promise<unknown>): Promise<NatsError> {
  try {
    await p;
  } catch (e) {
    return e as NatsError;
  }
  throw new Error('expected the call to fail');
}
