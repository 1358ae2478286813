// The modular nats.js 3.x clients (@nats-io/transport-node, /jetstream, /kv, /obj) against the real binary:
// stream and consumer management, publish with PubAck semantics, fetch/consume/next, ordered consumers,
// KV through Kvm and the object store through Objm.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Objm } from '@nats-io/obj';
import { startFlotilla, type FlotillaProcess, sleep } from './helpers/flotilla-process.js';

let server: FlotillaProcess;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

const enc = new TextEncoder();
const dec = new TextDecoder();

async function apiFailure(p: Promise<unknown>): Promise<JetStreamApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JetStreamApiError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'store'] });
  nc = await connect({ servers: server.url, reconnect: false });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  const code = await server.stop();
  // nats-server 2.9 exits 1 on SIGTERM once JetStream is on; Flotilla must exit cleanly
  if (process.env['E2E_SERVER'] !== 'nats-server') expect(code).toBe(0);
});

describe('modular clients: streams', () => {
  it('adds, inspects, updates, lists and deletes streams', async () => {
    const si = await jsm.streams.add({ name: 'MGMT', subjects: ['mgmt.>'] });
    expect(si.config.name).toBe('MGMT');
    expect(si.config.retention).toBe('limits');
    expect(si.config.storage).toBe('file');
    expect(si.state.messages).toBe(0);
    const updated = await jsm.streams.update('MGMT', { subjects: ['mgmt.>', 'extra.*'], max_msgs: 100 });
    expect(updated.config.subjects).toEqual(['mgmt.>', 'extra.*']);
    expect(updated.config.max_msgs).toBe(100);
    expect(await jsm.streams.names().next()).toContain('MGMT');
    const listed = await jsm.streams.list().next();
    expect(listed.find((s) => s.config.name === 'MGMT')?.config.max_msgs).toBe(100);
    expect(await jsm.streams.delete('MGMT')).toBe(true);
    const err = await apiFailure(jsm.streams.info('MGMT'));
    expect(err.message).toBe('stream not found');
    expect(err.code).toBe(10059);
    expect(err.status).toBe(404);
  });

  it('publishes with PubAcks, dedupes by message id, and checks expectations', async () => {
    await jsm.streams.add({ name: 'PUB', subjects: ['pub.>'] });
    const a1 = await js.publish('pub.a', enc.encode('one'));
    expect(a1).toMatchObject({ stream: 'PUB', seq: 1, duplicate: false });
    const a2 = await js.publish('pub.b', enc.encode('two'), { msgID: 'id-2' });
    const again = await js.publish('pub.b', enc.encode('two'), { msgID: 'id-2' });
    expect(again).toMatchObject({ stream: 'PUB', seq: a2.seq, duplicate: true });
    const wrong = await apiFailure(js.publish('pub.a', enc.encode('x'), { expect: { lastSequence: 1 } }));
    expect(wrong.code).toBe(10071);
    expect(wrong.message).toBe('wrong last sequence: 2');
    const ok = await js.publish('pub.a', enc.encode('three'), { expect: { lastSubjectSequence: 1, streamName: 'PUB' } });
    expect(ok.seq).toBe(3);
    const h = headers();
    h.set('Color', 'blue');
    await js.publish('pub.h', enc.encode('with header'), { headers: h });
    const sm = await jsm.streams.getMessage('PUB', { last_by_subj: 'pub.h' });
    expect(sm?.seq).toBe(4);
    expect(sm?.header.get('Color')).toBe('blue');
    expect(sm?.string()).toBe('with header');
    const si = await jsm.streams.info('PUB');
    expect(si.state).toMatchObject({ messages: 4, first_seq: 1, last_seq: 4 });
  });
});

