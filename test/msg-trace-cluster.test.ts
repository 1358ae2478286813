// Message tracing (ADR-41) across a three-node cluster with the stock client: the origin's event counts its
// hops and has a route egress per peer (kind 1, the peer's name, its hop id); each peer publishes its own
// event, its request carrying that Nats-Trace-Hop, its ingress the route from the origin. No nats-server run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers, StringCodec, type Msg, type NatsConnection, type Subscription } from 'nats';
import { awaitInterest, startCluster, stopAll, type ClusterNodeProcess } from './helpers/cluster-process.js';

const sc = StringCodec();

interface TraceEventJson {
  server: { name: string };
  request: { header?: Record<string, string[]> };
  hops?: number;
  events: Array<Record<string, unknown>>;
}

const iterators = new WeakMap<Subscription, AsyncIterator<Msg>>();
async function next(sub: Subscription): Promise<Msg> {
  let it = iterators.get(sub);
  if (it === undefined) iterators.set(sub, (it = sub[Symbol.asyncIterator]()));
  const r = await it.next();
  if (r.done === true) throw new Error(`subscription on ${sub.getSubject()} ended`);
  return r.value;
}

/** `n` events from the trace subscription, by the name of the server that sent each. */
async function eventsByServer(sub: Subscription, n: number): Promise<Map<string, TraceEventJson>> {
  const byServer = new Map<string, TraceEventJson>();
  for (let i = 0; i < n; i++) {
    const e = JSON.parse(sc.decode((await next(sub)).data)) as TraceEventJson;
    byServer.set(e.server.name, e);
  }
  return byServer;
}

describe('message tracing, three nodes', () => {
  let nodes: ClusterNodeProcess[] = [];
  let conns: NatsConnection[] = [];

  beforeAll(async () => {
    nodes = await startCluster(3, 'trace');
    conns = await Promise.all(nodes.map((n) => connect({ servers: n.url, name: `sub-${n.name}`, reconnect: false })));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(conns.map((c) => c.close()));
    await stopAll(nodes);
  });

  async function tracedFanOut(subject: string, dest: string, traceOnly: boolean): Promise<{ events: Map<string, TraceEventJson>; subs: Subscription[] }> {
    const [c1, c2, c3] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const subs = [c2.subscribe(subject), c3.subscribe(subject)];
    const traces = c1.subscribe(dest);
    await Promise.all(conns.map((c) => c.flush()));
    await awaitInterest(c2, [c1]);
    await awaitInterest(c3, [c1]);
    await awaitInterest(c1, [c2, c3]);
    const h = headers();
    h.set('Nats-Trace-Dest', dest);
    if (traceOnly) h.set('Nats-Trace-Only', 'true');
    c1.publish(subject, sc.encode('routed'), { headers: h });
    return { events: await eventsByServer(traces, 3), subs };
  }

  it('the origin counts its hops and names each peer; each peer sends its own event under its hop', async () => {
    const [c1, c2, c3] = conns as [NatsConnection, NatsConnection, NatsConnection];
    const { events, subs } = await tracedFanOut('fan.out', 'trace.cluster', false);
    expect([...events.keys()].sort()).toEqual(['n1', 'n2', 'n3']);
    const origin = events.get('n1')!;
    expect(origin.hops).toBe(2);
    expect(origin.events[0]).toMatchObject({ type: 'in', kind: 0, cid: c1.info!.client_id, name: 'sub-n1', acc: '$G', subj: 'fan.out' });
    const routeEgress = origin.events.slice(1);
    expect(routeEgress).toHaveLength(2);
    for (const e of routeEgress) expect(e).toEqual({ type: 'eg', ts: expect.any(String), kind: 1, cid: 0, name: expect.any(String), hop: expect.any(String) });
    expect(routeEgress.map((e) => e['hop']).sort()).toEqual(['1', '2']);
    const hopOf = new Map(routeEgress.map((e) => [e['name'] as string, e['hop'] as string]));
    expect([...hopOf.keys()].sort()).toEqual(['n2', 'n3']);
    for (const [name, conn] of [['n2', c2], ['n3', c3]] as const) {
      const e = events.get(name)!;
      expect(e.hops).toBeUndefined();
      expect(e.request.header!['Nats-Trace-Hop']).toEqual([hopOf.get(name)]);
      expect(e.request.header!['Nats-Trace-Dest']).toEqual(['trace.cluster']);
      expect(e.events).toEqual([
        { type: 'in', ts: expect.any(String), kind: 1, cid: 0, name: 'n1', acc: '$G', subj: 'fan.out' },
        { type: 'eg', ts: expect.any(String), kind: 0, cid: conn.info!.client_id, name: `sub-${name}`, sub: 'fan.out' },
      ]);
    }
    for (const sub of subs) {
      const m = await next(sub);
      expect(sc.decode(m.data)).toBe('routed');
      expect(m.headers?.get('Nats-Trace-Dest')).toBe('trace.cluster');
    }
  }, 60_000);

  it('Nats-Trace-Only across routes: every node reports its egress, no subscriber gets the message', async () => {
    const [c1] = conns as [NatsConnection];
    const { events, subs } = await tracedFanOut('fan.only', 'trace.only', true);
    expect(events.get('n1')!.hops).toBe(2);
    for (const name of ['n2', 'n3']) expect(events.get(name)!.events.map((e) => e['type'])).toEqual(['in', 'eg']);
    c1.publish('fan.only', sc.encode('plain'));
    for (const sub of subs) expect(sc.decode((await next(sub)).data)).toBe('plain');
  }, 60_000);
});
