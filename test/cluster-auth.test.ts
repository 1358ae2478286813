// Cluster authentication with real processes: three nodes sharing a route secret (config file and
// --cluster/--routes URL credentials) form a cluster and route messages, while nodes with a wrong secret
// or none are refused, logged, kept out of /routez and given nothing; a mutual-TLS cluster forms with
// certificates made in the test and refuses a node whose certificate comes from another CA. The secret
// appears in no log, /varz or /routez.
import { describe, it, expect, afterEach } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { awaitInterest, startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { makeClusterCertificates } from './helpers/cluster-certificates.js';
import { untilEvery } from './helpers/until.js';

/** Polls every 25 ms, as this file was written with. */
const until = untilEvery(25);

const enc = new TextEncoder();
const dec = new TextDecoder();
const PASSWORD = 'Route-Pa55-q7Zk';
const started: ClusterNodeProcess[] = [];
const conns: NatsConnection[] = [];

afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.close().catch(() => undefined)));
  await stopAll(started.splice(0));
});

async function connectTo(n: ClusterNodeProcess): Promise<NatsConnection> {
  const nc = await connect({ servers: n.url, reconnect: false, ignoreClusterUpdates: true });
  conns.push(nc);
  return nc;
}

async function monitor(n: ClusterNodeProcess, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${n.httpPort}${path}`);
  return res.text();
}

async function routeNames(n: ClusterNodeProcess): Promise<string[]> {
  const routez = JSON.parse(await monitor(n, '/routez')) as { routes: Array<{ remote_name: string }> };
  return routez.routes.map((r) => r.remote_name).sort();
}

/** Starts a node from a config file written into a fresh directory. */
async function startFromConfig(name: string, conf: string): Promise<ClusterNodeProcess> {
  const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'flotilla-auth-conf-'));
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, conf);
  const node = await startNode({ name, clusterName: '', rawClusterArgs: ['-c', file] });
  started.push(node);
  return node;
}

/** Counts what a subscriber gets on `subject`. */
function collect(nc: NatsConnection, subject: string): string[] {
  const got: string[] = [];
  nc.subscribe(subject, { callback: (_e, m) => got.push(dec.decode(m.data)) });
  return got;
}

describe('cluster secret', () => {
  it('three nodes with the secret route messages; wrong or missing secrets are refused, logged and get nothing', async () => {
    const n1 = await startFromConfig(
      'n1',
      `server_name: n1\ncluster {\n  name: sec\n  listen: "127.0.0.1:-1"\n  authorization { user: route, password: "${PASSWORD}" }\n}\n`,
    );
    const seed = `127.0.0.1:${n1.clusterPort}`;
    const flagsFor = (name: string, creds: string) => [
      '-n', name, '--cluster_name', 'sec',
      '--cluster', `nats://${creds}127.0.0.1:-1`,
      '--routes', `nats://${creds}${seed}`,
    ];
    const [n2, n3] = await Promise.all(
      ['n2', 'n3'].map((name) => startNode({ name, clusterName: 'sec', rawClusterArgs: flagsFor(name, `route:${PASSWORD}@`) })),
    );
    started.push(n2!, n3!);
    await waitForMesh([n1, n2!, n3!]);

    const wrong = await startNode({ name: 'rogue-wrong', clusterName: 'sec', rawClusterArgs: flagsFor('rogue-wrong', 'route:guessed@') });
    started.push(wrong);
    const none = await startNode({ name: 'rogue-none', clusterName: 'sec', rawClusterArgs: flagsFor('rogue-none', '') });
    started.push(none);
    await until(() => /refusing route: cluster secret mismatch/.test(n1.output()), 10_000, 'the wrong-secret refusal');
    await until(() => /refusing route: peer presented no cluster secret/.test(n1.output()), 10_000, 'the no-secret refusal');
    expect(n1.output()).toMatch(/"peer":"rogue-wrong".*refusing route: cluster secret mismatch|refusing route: cluster secret mismatch.*"peer":"rogue-wrong"/);
    // The rogue checks n1's proof with its own wrong secret, so it refuses (and logs) as well.
    await until(() => /cluster secret mismatch|route refused by peer/.test(wrong.output()), 10_000, 'the wrong-secret node to log');
    await until(() => /auth_required/.test(none.output()), 10_000, 'the no-secret node to log its refusal');

    const [c1, c2, c3, cw, cn] = await Promise.all([n1, n2!, n3!, wrong, none].map(connectTo));
    const onN2 = collect(c2!, 'auth.>');
    const onWrong = collect(cw!, '>');
    const onNone = collect(cn!, '>');
    await awaitInterest(c2!, [c1!, c3!]);
    // Subscribers on the rogue nodes have had every chance to register interest by now.
    await sleep(300);
    for (let i = 0; i < 20; i++) {
      c1!.publish('auth.a', enc.encode(`n1-${i}`));
      c3!.publish('auth.b', enc.encode(`n3-${i}`));
    }
    // The rogues publish too: none of it may reach the good nodes.
    cw!.publish('auth.evil', enc.encode('from-wrong'));
    cn!.publish('auth.evil', enc.encode('from-none'));
    await Promise.all([c1, c3, cw, cn].map((c) => c!.flush()));
    await until(() => onN2.length >= 40, 10_000, 'routed messages on n2');
    await sleep(300);
    expect(onN2.filter((m) => m.startsWith('n1-'))).toEqual(Array.from({ length: 20 }, (_, i) => `n1-${i}`));
    expect(onN2.filter((m) => m.startsWith('n3-'))).toEqual(Array.from({ length: 20 }, (_, i) => `n3-${i}`));
    expect(onN2).toHaveLength(40);
    expect(onWrong.filter((m) => !m.startsWith('from-'))).toEqual([]);
    expect(onNone.filter((m) => !m.startsWith('from-'))).toEqual([]);

    for (const n of [n1, n2!, n3!]) expect(await routeNames(n)).toEqual(['n1', 'n2', 'n3'].filter((x) => x !== n.name));
    for (const r of [wrong, none]) expect(await routeNames(r)).toEqual([]);

    const everything = [n1, n2!, n3!, wrong, none].map((n) => n.output());
    for (const n of [n1, n2!, n3!, wrong, none]) everything.push(await monitor(n, '/varz'), await monitor(n, '/routez'));
    for (const text of everything) expect(text).not.toContain(PASSWORD);
  }, 60_000);
});

