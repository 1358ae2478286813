// Leaf nodes against the real nats-server 2.9 (/usr/sbin/nats-server) both ways, and Flotilla to Flotilla:
// interest and messages cross the link, queue groups deliver once across both sides, requests get replies.
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { reservePort } from './helpers/port-reservation.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const servers = useConfServers('leafnode');
const natsServers: ChildProcess[] = [];
afterAll(async () => {
  for (const p of natsServers) {
    if (p.exitCode === null) {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await exited;
    }
  }
});

function port(): number {
  for (;;) {
    const p = 20000 + Math.floor(Math.random() * 20000);
    if (reservePort(p)) return p;
  }
}

async function natsServer(conf: string, clientPort: number): Promise<void> {
  const proc = spawn('/usr/sbin/nats-server', ['-c', servers.writeConf(conf)], { stdio: 'ignore' });
  natsServers.push(proc);
  await until(async () => {
    try {
      const nc = await connect({ port: clientPort, reconnect: false });
      await nc.close();
      return true;
    } catch {
      return false;
    }
  }, 15_000, 'nats-server up', 50);
}

async function conn(p: number): Promise<NatsConnection> {
  const nc = await connect({ port: p });
  servers.conns.push(nc);
  return nc;
}

/** Publishes until the subscriber side has the interest (it crosses the link asynchronously). */
async function deliverOnce(pub: NatsConnection, sub: NatsConnection, subject: string): Promise<string> {
  const s = sub.subscribe(subject);
  await sub.flush();
  const got = (async () => {
    for await (const m of s) return sc.decode(m.data);
    return '';
  })();
  let n = 0;
  const timer = setInterval(() => pub.publish(subject, sc.encode(`hello ${++n}`)), 100);
  try {
    return await Promise.race([got, new Promise<string>((_, rej) => setTimeout(() => rej(new Error('no message')), 15_000))]);
  } finally {
    clearInterval(timer);
    s.unsubscribe();
  }
}

async function linkChecks(hubPort: number, leafPort: number): Promise<void> {
  const hub = await conn(hubPort);
  const leaf = await conn(leafPort);
  expect(await deliverOnce(hub, leaf, 'to.leaf')).toMatch(/^hello \d+$/);
  expect(await deliverOnce(leaf, hub, 'to.hub')).toMatch(/^hello \d+$/);
  // request/reply across the link, the reply subject crossing back
  const responder = hub.subscribe('svc.echo', { callback: (_e, m) => m.respond(sc.encode(`echo ${sc.decode(m.data)}`)) });
  await hub.flush();
  const reply = await until(async () => {
    try {
      return await leaf.request('svc.echo', sc.encode('ping'), { timeout: 1000 });
    } catch {
      return null;
    }
  }, 15_000, 'reply across the leaf', 100);
  expect(sc.decode(reply.data)).toBe('echo ping');
  responder.unsubscribe();
  // a queue group with a member on each side: each message goes to exactly one member, the local one
  let hubGot = 0;
  let leafGot = 0;
  const qh = hub.subscribe('work', { queue: 'q', callback: () => hubGot++ });
  const ql = leaf.subscribe('work', { queue: 'q', callback: () => leafGot++ });
  await hub.flush();
  await leaf.flush();
  await until(async () => {
    hub.publish('work.probe');
    const r = await leaf.request('work', sc.encode('probe'), { timeout: 500, noMux: true }).catch(() => null);
    return r === null; // nothing answers: just give interest time; checked below by counts
  }, 5_000, 'settle', 200).catch(() => undefined);
  hubGot = 0;
  leafGot = 0;
  for (let i = 0; i < 50; i++) hub.publish('work', sc.encode(String(i)));
  await hub.flush();
  await until(() => hubGot + leafGot >= 50, 10_000, 'queue deliveries');
  await leaf.flush();
  await hub.flush();
  expect(hubGot + leafGot).toBe(50);
  expect(hubGot).toBe(50); // local member preferred
  qh.unsubscribe();
  ql.unsubscribe();
}

describe('leafnodes', () => {
  it('Flotilla as a leaf of a nats-server hub', async () => {
    const hubClient = port();
    const hubLeaf = port();
    await natsServer(`port: ${hubClient}\nleafnodes { listen: "127.0.0.1:${hubLeaf}" }`, hubClient);
    const leaf = await servers.serverWith(`leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${hubLeaf}" } ] }`);
    await linkChecks(hubClient, leaf.port);
  }, 90_000);

  it('a nats-server leaf on a Flotilla hub, with user/password', async () => {
    const hubLeaf = port();
    const hub = await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}", authorization { user: leafy, password: s3cret } }`);
    const leafClient = port();
    await natsServer(`port: ${leafClient}\nleafnodes { remotes: [ { url: "nats-leaf://leafy:s3cret@127.0.0.1:${hubLeaf}" } ] }`, leafClient);
    await linkChecks(hub.port, leafClient);
    const leafz = await until(async () => {
      const r = (await (await fetch(`http://127.0.0.1:${hub.httpPort}/leafz`)).json()) as { leafnodes: number; leafs: { account: string }[] };
      return r.leafnodes === 1 ? r : null;
    }, 10_000, '/leafz');
    expect(leafz.leafs[0]!.account).toBe('$G');
  }, 90_000);

  it('Flotilla to Flotilla, and a leaf restart restores interest', async () => {
    const hubLeaf = port();
    const hub = await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}" }`);
    const leafConf = `leafnodes { reconnect: "100ms", remotes: [ { url: "nats-leaf://127.0.0.1:${hubLeaf}" } ] }`;
    const leaf = await servers.serverWith(leafConf);
    const hc = await conn(hub.port);
    const lc = await conn(leaf.port);
    expect(await deliverOnce(hc, lc, 'ff.down')).toMatch(/^hello/);
    expect(await deliverOnce(lc, hc, 'ff.up')).toMatch(/^hello/);
    await leaf.stop();
    const leaf2 = await servers.serverWith(leafConf);
    const lc2 = await conn(leaf2.port);
    expect(await deliverOnce(hc, lc2, 'ff.again')).toMatch(/^hello/);
  }, 90_000);

  it('a bad operation on the leaf port gets nats-server\'s -ERR and the link closes', async () => {
    const hubLeaf = port();
    await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}" }`);
    const { createConnection } = await import('node:net');
    const sock = createConnection({ port: hubLeaf, host: '127.0.0.1' });
    let text = '';
    sock.on('data', (d) => (text += d.toString()));
    const closed = new Promise((r) => sock.on('close', r));
    await until(() => text.startsWith('INFO '), 10_000, 'INFO');
    sock.write('BOGUS stuff\r\n');
    await closed;
    expect(text).toContain("-ERR 'Unknown Protocol Operation'");
  }, 30_000);
});
