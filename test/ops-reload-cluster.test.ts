// `kill -HUP` of every node of a three-node JetStream cluster while a client publishes to an R3 stream: each
// node reloads its config (a user added, ping_interval changed) without dropping a client the new config
// still allows and without losing an acknowledged message. E2E_SERVER=nats-server runs the same against it.
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { addStream, failoverWindowBoundMs, readStream, useJsCluster, type JsCluster, type JsClusterNode } from './helpers/js-cluster.js';
import { AckedPublisher, ackProblems } from './helpers/js-cluster-publisher.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(20);
const dir = mkdtempSync(join(tmpdir(), 'flotilla-reload-cluster-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const confOf = (name: string): string => join(dir, `${name}.conf`);
// Credential-less clients (the cluster helper's) connect as `app`.
// Everything in the file, as a nats-server deployment is written (nats-server 2.9.10's reload does not
// re-apply most flags: it refuses, or restarts JetStream).
const base = (n: JsClusterNode, all: readonly JsClusterNode[], portsDir: string): string =>
  [
    `server_name: ${n.name}`,
    `listen: "127.0.0.1:${n.clientPort}"`,
    `http: "127.0.0.1:${n.httpPort}"`,
    `ports_file_dir: "${portsDir}"`,
    `jetstream { store_dir: "${n.storeDir}" }`,
    `cluster { name: RELOAD, listen: "127.0.0.1:${n.clusterPort}", routes: [ ${all.map((x) => `"nats://127.0.0.1:${x.clusterPort}"`).join(', ')} ] }`,
    'no_auth_user: app',
    '',
  ].join('\n');
const confBefore = (b: string): string => `${b}authorization { users = [ {user: app, password: app} ] }\n`;
const confAfter = (b: string): string => `${b}authorization { users = [ {user: app, password: app}, {user: ops, password: ops} ] }\nping_interval: "1m"\n`;
const bases = new Map<string, string>();

let cluster!: JsCluster;
useJsCluster(
  {
    size: 3,
    clusterName: 'RELOAD',
    argsOf: (n, all, portsDir) => {
      bases.set(n.name, base(n, all, portsDir));
      writeFileSync(confOf(n.name), confBefore(bases.get(n.name)!));
      return ['-c', confOf(n.name)];
    },
  },
  (c) => (cluster = c),
);

const RELOADED = 'Reloaded server configuration';
const count = (text: string, needle: string): number => text.split(needle).length - 1;

it('kill -HUP of every node under R3 publishes drops no allowed client and loses no acknowledged message', async () => {
  const { jsm, js } = await cluster.client('n1');
  await addStream(jsm, { name: 'RELOADED', subjects: ['reload.>'], num_replicas: 3 });
  // One watcher per node: any disconnect of an allowed client is counted.
  const disconnects: string[] = [];
  const watchers: NatsConnection[] = [];
  for (const n of cluster.nodes) {
    const nc = await cluster.connect(n.name);
    watchers.push(nc);
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'disconnect' || s.type === 'error') disconnects.push(`${n.name}: ${s.type} ${String(s.data)}`);
    })();
  }
  const publisher = new AckedPublisher(js, { subject: 'reload.x', prefix: 'hup', maxMessages: 600, paceMs: 5 }).start();
  await publisher.waitForMoreAcks(20, 30_000);
  for (const n of cluster.nodes) {
    const before = count(n.output(), RELOADED);
    writeFileSync(confOf(n.name), confAfter(bases.get(n.name)!));
    n.proc!.kill('SIGHUP');
    await until(() => count(n.output(), RELOADED) > before, 15_000, `${n.name}'s reload`);
    expect(n.output()).not.toContain('Failed to reload server configuration');
    await publisher.waitForMoreAcks(10, 30_000);
  }
  await publisher.stop();
  expect(publisher.giveUpError).toBeNull();
  // a reload does not stall the stream: no wait for an ack beyond a (load-aware) failover bound
  const { boundMs, load } = failoverWindowBoundMs();
  const { gapMs } = publisher.longestGapMs();
  expect(gapMs, `longest gap without an ack at load ${load}`).toBeLessThan(boundMs);
  expect(publisher.acks.length).toBeGreaterThanOrEqual(50);
  const content = await readStream(jsm, 'RELOADED');
  expect(ackProblems(publisher.acks, content, publisher.attempted)).toEqual([]);
  expect(disconnects).toEqual([]);
  for (const nc of watchers) {
    expect(nc.isClosed()).toBe(false);
    await nc.flush();
  }
  // the added user logs in on every node without a restart
  for (const n of cluster.nodes) {
    const ops = await connect({ servers: n.url, user: 'ops', pass: 'ops', reconnect: false });
    await ops.flush();
    await ops.close();
  }
}, 120_000);
