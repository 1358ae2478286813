// `npm start` (scripts/start-cluster.js): three nodes that form a cluster, log lines prefixed with node
// names, and every node stopped cleanly on SIGINT. Run on free port ranges instead of 4222/8222/6222.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { freePortRange, waitForHttp200 } from './ops-ports.js';

const SCRIPT = fileURLToPath(new URL('../scripts/start-cluster.js', import.meta.url));

describe('npm start (scripts/start-cluster.js)', () => {
  it('runs a 3-node cluster with prefixed logs and stops every node on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-ops-start-'));
    const [clientPort, httpPort, clusterPort] = [await freePortRange(3), await freePortRange(3), await freePortRange(3)];
    const proc = spawn(
      process.execPath,
      [SCRIPT, '--no-build', '--data', join(dir, 'data'), '--client-port', String(clientPort), '--http-port', String(httpPort), '--cluster-port', String(clusterPort)],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 3; i++) await waitForHttp200(`http://127.0.0.1:${httpPort + i}/healthz`, 30_000);
      // Every node routes to the other two.
      const deadline = Date.now() + 15_000;
      let routes: number[] = [];
      while (Date.now() < deadline) {
        routes = await Promise.all([0, 1, 2].map(async (i) => ((await (await fetch(`http://127.0.0.1:${httpPort + i}/routez`)).json()) as { num_routes: number }).num_routes));
        if (routes.every((n) => n === 2)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(routes).toEqual([2, 2, 2]);
      // A client on n1 reaches a subscriber on n3.
      const a = await connect({ servers: `127.0.0.1:${clientPort}` });
      const b = await connect({ servers: `127.0.0.1:${clientPort + 2}` });
      const sub = b.subscribe('hello', { max: 1 });
      await b.flush();
      const got = (async () => {
        for await (const m of sub) return new TextDecoder().decode(m.data);
        return '';
      })();
      for (let i = 0; i < 50 && !(await Promise.race([got.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))])); i++) a.publish('hello', 'world');
      expect(await got).toBe('world');
      await a.close();
      await b.close();

      expect(out).toContain(`n1: nats://127.0.0.1:${clientPort}`);
      expect(out).toContain(`monitoring http://127.0.0.1:${httpPort + 2}/`);
      expect(out).toMatch(/^\[n2\] \{.*"msg":"server is ready"/m);
      expect(readdirSync(join(dir, 'data')).sort()).toEqual(['n1', 'n2', 'n3']);
      proc.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(out).toContain('all nodes stopped');
      expect(out.match(/"msg":"shutting down"/g)?.length).toBe(3);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