describe('cluster mutual TLS', () => {
  it('forms with certificates from the cluster CA and refuses a node whose certificate another CA signed', async () => {
    const certs = makeClusterCertificates();
    const confFor = (name: string, cert: { certFile: string; keyFile: string }, routes: string[]) =>
      `server_name: ${name}\ncluster {\n  name: tls\n  listen: "127.0.0.1:-1"\n` +
      (routes.length > 0 ? `  routes: [${routes.map((r) => `"nats://${r}"`).join(', ')}]\n` : '') +
      `  tls { cert_file: "${cert.certFile}", key_file: "${cert.keyFile}", ca_file: "${certs.caFile}", verify: true, timeout: 2 }\n}\n`;
    const t1 = await startFromConfig('t1', confFor('t1', certs.node('t1'), []));
    const seed = `127.0.0.1:${t1.clusterPort}`;
    const [t2, t3] = await Promise.all(['t2', 't3'].map((n) => startFromConfig(n, confFor(n, certs.node(n), [seed]))));
    await waitForMesh([t1, t2!, t3!]);

    const rogue = await startFromConfig('rogue', confFor('rogue', certs.rogue, [seed]));
    await until(() => /refusing route: TLS handshake failed/.test(t1.output()), 10_000, 'the TLS refusal on t1');
    // A node with no TLS at all fails the handshake too.
    const plain = await startNode({ name: 'plain', clusterName: 'tls', routes: [seed] });
    started.push(plain);
    await until(() => (t1.output().match(/refusing route: TLS handshake failed/g) ?? []).length >= 2, 10_000, 'the second TLS refusal');

    const [c1, c3, cr, cp] = await Promise.all([t1, t3!, rogue, plain].map(connectTo));
    const onT3 = collect(c3!, 'tls.x');
    const onRogue = collect(cr!, 'tls.x');
    const onPlain = collect(cp!, 'tls.x');
    await awaitInterest(c3!, [c1!]);
    await sleep(200);
    for (let i = 0; i < 10; i++) c1!.publish('tls.x', enc.encode(String(i)));
    await c1!.flush();
    await until(() => onT3.length === 10, 10_000, 'routed messages over TLS');
    await sleep(300);
    expect(onT3).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
    expect(onRogue).toEqual([]);
    expect(onPlain).toEqual([]);
    expect(await routeNames(t1)).toEqual(['t2', 't3']);
    expect(await routeNames(rogue)).toEqual([]);
    expect(await routeNames(plain)).toEqual([]);
  }, 60_000);
});
