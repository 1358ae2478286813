// `npm start` when a node cannot bind its port: every node is stopped and the script says which node failed
// and why (the node's own error), exiting 1 — no half-started cluster left running.
import { afterAll, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRange } from './ops-ports.js';

const SCRIPT = fileURLToPath(new URL('../scripts/start-cluster.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flotilla-ops-start-bind-'));
let blocker: Server | null = null;
afterAll(() => {
  blocker?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a node whose client port is taken stops every node, naming the node and the reason', async () => {
  const [clientPort, httpPort, clusterPort] = [await freePortRange(3), await freePortRange(3), await freePortRange(3)];
  // n2's client port is taken.
  blocker = createServer();
  await new Promise<void>((resolve) => blocker!.listen(clientPort + 1, '127.0.0.1', resolve));
  const proc = spawn(
    process.execPath,
    [SCRIPT, '--no-build', '--data', join(dir, 'data'), '--client-port', String(clientPort), '--http-port', String(httpPort), '--cluster-port', String(clusterPort)],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 90_000);
    proc.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  expect(code, out).toBe(1);
  expect(out).toMatch(/\[n2\] could not start \(code 1\): .*EADDRINUSE.*; stopping every node/);
  expect(out).toContain('startup failure: stopping 3 node(s)');
  // n1 and n3 were stopped: their client ports are free again.
  for (const port of [clientPort, clientPort + 2]) {
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
  }
}, 120_000);
