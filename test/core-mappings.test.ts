// Subject mappings (`mappings {}` at top level for the global account, and inside an account) with the stock
// client: literal and wildcard destinations ($N, {{wildcard(N)}}, '>'), hash partitions, weighted
// destinations, every transform function, per-account scope, and the mapped subject being what permissions check. With
// E2E_SERVER=nats-server every case but the refusals runs against nats-server 2.9.10.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connect, StringCodec, type NatsConnection, type Subscription } from 'nats';
import { FLOTILLA_NODE_ARGS, sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { fnv1a32 } from './helpers/fnv1a32.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const { conns, writeConf, serverWith } = useConfServers('mappings', { expectCleanExit: true });

async function login(s: FlotillaProcess, opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, ...opts });
  conns.push(nc);
  return nc;
}

/** Subjects (and payloads) a subscription got within a short linger after a flush. */
async function received(nc: NatsConnection, sub: Subscription, lingerMs = 150): Promise<string[]> {
  await nc.flush();
  await sleep(lingerMs);
  sub.unsubscribe();
  const got: string[] = [];
  for await (const m of sub) got.push(`${m.subject}:${sc.decode(m.data)}`);
  return got;
}

describe('subject mappings', () => {
  it('map a publish to a literal, a wildcard-placed or a ">" destination; the original subject gets nothing', async () => {
    const s = await serverWith(`
mappings {
  "foo": "bar"
  "orders.*.*": "shipped.$2.{{wildcard(1)}}"
  "in.>": "out.>"
}`);
    const nc = await login(s);
    const all = nc.subscribe('>');
    await nc.flush();
    nc.publish('foo', sc.encode('1'));
    nc.publish('orders.eu.42', sc.encode('2'));
    nc.publish('in.a.b.c', sc.encode('3'));
    nc.publish('other', sc.encode('4'));
    expect(await received(nc, all)).toEqual(['bar:1', 'shipped.42.eu:2', 'out.a.b.c:3', 'other:4']);
  });

  it('{{partition(n, N...)}} puts a subject in the bucket of the FNV-1a hash of the chosen tokens (partition(n): of the subject, 2.10+)', async () => {
    // nats-server 2.9 has only the form with token positions
    const whole = AGAINST_NATS_SERVER ? '' : '\n  "whole.*": "whole.{{partition(3)}}.{{wildcard(1)}}"';
    const s = await serverWith(`
mappings {
  "part.*.*": "part.{{partition(5,1,2)}}.{{wildcard(1)}}.{{wildcard(2)}}"${whole}
}`);
    const nc = await login(s);
    const sub = nc.subscribe('>');
    await nc.flush();
    const keys = ['a', 'bb', 'customer-17', 'x9', 'zz'];
    for (const k of keys) nc.publish(`part.${k}.7`, sc.encode(k));
    if (!AGAINST_NATS_SERVER) for (const k of keys) nc.publish(`whole.${k}`, sc.encode(k));
    const expected = [
      ...keys.map((k) => `part.${fnv1a32(`${k}7`) % 5}.${k}.7:${k}`),
      ...(AGAINST_NATS_SERVER ? [] : keys.map((k) => `whole.${fnv1a32(`whole.${k}`) % 3}.${k}:${k}`)),
    ];
    expect(await received(nc, sub)).toEqual(expected);
  });

  it('split, splitFromLeft/Right and sliceFromLeft/Right reshape a token; random(n) picks a bucket below n (2.10+)', async () => {
    const random = AGAINST_NATS_SERVER ? '' : '\n  "rnd.*": "rnd.{{random(3)}}.{{wildcard(1)}}"';
    const s = await serverWith(`
mappings {
  "sp.*": "sp.{{split(1,-)}}"
  "sl.*.*": "sl.{{splitFromLeft(1,2)}}.{{splitFromRight(2,1)}}"
  "cl.*": "cl.{{sliceFromLeft(1,2)}}"
  "cr.*.>": "cr.{{sliceFromRight(1,2)}}.>"${random}
}`);
    const nc = await login(s);
    const sub = nc.subscribe('>');
    await nc.flush();
    nc.publish('sp.-ab--cd-', sc.encode('1'));
    nc.publish('sl.abcd.xyz', sc.encode('2'));
    nc.publish('cl.abcde', sc.encode('3'));
    nc.publish('cr.abcde.t.u', sc.encode('4'));
    const rnd = AGAINST_NATS_SERVER ? 0 : 60;
    for (let i = 0; i < rnd; i++) nc.publish('rnd.k', sc.encode('r'));
    const got = await received(nc, sub);
    expect(got.slice(0, 4)).toEqual(['sp.ab.cd:1', 'sl.ab.cd.xy.z:2', 'cl.ab.cd.e:3', 'cr.a.bc.de.t.u:4']);
    const buckets = new Set(got.slice(4));
    expect(got.length - 4).toBe(rnd);
    if (!AGAINST_NATS_SERVER) {
      for (const b of buckets) expect(['rnd.0.k:r', 'rnd.1.k:r', 'rnd.2.k:r']).toContain(b);
      expect(buckets.size).toBeGreaterThan(1);
    }
  });

  it('weighted destinations split the publishes by weight; weights short of 100 keep the rest on the original subject', async () => {
    const s = await serverWith(`
mappings {
  "split": [ { destination: "split.a", weight: 50% }, { destination: "split.b", weight: "50%" } ]
  "some": [ { destination: "some.moved", weight: 30 } ]
}`);
    const nc = await login(s);
    const sub = nc.subscribe('>');
    await nc.flush();
    const N = 400;
    for (let i = 0; i < N; i++) nc.publish('split', sc.encode(''));
    for (let i = 0; i < N; i++) nc.publish('some', sc.encode(''));
    const got = await received(nc, sub, 300);
    const count = (subject: string) => got.filter((g) => g === `${subject}:`).length;
    expect(count('split.a') + count('split.b')).toBe(N);
    expect(count('split')).toBe(0);
    // Binomial(400, 0.5): 120..280 is more than 8 standard deviations wide.
    expect(count('split.a')).toBeGreaterThan(120);
    expect(count('split.b')).toBeGreaterThan(120);
    expect(count('some.moved') + count('some')).toBe(N);
    expect(count('some.moved')).toBeGreaterThan(60);
    expect(count('some.moved')).toBeLessThan(180);
  });

  it("an account's mappings apply to its own clients only; top-level mappings to the global account", async () => {
    const s = await serverWith(`
mappings { "g": "g.mapped" }
accounts {
  A: { users: [ { user: a, password: a } ], mappings: { "x": "x.mapped" } }
  B: { users: [ { user: b, password: b } ] }
}
no_auth_user: nobody
authorization { users: [ { user: nobody, password: nobody } ] }`);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const g = await login(s);
    const subs = [a.subscribe('>'), b.subscribe('>'), g.subscribe('>')];
    await Promise.all([a.flush(), b.flush(), g.flush()]);
    for (const nc of [a, b, g]) {
      nc.publish('x', sc.encode(''));
      nc.publish('g', sc.encode(''));
    }
    await Promise.all([b.flush(), g.flush()]);
    expect(await received(a, subs[0]!)).toEqual(['x.mapped:', 'g:']);
    expect(await received(b, subs[1]!)).toEqual(['x:', 'g:']);
    expect(await received(g, subs[2]!)).toEqual(['x:', 'g.mapped:']);
  });

  it("a service import's requests are mapped by the exporting account's mappings", async () => {
    const s = await serverWith(`
accounts {
  A: { users: [ { user: a, password: a } ], exports: [ { service: "svc.>" } ], mappings: { "svc.old": "svc.new" } }
  B: { users: [ { user: b, password: b } ], imports: [ { service: { account: A, subject: "svc.>" } } ] }
}`);
    const a = await login(s, { user: 'a', pass: 'a' });
    const b = await login(s, { user: 'b', pass: 'b' });
    const responder = a.subscribe('svc.>', { callback: (_err, m) => m.respond(sc.encode(`answered on ${m.subject}`)) });
    await a.flush();
    const reply = await b.request('svc.old', sc.encode(''), { timeout: 2_000 });
    expect(sc.decode(reply.data)).toBe('answered on svc.new');
    responder.unsubscribe();
  });

  it('permissions check the mapped subject: a publish allowed only on the destination goes through', async () => {
    const s = await serverWith(`
mappings { "public.in": "private.in" }
authorization { users: [
  { user: pub, password: pub, permissions: { publish: { allow: ["private.in"] } } }
  { user: sub, password: sub }
] }`);
    const sub = await login(s, { user: 'sub', pass: 'sub' });
    const pub = await login(s, { user: 'pub', pass: 'pub' });
    const all = sub.subscribe('>');
    await sub.flush();
    pub.publish('public.in', sc.encode('ok'));
    await pub.flush();
    expect(await received(sub, all)).toEqual(['private.in:ok']);
  });
});

describe.skipIf(AGAINST_NATS_SERVER)('subject mappings Flotilla does not implement', () => {
  async function startProblem(conf: string): Promise<string> {
    const child = spawn(process.execPath, [...FLOTILLA_NODE_ARGS, '-c', writeConf(conf), '-p', '-1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    return out;
  }

  it('refuse to start with a bad transform function (nats-server\'s text) or a cluster-scoped destination they name', async () => {
    expect(await startProblem('mappings { "a.*": "b.{{nope(1)}}" }')).toContain('invalid mapping destination: unknown function in {{nope(1)}}');
    expect(await startProblem('mappings { "a.*": "b.{{split(1)}}" }')).toContain('invalid mapping destination: not enough arguments passed to the function in {{split(1)}}');
    expect(await startProblem('mappings { "a": [ { destination: "b", weight: 100, cluster: "east" } ] }')).toContain("cluster-scoped mapping destinations ('cluster')");
    expect(await startProblem('mappings { "a": [ { destination: "b", weight: 60 }, { destination: "c", weight: 60 } ] }')).toContain('total weight needs to be <= 100');
  });
});
