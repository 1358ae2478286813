// Message tracing (ADR-41) on one node with the stock client: a publish carrying Nats-Trace-Dest makes one
// trace event (nats-server 2.14's JSON) published to that subject in the publisher's account; Nats-Trace-Only
// traces without delivering. nats-server 2.9.10 has no tracing, so this file runs against Flotilla only.
import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { connect, headers, StringCodec, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import type { FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { until } from './helpers/until.js';

const sc = StringCodec();
const { conns, serverWith } = useConfServers('msg-trace', { expectCleanExit: true });

const CONF = `
mappings { "mapped.in": "mapped.out" }
authorization {
  users = [
    { user: open, password: open }
    { user: limited, password: limited, permissions: { publish: { deny: ["secret", "traces.denied"] } } }
  ]
}`;

let server: FlotillaProcess | null = null;
async function login(name: string, opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  server ??= await serverWith(CONF);
  const nc = await connect({ servers: server.url, reconnect: false, name, user: 'open', pass: 'open', ...opts });
  conns.push(nc);
  return nc;
}

function traceHeaders(dest: string, extra: Record<string, string> = {}): MsgHdrs {
  const h = headers();
  h.set('Nats-Trace-Dest', dest);
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  return h;
}

/** nats.js's header block for `h`: what msgsize counts besides the payload. */
function headerBlockBytes(h: MsgHdrs): number {
  let n = 'NATS/1.0\r\n'.length + 2;
  for (const [k, vs] of h) for (const v of vs) n += `${k}: ${v}\r\n`.length;
  return n;
}

/** nats.js allows one iterator per subscription: each subscription's is kept. */
const iterators = new WeakMap<Subscription, AsyncIterator<Msg>>();
async function next(sub: Subscription): Promise<Msg> {
  let it = iterators.get(sub);
  if (it === undefined) iterators.set(sub, (it = sub[Symbol.asyncIterator]()));
  const r = await it.next();
  if (r.done === true) throw new Error(`subscription on ${sub.getSubject()} ended`);
  return r.value;
}

interface TraceEventJson {
  server: { name: string; id: string; ver: string; seq: number; time: string };
  request: { header?: Record<string, string[]>; msgsize?: number };
  hops?: number;
  events: Array<Record<string, unknown>>;
}

async function event(sub: Subscription): Promise<TraceEventJson> {
  return JSON.parse(sc.decode((await next(sub)).data)) as TraceEventJson;
}

describe('message tracing, one node', () => {
  it('a traced publish: one event with server, request, ingress and an egress per delivery; the message keeps its headers', async () => {
    const subscriber = await login('sub-conn');
    const plain = subscriber.subscribe('orders.new');
    const queued = subscriber.subscribe('orders.*', { queue: 'q1' });
    await subscriber.flush();
    const publisher = await login('pub-conn');
    const traces = publisher.subscribe('trace.1');
    await publisher.flush();
    const h = traceHeaders('trace.1', { 'X-Other': 'v' });
    publisher.publish('orders.new', sc.encode('hello'), { headers: h });

    const e = await event(traces);
    expect(e.server.id).toBe(publisher.info!.server_id);
    expect(e.server.name).toBe(publisher.info!.server_name);
    expect(e.server.ver).toMatch(/^2\.\d+\.\d+/);
    expect(e.server.seq).toBeGreaterThan(0);
    expect(e.request).toEqual({ header: { 'Nats-Trace-Dest': ['trace.1'], 'X-Other': ['v'] }, msgsize: headerBlockBytes(h) + 5 });
    expect(e.hops).toBeUndefined();
    expect(e.events).toHaveLength(3);
    const [ingress, ...egress] = e.events;
    expect(ingress).toEqual({ type: 'in', ts: expect.any(String), kind: 0, cid: publisher.info!.client_id, name: 'pub-conn', acc: '$G', subj: 'orders.new' });
    expect(Date.parse(ingress!['ts'] as string)).toBeGreaterThan(Date.now() - 60_000);
    const cid = subscriber.info!.client_id;
    expect(egress).toEqual([
      { type: 'eg', ts: expect.any(String), kind: 0, cid, name: 'sub-conn', sub: 'orders.new' },
      { type: 'eg', ts: expect.any(String), kind: 0, cid, name: 'sub-conn', sub: 'orders.*', queue: 'q1' },
    ]);
    for (const sub of [plain, queued]) {
      const m = await next(sub);
      expect(sc.decode(m.data)).toBe('hello');
      expect(m.headers?.get('Nats-Trace-Dest')).toBe('trace.1');
      expect(m.headers?.get('X-Other')).toBe('v');
    }
  });

  it('Nats-Trace-Only (true or 1): the egress events are made, nothing is delivered', async () => {
    const subscriber = await login('only-sub');
    const sub = subscriber.subscribe('only.subject');
    await subscriber.flush();
    const publisher = await login('only-pub');
    const traces = publisher.subscribe('trace.only');
    await publisher.flush();
    for (const only of ['true', '1']) {
      publisher.publish('only.subject', sc.encode(`traced-${only}`), { headers: traceHeaders('trace.only', { 'Nats-Trace-Only': only }) });
      const e = await event(traces);
      expect(e.events.map((x) => x['type'])).toEqual(['in', 'eg']);
      expect(e.events[1]).toMatchObject({ kind: 0, cid: subscriber.info!.client_id, name: 'only-sub', sub: 'only.subject' });
      expect(e.request.header!['Nats-Trace-Only']).toEqual([only]);
    }
    // the subscriber's first message is the untraced one published after them
    publisher.publish('only.subject', sc.encode('plain'));
    expect(sc.decode((await next(sub)).data)).toBe('plain');
  });

  it('no subscriber: the event has only the ingress, and it is the one message on the trace subject', async () => {
    const publisher = await login('lonely');
    const traces = publisher.subscribe('trace.none');
    await publisher.flush();
    publisher.publish('nobody.here', sc.encode('x'), { headers: traceHeaders('trace.none') });
    const e = await event(traces);
    expect(e.events).toEqual([{ type: 'in', ts: expect.any(String), kind: 0, cid: publisher.info!.client_id, name: 'lonely', acc: '$G', subj: 'nobody.here' }]);
    await publisher.flush();
    expect(traces.getReceived()).toBe(1);
  });

  it('echo off: the publisher\'s own subscription gets an egress with the no-echo error', async () => {
    const publisher = await login('no-echo', { noEcho: true });
    const own = publisher.subscribe('echo.subject');
    const traces = publisher.subscribe('trace.echo');
    await publisher.flush();
    publisher.publish('echo.subject', sc.encode('x'), { headers: traceHeaders('trace.echo') });
    const e = await event(traces);
    expect(e.events[1]).toEqual({ type: 'eg', ts: expect.any(String), kind: 0, cid: publisher.info!.client_id, name: 'no-echo', sub: 'echo.subject', error: 'Not delivered because of no echo' });
    expect(own.getReceived()).toBe(0);
  });

  it('a subject mapping adds an sm event; the ingress keeps the published subject', async () => {
    const subscriber = await login('map-sub');
    subscriber.subscribe('mapped.out');
    await subscriber.flush();
    const publisher = await login('map-pub');
    const traces = publisher.subscribe('trace.map');
    await publisher.flush();
    publisher.publish('mapped.in', sc.encode('x'), { headers: traceHeaders('trace.map') });
    const e = await event(traces);
    expect(e.events.map((x) => x['type'])).toEqual(['in', 'sm', 'eg']);
    expect(e.events[0]).toMatchObject({ subj: 'mapped.in' });
    expect(e.events[1]).toEqual({ type: 'sm', ts: expect.any(String), to: 'mapped.out' });
    expect(e.events[2]).toMatchObject({ sub: 'mapped.out', name: 'map-sub' });
  });

  it('a publish the permissions deny: the ingress carries the violation; a denied trace destination: no event, no delivery', async () => {
    const watcher = await login('watcher');
    const traces = watcher.subscribe('traces.>');
    const secret = watcher.subscribe('secret');
    const other = watcher.subscribe('other.subject');
    await watcher.flush();
    const limited = await login('limited', { user: 'limited', pass: 'limited' });
    limited.publish('secret', sc.encode('x'), { headers: traceHeaders('traces.ok') });
    const e = await event(traces);
    expect(e.events).toEqual([
      { type: 'in', ts: expect.any(String), kind: 0, cid: limited.info!.client_id, name: 'limited', acc: '$G', subj: 'secret', error: 'Permissions Violation for Publish to "secret"' },
    ]);
    limited.publish('other.subject', sc.encode('denied-dest'), { headers: traceHeaders('traces.denied') });
    limited.publish('other.subject', sc.encode('after'));
    expect(sc.decode((await next(other)).data)).toBe('after');
    await watcher.flush();
    expect(traces.getReceived()).toBe(1);
    expect(secret.getReceived()).toBe(0);
  });

  it('Accept-Encoding on the traced message: gzip compresses the event (Content-Encoding), an unknown one says identity', async () => {
    const publisher = await login('gzip-pub');
    const traces = publisher.subscribe('trace.gzip');
    await publisher.flush();
    publisher.publish('gz.subject', sc.encode('x'), { headers: traceHeaders('trace.gzip', { 'Accept-Encoding': 'gzip' }) });
    const zipped = await next(traces);
    expect(zipped.headers?.get('Content-Encoding')).toBe('gzip');
    const e = JSON.parse(gunzipSync(zipped.data).toString()) as TraceEventJson;
    expect(e.events[0]).toMatchObject({ type: 'in', subj: 'gz.subject', name: 'gzip-pub' });
    publisher.publish('gz.subject', sc.encode('x'), { headers: traceHeaders('trace.gzip', { 'Accept-Encoding': 'br' }) });
    const plain = await next(traces);
    expect(plain.headers?.get('Content-Encoding')).toBe('identity');
    expect((JSON.parse(sc.decode(plain.data)) as TraceEventJson).request.header!['Accept-Encoding']).toEqual(['br']);
  });

  it('an invalid trace destination: the message is delivered, untraced', async () => {
    const nc = await login('invalid-dest');
    const sub = nc.subscribe('plain.subject');
    const all = nc.subscribe('>');
    await nc.flush();
    nc.publish('plain.subject', sc.encode('x'), { headers: traceHeaders('bad..dest') });
    const m = await next(sub);
    expect(m.headers?.get('Nats-Trace-Dest')).toBe('bad..dest');
    await nc.flush();
    await until(() => all.getReceived() >= 1, 10_000, 'the message on ">"');
    expect(all.getReceived()).toBe(1);
  });
});
