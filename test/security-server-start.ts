// startFlotilla for the security tests, tolerating one harness race: the server writes its ports file
// with a plain writeFileSync, so the harness can read it empty ("Unexpected end of JSON input") on a
// loaded machine. Then the half-started process (found by the pid in the ports file name) is stopped and
// the start retried. (Reported to the lead: an atomic write in ports-file.ts removes the race.)
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFlotilla, sleep, type FlotillaProcess, type StartOptions } from './helpers/flotilla-process.js';

const START_ATTEMPTS = 3;

export async function startServer(opts: StartOptions = {}): Promise<FlotillaProcess> {
  for (let attempt = 1; ; attempt++) {
    const portsDir = mkdtempSync(join(tmpdir(), 'flotilla-sec-ports-'));
    try {
      const server = await startFlotilla({ ...opts, portsDir });
      const stop = server.stop;
      server.stop = async () => {
        const code = await stop();
        rmSync(portsDir, { recursive: true, force: true });
        return code;
      };
      return server;
    } catch (err) {
      if (attempt >= START_ATTEMPTS || !(err instanceof SyntaxError)) throw err;
      for (const name of readdirSync(portsDir)) {
        const pid = Number(/_(\d+)\.ports$/.exec(name)?.[1]);
        if (pid > 0) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
      rmSync(portsDir, { recursive: true, force: true });
      await sleep(50);
    }
  }
}