describe('modular clients: consumers', () => {
  beforeAll(async () => {
    await jsm.streams.add({ name: 'WORK', subjects: ['work.>'] });
    for (let i = 1; i <= 50; i++) await js.publish(`work.${i % 2 === 0 ? 'even' : 'odd'}`, enc.encode(`job-${i}`));
  });

  it('fetches batches from a durable pull consumer and acks them', async () => {
    const ci = await jsm.consumers.add('WORK', { durable_name: 'fetcher', ack_policy: AckPolicy.Explicit });
    expect(ci.name).toBe('fetcher');
    expect(ci.num_pending).toBe(50);
    const c = await js.consumers.get('WORK', 'fetcher');
    const got: string[] = [];
    for (let round = 0; round < 10 && got.length < 50; round++) {
      const batch = await c.fetch({ max_messages: 25, expires: 2_000 });
      for await (const m of batch) {
        got.push(m.string());
        await m.ackAck();
      }
    }
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => `job-${i + 1}`));
    const after = await c.info();
    expect(after.num_pending).toBe(0);
    expect(after.num_ack_pending).toBe(0);
    expect(after.delivered.stream_seq).toBe(50);
    expect(after.ack_floor.stream_seq).toBe(50);
  });

  it('consumes continuously with a filter and sees new messages', async () => {
    await jsm.consumers.add('WORK', {
      durable_name: 'evens',
      ack_policy: AckPolicy.Explicit,
      filter_subject: 'work.even',
    });
    const c = await js.consumers.get('WORK', 'evens');
    const messages = await c.consume({ max_messages: 10 });
    const got: number[] = [];
    const reading = (async () => {
      for await (const m of messages) {
        got.push(m.seq);
        m.ack();
        if (got.length === 26) break;
      }
    })();
    for (let i = 0; i < 50 && got.length < 25; i++) await sleep(20);
    await js.publish('work.odd', enc.encode('late odd'));
    await js.publish('work.even', enc.encode('late even'));
    await Promise.race([reading, sleep(5_000)]);
    expect(got.length).toBe(26);
    expect(got.slice(0, 25)).toEqual(Array.from({ length: 25 }, (_, i) => 2 * (i + 1)));
    expect(got[25]).toBe(52);
    await messages.close();
  });

  it('next() returns one message, then null when nothing arrives before it expires', async () => {
    await jsm.consumers.add('WORK', {
      durable_name: 'single',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.Last,
    });
    const c = await js.consumers.get('WORK', 'single');
    const m = await c.next({ expires: 1_000 });
    expect(m?.seq).toBe(52);
    m?.ack();
    expect(await c.next({ expires: 1_000 })).toBeNull();
  });

  it('redelivers a nak-ed message with a higher delivery count', async () => {
    await jsm.consumers.add('WORK', { durable_name: 'naker', ack_policy: AckPolicy.Explicit, filter_subject: 'work.odd' });
    const c = await js.consumers.get('WORK', 'naker');
    const first = (await c.next({ expires: 1_000 })) as JsMsg;
    expect(first.info.deliveryCount).toBe(1);
    first.nak();
    // the nak travels as a plain publish; a pull may be served before it lands, so later messages can
    // come first — read (and ack) until the nak-ed one is back
    let again: JsMsg | null = null;
    for (let i = 0; i < 5 && again === null; i++) {
      const m = await c.next({ expires: 2_000 });
      if (m === null || m.seq === first.seq) again = m;
      else m.ack();
    }
    expect(again?.seq).toBe(first.seq);
    if (again === null) return;
    expect(again.info.deliveryCount).toBe(2);
    expect(again.info.redelivered).toBe(true);
    again.ack();
  });

  it('reads a stream with an ordered consumer', async () => {
    const oc = await js.consumers.get('WORK', { filter_subjects: 'work.odd' });
    const it = await oc.fetch({ max_messages: 26, expires: 2_000 });
    const seqs: number[] = [];
    for await (const m of it) seqs.push(m.seq);
    expect(seqs.slice(0, 25)).toEqual(Array.from({ length: 25 }, (_, i) => 2 * i + 1));
    expect(seqs[25]).toBe(51);
  });

  it('lists and deletes consumers; a missing consumer is `consumer not found`', async () => {
    const names = (await jsm.consumers.list('WORK').next()).map((ci) => ci.name).sort();
    expect(names).toEqual(expect.arrayContaining(['evens', 'fetcher', 'naker', 'single']));
    expect(await jsm.consumers.delete('WORK', 'single')).toBe(true);
    const err = await apiFailure(jsm.consumers.info('WORK', 'single'));
    expect(err.message).toBe('consumer not found');
    expect(err.code).toBe(10014);
  });
});

describe('modular clients: KV and object store', () => {
  it('uses a KV bucket through Kvm', async () => {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('modkv', { history: 3 });
    expect(await kv.put('a', 'one')).toBe(1);
    expect(await kv.create('b', 'two')).toBe(2);
    await expect(kv.create('b', 'again')).rejects.toThrow(/wrong last sequence/);
    expect(await kv.update('a', 'uno', 1)).toBe(3);
    expect((await kv.get('a'))?.string()).toBe('uno');
    const w = await kv.watch();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const e of w) {
        seen.push(`${e.key}=${e.operation}`);
        if (seen.length === 3) break;
      }
    })();
    for (let i = 0; i < 50 && seen.length < 2; i++) await sleep(20);
    await kv.delete('b');
    await Promise.race([watching, sleep(3_000)]);
    expect(seen).toEqual(['b=PUT', 'a=PUT', 'b=DEL']);
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    expect(keys).toEqual(['a']);
    const opened = await kvm.open('modkv');
    expect((await opened.get('a'))?.string()).toBe('uno');
    const st = await kv.status();
    expect(st.values).toBe(4); // a: 2 revisions (history 3), b: PUT + DEL
    const buckets = (await kvm.list().next()).map((s) => s.bucket);
    expect(buckets).toContain('modkv');
  });

  it('uses an object store through Objm', async () => {
    const objm = new Objm(nc);
    const os = await objm.create('modobj');
    const data = new Uint8Array(randomBytes(600 * 1024));
    const info = await os.putBlob({ name: 'data.bin', options: { max_chunk_size: 128 * 1024 } }, data);
    expect(info.chunks).toBe(5);
    expect(info.size).toBe(data.length);
    const back = await os.getBlob('data.bin');
    expect(Buffer.from(back!).equals(Buffer.from(data))).toBe(true);
    await os.putBlob({ name: 'small.txt' }, enc.encode('small'));
    expect((await os.list()).map((i) => i.name).sort()).toEqual(['data.bin', 'small.txt']);
    await os.delete('data.bin');
    expect(await os.get('data.bin')).toBeNull();
    expect(dec.decode((await (await objm.open('modobj')).getBlob('small.txt'))!)).toBe('small');
  });
});
