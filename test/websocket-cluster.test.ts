// In a cluster, a WebSocket client's INFO lists every node's websocket listener as connect_urls (the TCP
// clients keep the TCP ones), and a ws client on one node reaches a ws subscriber on another. Also passes
// with E2E_SERVER=nats-server (2.9.10).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { RawWebSocket, websocketPort } from './helpers/raw-websocket.js';
import { sleep } from './helpers/flotilla-process.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-ws-cluster-'));
const nodes: ClusterNodeProcess[] = [];
afterAll(async () => {
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

async function wsNode(name: string, routes: string[]): Promise<ClusterNodeProcess> {
  const conf = join(dir, `${name}.conf`);
  writeFileSync(conf, 'websocket { host: 127.0.0.1, port: -1, no_tls: true }\n');
  const n = await startNode({ name, clusterName: 'wsc', routes, extraArgs: ['-c', conf], natsServer: AGAINST_NATS_SERVER });
  nodes.push(n);
  return n;
}

async function wsClient(n: ClusterNodeProcess, name: string): Promise<RawWebSocket> {
  const ws = await RawWebSocket.open(websocketPort(n));
  expect(ws.response?.status).toBe(101);
  await ws.waitFor(/^INFO \{.*\} ?\r\n/);
  ws.sendText(`CONNECT {"verbose":false,"pedantic":false,"name":"${name}"}\r\nPING\r\n`);
  await ws.waitFor(/PONG\r\n/);
  return ws;
}

/** connect_urls of the last INFO the client got (the first, or an async one after the cluster changed). */
function lastConnectUrls(ws: RawWebSocket): string[] {
  const infos = [...ws.text.matchAll(/INFO (\{.*?\}) ?\r\n/g)].map((m) => JSON.parse(m[1]!) as { connect_urls?: string[] });
  return [...(infos.at(-1)?.connect_urls ?? [])].sort();
}

describe('websocket in a cluster', () => {
  it("ws clients get the nodes' websocket URLs in connect_urls, and messages cross the route", async () => {
    const n1 = await wsNode('n1', []);
    const n2 = await wsNode('n2', [`127.0.0.1:${n1.clusterPort}`]);
    await waitForMesh([n1, n2]);
    const want = [`127.0.0.1:${websocketPort(n1)}`, `127.0.0.1:${websocketPort(n2)}`].sort();
    const sub = await wsClient(n2, 'sub');
    const deadline = Date.now() + 10_000;
    while (JSON.stringify(lastConnectUrls(sub)) !== JSON.stringify(want) && Date.now() < deadline) {
      // a fresh client sees the current set in its first INFO
      const probe = await wsClient(n1, 'probe');
      const urls = lastConnectUrls(probe);
      probe.close();
      if (JSON.stringify(urls) === JSON.stringify(want)) break;
      await sleep(100);
    }
    const fresh = await wsClient(n1, 'fresh');
    expect(lastConnectUrls(fresh)).toEqual(want);
    // /varz lists the same set as ws_connect_urls (nats-server's Varz.WSConnectURLs)
    const varz = (await (await fetch(`http://127.0.0.1:${n1.httpPort}/varz`)).json()) as { ws_connect_urls?: string[] };
    expect([...(varz.ws_connect_urls ?? [])].sort()).toEqual(want);
    sub.sendText('SUB across 1\r\nPING\r\n');
    await sub.waitFor(/PONG\r\n[^]*PONG\r\n/);
    // interest reaches n1 through the route: publish until it arrives (bounded)
    for (let i = 0; i < 50 && !/MSG across 1 2\r\nhi\r\n/.test(sub.text); i++) {
      fresh.sendText('PUB across 2\r\nhi\r\n');
      await sleep(100);
    }
    expect(sub.text).toMatch(/MSG across 1 2\r\nhi\r\n/);
    sub.close();
    fresh.close();
  });
});
