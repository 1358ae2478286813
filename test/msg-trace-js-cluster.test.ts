// Message tracing's JetStream hop on a replicated stream (R3, three nodes, stock client): a traced publish on
// a node that does not lead the stream is routed to the leader, whose own event carries the `js` hop;
// Nats-Trace-Only is ruled on there and stored nowhere. No nats-server 2.9.10 run: it has no tracing.
import { describe, expect, it } from 'vitest';
import { headers, StringCodec, type Msg, type NatsConnection, type Subscription } from 'nats';
import { JsCluster, addStream, useJsCluster } from './helpers/js-cluster.js';

const sc = StringCodec();
let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'TRACEJS' }, (c) => (cluster = c));

interface TraceEventJson {
  server: { name: string };
  events: Array<Record<string, unknown>>;
}

/** Trace events until one from `server` came (bounded by the iterator's end and the test timeout). */
async function eventFrom(sub: Subscription, server: string): Promise<TraceEventJson> {
  for await (const m of sub as AsyncIterable<Msg>) {
    const e = JSON.parse(sc.decode(m.data)) as TraceEventJson;
    if (e.server.name === server) return e;
  }
  throw new Error('trace subscription ended');
}

async function publisherAwayFromLeader(stream: string): Promise<{ nc: NatsConnection; leader: string }> {
  const probe = await cluster.connect('n1');
  const info = await (await probe.jetstreamManager()).streams.info(stream);
  const leader = info.cluster!.leader!;
  const other = cluster.nodes.map((n) => n.name).find((n) => n !== leader)!;
  return { nc: await cluster.connect(other), leader };
}

function traced(dest: string, only = false): ReturnType<typeof headers> {
  const h = headers();
  h.set('Nats-Trace-Dest', dest);
  if (only) h.set('Nats-Trace-Only', 'true');
  return h;
}

describe('message tracing, replicated stream', () => {
  it('the leader\'s event has the js hop; the origin\'s names the route to it', async () => {
    const admin = await cluster.connect('n1');
    await addStream(await admin.jetstreamManager(), { name: 'TR3', subjects: ['tr3.>'], num_replicas: 3 });
    const { nc, leader } = await publisherAwayFromLeader('TR3');
    const traces = nc.subscribe('trace.r3');
    await nc.flush();
    const ack = await nc.jetstream().publish('tr3.a', sc.encode('x'), { headers: traced('trace.r3') });
    expect(ack.seq).toBe(1);
    const atLeader = await eventFrom(traces, leader);
    expect(atLeader.events[0]).toMatchObject({ type: 'in', kind: 1, acc: '$G', subj: 'tr3.a' });
    expect(atLeader.events.find((e) => e['type'] === 'js')).toEqual({ type: 'js', ts: expect.any(String), stream: 'TR3', subject: 'tr3.a' });
  }, 120_000);

  it('Nats-Trace-Only: the leader rules on it, nothing is stored', async () => {
    const { nc, leader } = await publisherAwayFromLeader('TR3');
    const jsm = await nc.jetstreamManager();
    const before = (await jsm.streams.info('TR3')).state.messages;
    const traces = nc.subscribe('trace.r3only');
    await nc.flush();
    nc.publish('tr3.b', sc.encode('x'), { headers: traced('trace.r3only', true) });
    const atLeader = await eventFrom(traces, leader);
    expect(atLeader.events.find((e) => e['type'] === 'js')).toEqual({ type: 'js', ts: expect.any(String), stream: 'TR3', subject: 'tr3.b' });
    await nc.jetstream().publish('tr3.c', sc.encode('after'));
    expect((await jsm.streams.info('TR3')).state.messages).toBe(before + 1);
  }, 120_000);
});
