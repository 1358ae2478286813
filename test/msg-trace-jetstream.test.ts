// Message tracing's JetStream hop (ADR-41) on one node with the stock client: a traced message a stream
// takes adds a `js` event (stream, subject, nointerest, error) and the event goes out once the stream's store
// answered; Nats-Trace-Only is ruled on and stored nowhere. No nats-server 2.9.10 run: it has no tracing.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { connect, headers, RetentionPolicy, StringCodec, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import { useConfServers } from './helpers/conf-servers.js';

const sc = StringCodec();
const { dir, conns, serverWith } = useConfServers('msg-trace-js', { expectCleanExit: true });

let nc: NatsConnection | null = null;
async function client(): Promise<NatsConnection> {
  if (nc !== null) return nc;
  const s = await serverWith(`jetstream { store_dir: "${join(dir, 'js')}" }`);
  nc = await connect({ servers: s.url, reconnect: false, name: 'js-tracer' });
  conns.push(nc);
  return nc;
}

function traced(dest: string, extra: Record<string, string> = {}): MsgHdrs {
  const h = headers();
  h.set('Nats-Trace-Dest', dest);
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  return h;
}

const iterators = new WeakMap<Subscription, AsyncIterator<Msg>>();
async function nextEvent(sub: Subscription): Promise<{ events: Array<Record<string, unknown>> }> {
  let it = iterators.get(sub);
  if (it === undefined) iterators.set(sub, (it = sub[Symbol.asyncIterator]()));
  const r = await it.next();
  if (r.done === true) throw new Error('trace subscription ended');
  return JSON.parse(sc.decode(r.value.data)) as { events: Array<Record<string, unknown>> };
}

describe('message tracing, JetStream hop', () => {
  it('a stored message: a js event with the stream and subject; the stored copy has tracing switched off', async () => {
    const c = await client();
    const jsm = await c.jetstreamManager();
    await jsm.streams.add({ name: 'TRACED', subjects: ['traced.>'] });
    const traces = c.subscribe('trace.js');
    await c.flush();
    const ack = await c.jetstream().publish('traced.one', sc.encode('v1'), { headers: traced('trace.js') });
    expect(ack.seq).toBe(1);
    const e = await nextEvent(traces);
    expect(e.events.map((x) => x['type'])).toEqual(['in', 'js']);
    expect(e.events[1]).toEqual({ type: 'js', ts: expect.any(String), stream: 'TRACED', subject: 'traced.one' });
    const stored = await jsm.streams.getMessage('TRACED', { seq: 1 });
    expect(stored.header.get('Nats-Trace-Dest')).toBe('trace disabled');
  });

  it('Nats-Trace-Only: the js event, no message stored and no PubAck', async () => {
    const c = await client();
    const jsm = await c.jetstreamManager();
    await jsm.streams.add({ name: 'ONLY', subjects: ['only.>'] });
    const traces = c.subscribe('trace.only');
    const acks = c.subscribe('ack.inbox');
    await c.flush();
    c.publish('only.one', sc.encode('x'), { headers: traced('trace.only', { 'Nats-Trace-Only': 'true' }), reply: 'ack.inbox' });
    const e = await nextEvent(traces);
    expect(e.events[1]).toEqual({ type: 'js', ts: expect.any(String), stream: 'ONLY', subject: 'only.one' });
    await c.flush();
    expect((await jsm.streams.info('ONLY')).state.messages).toBe(0);
    expect(acks.getReceived()).toBe(0);
  });

  it('a duplicate Nats-Msg-Id: the js event carries the error', async () => {
    const c = await client();
    const jsm = await c.jetstreamManager();
    await jsm.streams.add({ name: 'DEDUPE', subjects: ['dedupe.>'] });
    const js = c.jetstream();
    await js.publish('dedupe.one', sc.encode('x'), { msgID: 'id-1' });
    const traces = c.subscribe('trace.dup');
    await c.flush();
    const ack = await js.publish('dedupe.one', sc.encode('x'), { msgID: 'id-1', headers: traced('trace.dup') });
    expect(ack.duplicate).toBe(true);
    const e = await nextEvent(traces);
    expect(e.events[1]).toEqual({ type: 'js', ts: expect.any(String), stream: 'DEDUPE', subject: 'dedupe.one', error: 'msgid is duplicate' });
  });

  it('interest retention with no consumer: nointerest', async () => {
    const c = await client();
    const jsm = await c.jetstreamManager();
    await jsm.streams.add({ name: 'INTEREST', subjects: ['interest.>'], retention: RetentionPolicy.Interest });
    const traces = c.subscribe('trace.interest');
    await c.flush();
    c.publish('interest.one', sc.encode('x'), { headers: traced('trace.interest') });
    const e = await nextEvent(traces);
    expect(e.events[1]).toEqual({ type: 'js', ts: expect.any(String), stream: 'INTEREST', subject: 'interest.one', nointerest: true });
  });
});
