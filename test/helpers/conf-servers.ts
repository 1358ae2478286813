// Servers started from config text, for one test file: each config is written to a file of the file's own
// temporary directory, and afterAll closes the connections the test registered, stops every server (exit
// code 0 expected from Flotilla; nats-server exits 1 on SIGTERM) and removes the directory.
import { afterAll, expect } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess, type StartOptions } from './flotilla-process.js';

export interface ConfServers {
  /** The file's temporary directory. */
  readonly dir: string;
  /** Connections closed in afterAll (push what the test opens). */
  readonly conns: NatsConnection[];
  writeConf(text: string): string;
  /** A server on `conf` (with `extra` start options, e.g. env), stopped in afterAll. */
  serverWith(conf: string, extra?: Omit<StartOptions, 'args'>): Promise<FlotillaProcess>;
}

/** `expectCleanExit`: assert exit code 0 on stop (never against nats-server). */
export function useConfServers(prefix: string, options: { expectCleanExit?: boolean } = {}): ConfServers {
  const dir = mkdtempSync(join(tmpdir(), `flotilla-${prefix}-`));
  const servers: FlotillaProcess[] = [];
  const conns: NatsConnection[] = [];
  const againstNatsServer = process.env['E2E_SERVER'] === 'nats-server';
  afterAll(async () => {
    await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
    for (const s of servers) {
      const code = await s.stop();
      if (options.expectCleanExit === true && !againstNatsServer) expect(code).toBe(0);
    }
    rmSync(dir, { recursive: true, force: true });
  });
  let confs = 0;
  const writeConf = (text: string): string => {
    const file = join(dir, `${prefix}-${++confs}.conf`);
    writeFileSync(file, `${text}\n`);
    return file;
  };
  return {
    dir,
    conns,
    writeConf,
    async serverWith(conf: string, extra: Omit<StartOptions, 'args'> = {}): Promise<FlotillaProcess> {
      const s = await startFlotilla({ ...extra, args: ['-c', writeConf(conf)] });
      servers.push(s);
      return s;
    },
  };
}
