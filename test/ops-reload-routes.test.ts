// Cluster routes added by a config reload: two nodes that do not know each other mesh once one of them gets
// the other in `cluster { routes }` and SIGHUP; a client on each then reaches the other. E2E_SERVER=nats-server
// runs the same against nats-server.
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { freePort } from './helpers/cluster-process.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(50);
const dir = mkdtempSync(join(tmpdir(), 'flotilla-reload-routes-'));
const servers: FlotillaProcess[] = [];
const conns: NatsConnection[] = [];
afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const conf = (name: string, clusterPort: number, routes: number[]): string =>
  `server_name: ${name}\ncluster { name: ROUTES, listen: "127.0.0.1:${clusterPort}", routes: [ ${routes.map((p) => `"nats://127.0.0.1:${p}"`).join(', ')} ] }\n`;

async function routesOf(s: FlotillaProcess): Promise<number> {
  const routez = (await (await fetch(`http://127.0.0.1:${s.httpPort}/routez`)).json()) as { num_routes: number };
  return routez.num_routes;
}

it('a route added by reload is dialed: the nodes mesh and route messages without a restart', async () => {
  const [p1, p2] = [await freePort(), await freePort()];
  const [f1, f2] = [join(dir, 'n1.conf'), join(dir, 'n2.conf')];
  writeFileSync(f1, conf('n1', p1, []));
  writeFileSync(f2, conf('n2', p2, []));
  const n1 = await startFlotilla({ args: ['-c', f1] });
  servers.push(n1);
  const n2 = await startFlotilla({ args: ['-c', f2] });
  servers.push(n2);
  expect(await routesOf(n2)).toBe(0);
  const a = await connect({ servers: n1.url, reconnect: false });
  const b = await connect({ servers: n2.url, reconnect: false });
  conns.push(a, b);
  writeFileSync(f2, conf('n2', p2, [p1]));
  n2.proc.kill('SIGHUP');
  await until(async () => (await routesOf(n2)) === 1 && (await routesOf(n1)) === 1, 15_000, 'the route both ways');
  expect(n2.output()).not.toContain('Failed to reload server configuration');
  const got: string[] = [];
  b.subscribe('across', { callback: (_e, m) => got.push(m.string()) });
  await b.flush();
  // interest crosses the new route asynchronously: publish until the first message arrives (bounded)
  for (let i = 0; i < 100 && got.length === 0; i++) {
    a.publish('across', `m${i}`);
    await a.flush();
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(got.length).toBeGreaterThan(0);
  expect(a.isClosed() || b.isClosed()).toBe(false);

  // Removed again: n2 no longer dials n1 — after n1 restarts (same cluster port) the two stay apart.
  // (nats-server also closes the route at once; flotilla keeps a live link until it closes.)
  writeFileSync(f2, conf('n2', p2, []));
  n2.proc.kill('SIGHUP');
  await until(() => /Removed route/.test(n2.output()), 10_000, 'the route removal');
  await n1.stop();
  const again = await startFlotilla({ args: ['-c', f1] });
  servers.push(again);
  await new Promise((r) => setTimeout(r, 3_000));
  expect(await routesOf(n2)).toBe(0);
  expect(await routesOf(again)).toBe(0);
});
