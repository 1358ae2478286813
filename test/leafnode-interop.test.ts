// Leaf nodes against the real nats-server 2.9 (/usr/sbin/nats-server) both ways, and Flotilla to Flotilla:
// interest and messages cross the link, queue groups deliver once across both sides, requests get replies.
import { describe, it, expect } from 'vitest';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';
import { reserveRandomPort } from './helpers/port-reservation.js';
import { useNatsServerProcesses } from './helpers/nats-server-processes.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const servers = useConfServers('leafnode');
const natsServers = useNatsServerProcesses();
const port = reserveRandomPort;

async function natsServer(conf: string, clientPort: number, probe: { user?: string; pass?: string } = {}): Promise<void> {
  natsServers.spawn(servers.writeConf(conf));
  await until(async () => {
    try {
      const nc = await connect({ port: clientPort, reconnect: false, ...probe });
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
  await crossed(leaf, hub, 'mark.1');
  for (let i = 0; i < 50; i++) hub.publish('work', sc.encode(String(i)));
  await crossed(hub, leaf, 'mark.2'); // the link keeps order: anything for the leaf's member came first
  expect(hubGot).toBe(50); // local member preferred, none crossed
  expect(leafGot).toBe(0);
  // with no member left on the hub side, every message crosses to the leaf's, once
  qh.unsubscribe();
  await hub.flush();
  await until(async () => {
    hub.publish('work', sc.encode('probe'));
    await hub.flush();
    return leafGot > 0;
  }, 15_000, 'the leaf member serving', 100);
  await crossed(hub, leaf, 'mark.3');
  const before = leafGot;
  for (let i = 0; i < 50; i++) hub.publish('work', sc.encode(String(i)));
  await crossed(hub, leaf, 'mark.4');
  expect(leafGot - before).toBe(50);
  expect(hubGot).toBe(50);
  ql.unsubscribe();
}

/** A marker published by `pub` until `sub` has it: everything `pub` sent before it crossed too. */
async function crossed(pub: NatsConnection, sub: NatsConnection, subject: string): Promise<void> {
  await deliverOnce(pub, sub, subject);
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
    const leafConf = `leafnodes { reconnect: 1, remotes: [ { url: "nats-leaf://127.0.0.1:${hubLeaf}" } ] }`;
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

  it('a second link from the same server into the same account gets nats-server\'s duplicate error', async () => {
    const hubLeaf = port();
    const hub = await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}" }`);
    const url = `nats-leaf://127.0.0.1:${hubLeaf}`;
    const leafClient = port();
    await natsServer(`port: ${leafClient}\nleafnodes { remotes: [ { url: "${url}" }, { url: "${url}" } ] }`, leafClient);
    await until(() => hub.output().includes('Duplicate Remote LeafNode Connection') || null, 20_000, 'the duplicate refused', 100);
  }, 60_000);

  it('a ring (A leaf of B, B leaf of A) is detected with nats-server\'s loop error, Flotilla and nats-server', async () => {
    for (const other of ['flotilla', 'nats-server'] as const) {
      const aLeaf = port();
      const bLeaf = port();
      const a = await servers.serverWith(`leafnodes { listen: "127.0.0.1:${aLeaf}", remotes: [ { url: "nats-leaf://127.0.0.1:${bLeaf}" } ] }`);
      const bConf = `leafnodes { listen: "127.0.0.1:${bLeaf}", remotes: [ { url: "nats-leaf://127.0.0.1:${aLeaf}" } ] }`;
      const b = other === 'flotilla' ? await servers.serverWith(bConf) : null;
      if (b === null) {
        const bClient = port();
        await natsServer(`port: ${bClient}\n${bConf}`, bClient);
      }
      const loop = /Loop detected for leafnode account=\\?"\$G\\?"/;
      await until(() => loop.test(a.output()) || (b !== null && loop.test(b.output())), 20_000, `the loop with ${other}`, 100);
    }
  }, 90_000);

  it('account binding on both sides: the hub user account, the remote local account', async () => {
    for (const leafKind of ['flotilla', 'nats-server'] as const) {
      const hubLeaf = port();
      const hub = await servers.serverWith(
        `accounts { A: { users: [ { user: a, password: a } ] }, B: { users: [ { user: b, password: b } ] } }\n` +
          `leafnodes { listen: "127.0.0.1:${hubLeaf}", authorization { users: [ { user: leafy, password: s3cret, account: A } ] } }`,
      );
      const leafConf =
        `accounts { L: { users: [ { user: l, password: l } ] }, M: { users: [ { user: m, password: m } ] } }\n` +
        `leafnodes { remotes: [ { url: "nats-leaf://leafy:s3cret@127.0.0.1:${hubLeaf}", account: L } ] }`;
      let leafPort: number;
      if (leafKind === 'flotilla') leafPort = (await servers.serverWith(leafConf)).port;
      else {
        leafPort = port();
        await natsServer(`port: ${leafPort}\n${leafConf}`, leafPort, { user: 'l', pass: 'l' });
      }
      const a = await connect({ port: hub.port, user: 'a', pass: 'a' });
      const b = await connect({ port: hub.port, user: 'b', pass: 'b' });
      const l = await connect({ port: leafPort, user: 'l', pass: 'l' });
      const m = await connect({ port: leafPort, user: 'm', pass: 'm' });
      servers.conns.push(a, b, l, m);
      let strayB = 0;
      let strayM = 0;
      b.subscribe('acct.>', { callback: () => strayB++ });
      m.subscribe('acct.>', { callback: () => strayM++ });
      await b.flush();
      await m.flush();
      expect(await deliverOnce(a, l, 'acct.down')).toMatch(/^hello/);
      expect(await deliverOnce(l, a, 'acct.up')).toMatch(/^hello/);
      await a.flush();
      await l.flush();
      expect(strayB).toBe(0); // other accounts on either side see nothing of the link
      expect(strayM).toBe(0);
    }
  }, 90_000);

  it('a leaf attached to one node of a Flotilla cluster gets what is published on another node', async () => {
    const [c1, c2, leafPort] = [port(), port(), port()];
    const route = (p: number): string => `routes: [ "nats://127.0.0.1:${p}" ]`;
    const n1 = await servers.serverWith(`server_name: n1\ncluster { name: lc, listen: "127.0.0.1:${c1}", ${route(c2)} }\nleafnodes { listen: "127.0.0.1:${leafPort}" }`);
    const n2 = await servers.serverWith(`server_name: n2\ncluster { name: lc, listen: "127.0.0.1:${c2}", ${route(c1)} }`);
    const leaf = await servers.serverWith(`leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }`);
    const [nc1, nc2, lc] = [await conn(n1.port), await conn(n2.port), await conn(leaf.port)];
    expect(await deliverOnce(nc2, lc, 'cl.down')).toMatch(/^hello/); // n2 → route → n1 → leaf
    expect(await deliverOnce(lc, nc1, 'cl.up')).toMatch(/^hello/);
  }, 60_000);

  it('bad operations on the leaf port get nats-server\'s -ERR and the link closes', async () => {
    const hubLeaf = port();
    await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}" }`);
    const { createConnection } = await import('node:net');
    const exchange = async (send: string): Promise<string> => {
      const sock = createConnection({ port: hubLeaf, host: '127.0.0.1' });
      let text = '';
      sock.on('data', (d) => (text += d.toString()));
      const closed = new Promise((r) => sock.on('close', r));
      await until(() => text.startsWith('INFO '), 10_000, 'INFO');
      sock.write(send);
      await closed;
      return text;
    };
    expect(await exchange('BOGUS stuff\r\n')).toContain("-ERR 'Authorization Violation'"); // before CONNECT
    expect(await exchange('CONNECT {}\r\nBOGUS stuff\r\n')).toContain("-ERR 'Unknown Protocol Operation'");
  }, 30_000);

  it("a leaf that does not authenticate within authorization.timeout gets nats-server's -ERR 'Authentication Timeout'", async () => {
    const hubLeaf = port();
    await servers.serverWith(`leafnodes { listen: "127.0.0.1:${hubLeaf}", authorization { user: lf, password: pw, timeout: 0.5 } }`);
    const { createConnection } = await import('node:net');
    const sock = createConnection({ port: hubLeaf, host: '127.0.0.1' });
    let text = '';
    sock.on('data', (d) => (text += d.toString()));
    const startedMs = Date.now();
    await new Promise((r) => sock.on('close', r));
    const elapsedMs = Date.now() - startedMs;
    expect(text).toContain("-ERR 'Authentication Timeout'");
    // the configured half second, not the link's own 10 s bound
    expect(elapsedMs).toBeLessThan(5_000);
  }, 30_000);
});
