// Core NATS through the real `nats` client against the real binary.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, headers, type NatsConnection, type Msg, ErrorCode, type NatsError } from 'nats';
import { startFlotilla, type FlotillaProcess, sleep } from './helpers/flotilla-process.js';

let server: FlotillaProcess;
const conns: NatsConnection[] = [];

async function client(opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, reconnect: false, ...opts });
  conns.push(nc);
  return nc;
}

async function collect(sub: AsyncIterable<Msg>, count: number, timeoutMs = 3_000): Promise<Msg[]> {
  const out: Msg[] = [];
  const timer = sleep(timeoutMs).then(() => 'timeout' as const);
  const it = sub[Symbol.asyncIterator]();
  while (out.length < count) {
    const next = await Promise.race([it.next(), timer]);
    if (next === 'timeout' || next.done) break;
    out.push(next.value);
  }
  return out;
}

const text = (m: Msg): string => new TextDecoder().decode(m.data);

beforeAll(async () => {
  server = await startFlotilla();
});

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  expect(await server.stop()).toBe(0);
});

describe('core pub/sub with the nats client', () => {
  it('connects and learns the server from INFO', async () => {
    const nc = await client();
    expect(nc.info?.version).toMatch(/^2\.11\./);
    expect(nc.info?.headers).toBe(true);
    expect(nc.info?.max_payload).toBe(1024 * 1024);
    expect(nc.info?.proto).toBe(1);
  });

  it('delivers published messages to a subscriber in order', async () => {
    const nc = await client();
    const sub = nc.subscribe('orders.new', { max: 100 });
    for (let i = 0; i < 100; i++) nc.publish('orders.new', `m${i}`);
    const msgs = await collect(sub, 100);
    expect(msgs.map(text)).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`));
    expect(msgs[0]!.subject).toBe('orders.new');
  });

  it('matches * and > wildcards and delivers once per matching subscription', async () => {
    const pub = await client();
    const nc = await client();
    const star = nc.subscribe('a.*.c');
    const gt = nc.subscribe('a.>');
    const exact = nc.subscribe('a.b.c');
    await nc.flush();
    pub.publish('a.b.c', 'one');
    pub.publish('a.x.c', 'two');
    pub.publish('a.b.c.d', 'three');
    pub.publish('b.b.c', 'none');
    await pub.flush();
    expect((await collect(star, 2)).map(text)).toEqual(['one', 'two']);
    expect((await collect(gt, 3)).map(text)).toEqual(['one', 'two', 'three']);
    // Only one of the four publishes matches the literal subscription.
    expect((await collect(exact, 2, 300)).map(text)).toEqual(['one']);
  });

  it('gives each message to one member of a queue group and spreads the load', async () => {
    const pub = await client();
    const a = await client();
    const b = await client();
    const counts = [0, 0];
    const plain: string[] = [];
    a.subscribe('work', { queue: 'workers', callback: () => counts[0]!++ });
    b.subscribe('work', { queue: 'workers', callback: () => counts[1]!++ });
    b.subscribe('work', { callback: (_e, m) => plain.push(text(m)) });
    await a.flush();
    await b.flush();
    for (let i = 0; i < 200; i++) pub.publish('work', `${i}`);
    await pub.flush();
    const deadline = Date.now() + 3_000;
    while (counts[0]! + counts[1]! < 200 && Date.now() < deadline) await sleep(10);
    expect(counts[0]! + counts[1]!).toBe(200);
    expect(counts[0]).toBeGreaterThan(50);
    expect(counts[1]).toBeGreaterThan(50);
    expect(plain).toHaveLength(200);
  });

  it('answers requests through a responder', async () => {
    const responder = await client();
    responder.subscribe('math.double', {
      callback: (_e, m) => m.respond(String(Number(text(m)) * 2)),
    });
    await responder.flush();
    const nc = await client();
    const replies = await Promise.all([1, 2, 3].map((n) => nc.request('math.double', String(n), { timeout: 2_000 })));
    expect(replies.map(text)).toEqual(['2', '4', '6']);
  });

  it('rejects a request with no responders (503) immediately', async () => {
    const nc = await client();
    const started = Date.now();
    const err = (await nc.request('nobody.home', 'x', { timeout: 5_000 }).catch((e: unknown) => e)) as NatsError;
    expect(err.code).toBe(ErrorCode.NoResponders);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('carries headers, repeated keys and case intact', async () => {
    const nc = await client();
    const sub = nc.subscribe('with.headers', { max: 1 });
    const h = headers();
    h.append('X-Trace', 'abc');
    h.append('Multi', 'one');
    h.append('Multi', 'two');
    nc.publish('with.headers', 'body', { headers: h });
    const [m] = await collect(sub, 1);
    expect(text(m!)).toBe('body');
    expect(m!.headers?.get('X-Trace')).toBe('abc');
    expect(m!.headers?.values('Multi')).toEqual(['one', 'two']);
  });

  it('enforces max_payload on the client from INFO, and on the server on the wire', async () => {
    const nc = await client();
    const big = new Uint8Array(1024 * 1024 + 1);
    expect(() => nc.publish('big', big)).toThrow(/MAX_PAYLOAD_EXCEEDED|payload/i);
    const sub = nc.subscribe('big.ok', { max: 1 });
    nc.publish('big.ok', new Uint8Array(1024 * 1024));
    const [m] = await collect(sub, 1, 5_000);
    expect(m!.data.length).toBe(1024 * 1024);
  });

  it('auto-unsubscribes after max messages', async () => {
    const nc = await client();
    const sub = nc.subscribe('limited', { max: 3 });
    await nc.flush();
    for (let i = 0; i < 10; i++) nc.publish('limited', `${i}`);
    const msgs = await collect(sub, 10, 500);
    expect(msgs.map(text)).toEqual(['0', '1', '2']);
  });

  it('server side UNSUB max counts already delivered messages', async () => {
    const nc = await client();
    const got: string[] = [];
    const sub = nc.subscribe('limited2', { callback: (_e, m) => got.push(text(m)) });
    nc.publish('limited2', 'a');
    await nc.flush();
    sub.unsubscribe(2); // one delivered already: one more allowed
    nc.publish('limited2', 'b');
    nc.publish('limited2', 'c');
    await nc.flush();
    await sleep(100);
    expect(got).toEqual(['a', 'b']);
  });

  it('drains: pending messages are delivered before the connection closes', async () => {
    const pub = await client();
    const nc = await client();
    const got: string[] = [];
    nc.subscribe('drain.me', { callback: (_e, m) => got.push(text(m)) });
    await nc.flush();
    for (let i = 0; i < 50; i++) pub.publish('drain.me', `${i}`);
    await pub.flush();
    await nc.drain();
    expect(got).toHaveLength(50);
    expect(nc.isClosed()).toBe(true);
  });

  it('does not echo a connection its own messages when echo is off', async () => {
    const quiet = await client({ noEcho: true });
    const other = await client();
    const own: string[] = [];
    const theirs: string[] = [];
    quiet.subscribe('echo.test', { callback: (_e, m) => own.push(text(m)) });
    other.subscribe('echo.test', { callback: (_e, m) => theirs.push(text(m)) });
    await quiet.flush();
    await other.flush();
    quiet.publish('echo.test', 'from-quiet');
    other.publish('echo.test', 'from-other');
    await quiet.flush();
    await other.flush();
    await sleep(50);
    expect(own).toEqual(['from-other']);
    expect(theirs.sort()).toEqual(['from-other', 'from-quiet']);
  });
});

describe('CONNECT options through the nats client', () => {
  it('verbose: the server acknowledges ops and delivery still works', async () => {
    const nc = await client({ verbose: true });
    const sub = nc.subscribe('verbose.x', { max: 2 });
    nc.publish('verbose.x', 'a');
    nc.publish('verbose.x', 'b');
    expect((await collect(sub, 2)).map(text)).toEqual(['a', 'b']);
    expect(nc.isClosed()).toBe(false);
  });

  it('pedantic: a wildcard publish subject is refused, the connection stays usable', async () => {
    const nc = await client({ pedantic: true });
    const sub = nc.subscribe('ped.>', { max: 1 });
    nc.publish('ped.*', 'wild');
    nc.publish('ped.ok', 'literal');
    const msgs = await collect(sub, 1);
    // Outside pedantic mode 'ped.*' would reach 'ped.>' (routed literally); here it is refused.
    expect(msgs.map((m) => m.subject)).toEqual(['ped.ok']);
    expect(nc.isClosed()).toBe(false);
  });
});
