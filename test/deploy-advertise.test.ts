// client_advertise / cluster_advertise / no_advertise on real processes, as a container deployment uses them:
// n1 advertises a public client address and a cluster address with its port; n3 routes only to n2 and must
// reach n1 through the cluster address n1 advertised (gossiped by n2); n2 has no_advertise, so its clients
// learn no other server and the other servers' clients do not learn n2. E2E_SERVER=nats-server runs the same flags against nats-server.
import { afterAll, expect, it } from 'vitest';
import { freePort, infoOf, startNode, stopAll, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { until } from './helpers/until.js';

const natsServer = process.env['E2E_SERVER'] === 'nats-server';
const nodes: ClusterNodeProcess[] = [];
afterAll(() => stopAll(nodes));

it('connect_urls carry client_advertise, peers dial cluster_advertise, no_advertise hides them', async () => {
  const p1 = await freePort();
  const n1 = await startNode({
    name: 'n1',
    clusterName: 'ADV',
    clusterPort: p1,
    natsServer,
    extraArgs: ['--client_advertise', 'edge.example:4999', '--cluster_advertise', `localhost:${p1}`],
  });
  nodes.push(n1);
  const n2 = await startNode({ name: 'n2', clusterName: 'ADV', routes: [`127.0.0.1:${p1}`], natsServer, extraArgs: ['--no_advertise'] });
  nodes.push(n2);
  const n3 = await startNode({ name: 'n3', clusterName: 'ADV', routes: [`127.0.0.1:${n2.clusterPort}`], natsServer });
  nodes.push(n3);

  // n3 knows n1's client URL only once it linked to n1, through the gossiped cluster_advertise address.
  const urls = await until(async () => {
    const u = ((await infoOf(n3.port))['connect_urls'] as string[] | undefined) ?? [];
    return u.includes('edge.example:4999') ? u : null;
  }, 30_000, "n3 to list n1's advertised client URL");
  expect([...urls].sort()).toEqual(['127.0.0.1:' + n3.port, 'edge.example:4999'].sort());
  // n1's own clients get its advertised address too.
  expect((await infoOf(n1.port))['connect_urls']).toContain('edge.example:4999');
  // no_advertise: no connect_urls at all.
  expect(await infoOf(n2.port)).not.toHaveProperty('connect_urls');
}, 120_000);
