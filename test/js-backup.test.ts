// STREAM.SNAPSHOT and STREAM.RESTORE driven as the `nats` CLI (jsm.go) drives them: the snapshot's chunks are
// acked one by one to their reply subject until the empty `204` message; the restore sends every chunk as a
// request and an empty one last. A stream with deletes and a consumer with acks is backed up on one server and
// restored on another, then compared message by message. The same code runs against nats-server 2.9.10
// (E2E_SERVER=nats-server): nats-server→nats-server and Flotilla→Flotilla round trips prove the protocol.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy, StorageType, headers } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { rawGet, restore, snapshot } from './helpers/js-backup-client.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
/** 2.14 ends a snapshot with `NATS/1.0 204`; 2.9 with an empty message without a header. */
const END_CODE = AGAINST_NATS_SERVER ? undefined : 204;
const enc = new TextEncoder();
const dec = new TextDecoder();
const MESSAGES = 60;
const DELETED = [3, 7, 8, 9, 40];

let a: JetStreamServer;
let b: JetStreamServer;

beforeAll(async () => {
  a = await startJetStreamServer('flotilla-backup-a-');
  b = await startJetStreamServer('flotilla-backup-b-');
  await a.jsm.streams.add({ name: 'S', subjects: ['s.>'] });
  for (let i = 1; i <= MESSAGES; i++) {
    const h = headers();
    h.set('X-N', String(i));
    await a.js.publish(`s.${i % 5}`, enc.encode(`message ${i} `.padEnd(200, 'x')), { headers: h });
  }
  for (const seq of DELETED) await a.jsm.streams.deleteMessage('S', seq, seq % 2 === 0);
  await a.jsm.consumers.add('S', { durable_name: 'C', ack_policy: AckPolicy.Explicit, ack_wait: 60_000_000_000 });
  const batch = await a.js.fetch('S', 'C', { batch: 10, expires: 2000 });
  let n = 0;
  for await (const m of batch) {
    n++;
    // Acks 1..4 and the 7th delivered: an ack floor with one ack above it.
    if (n <= 4 || n === 7) m.ack();
  }
  await a.nc.flush();
  await new Promise((r) => setTimeout(r, 200));
}, 30_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

describe('snapshot on one server, restore on another', () => {
  it('restores every message, sequence, deleted range and the consumer state', async () => {
    const events: string[] = [];
    const adv = b.nc.subscribe('$JS.EVENT.ADVISORY.STREAM.>', { callback: (_e, m) => events.push(`${m.subject} ${JSON.parse(dec.decode(m.data)).type}`) });
    const advA = a.nc.subscribe('$JS.EVENT.ADVISORY.STREAM.>', { callback: (_e, m) => events.push(`${m.subject} ${JSON.parse(dec.decode(m.data)).type}`) });
    await a.nc.flush();
    await b.nc.flush();
    const original = await a.jsm.streams.info('S');
    const originalConsumer = await a.jsm.consumers.info('S', 'C');
    const snap = await snapshot(a.nc, 'S');
    expect(snap.response.config.name).toBe('S');
    expect(snap.response.state.messages).toBe(MESSAGES - DELETED.length);
    expect(snap.response.state.last_seq).toBe(MESSAGES);
    expect(snap.end.headers?.code).toBe(END_CODE);
    expect(snap.chunks.length).toBeGreaterThan(0);

    const { start, chunkReplies, result } = await restore(b.nc, 'S', { config: snap.response.config, state: snap.response.state }, snap.chunks);
    expect(start.type).toBe('io.nats.jetstream.api.v1.stream_restore_response');
    expect(start.deliver_subject).toMatch(/^\$JS\.SNAPSHOT\.RESTORE\.S\./);
    expect(chunkReplies.every((r) => r === '')).toBe(true);
    expect(result.type).toBe('io.nats.jetstream.api.v1.stream_create_response');
    expect(result.error).toBeUndefined();
    expect(result.state.messages).toBe(MESSAGES - DELETED.length);

    const restored = await b.jsm.streams.info('S');
    for (const k of ['messages', 'bytes', 'first_seq', 'last_seq', 'num_deleted', 'num_subjects', 'consumer_count'] as const) {
      expect(restored.state[k]).toEqual(original.state[k]);
    }
    for (let seq = 1; seq <= MESSAGES; seq++) {
      const x = await rawGet(a.nc, 'S', seq);
      const y = await rawGet(b.nc, 'S', seq);
      if (DELETED.includes(seq)) expect(y.error?.err_code).toBe(10037);
      expect(y).toEqual(x);
    }
    const c = await b.jsm.consumers.info('S', 'C');
    // last_active is when the consumer last delivered / saw an ack: a time, not state.
    const seqs = (x: { consumer_seq: number; stream_seq: number }) => ({ consumer_seq: x.consumer_seq, stream_seq: x.stream_seq });
    expect(seqs(c.delivered)).toEqual(seqs(originalConsumer.delivered));
    expect(seqs(c.ack_floor)).toEqual(seqs(originalConsumer.ack_floor));
    expect(c.delivered.stream_seq).toBe(14);
    expect(c.num_ack_pending).toBe(originalConsumer.num_ack_pending);
    expect(c.num_pending).toBe(originalConsumer.num_pending);
    expect(c.num_ack_pending).toBe(5);

    await new Promise((r) => setTimeout(r, 200));
    adv.unsubscribe();
    advA.unsubscribe();
    expect(events).toContain('$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.S io.nats.jetstream.advisory.v1.snapshot_create');
    expect(events).toContain('$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.S io.nats.jetstream.advisory.v1.snapshot_complete');
    expect(events).toContain('$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.S io.nats.jetstream.advisory.v1.restore_create');
    expect(events).toContain('$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.S io.nats.jetstream.advisory.v1.restore_complete');
  }, 30_000);

  it('a second restore of the same name is refused with 10130', async () => {
    const snap = await snapshot(a.nc, 'S');
    const { start } = await restore(b.nc, 'S', { config: snap.response.config, state: snap.response.state }, snap.chunks);
    expect(start.error).toEqual({ code: 400, err_code: 10130, description: 'stream name already in use, cannot restore' });
  });
});

// 2.9 has one fixed 8 MiB window and waits at most 10 ms for an ack; 2.11+ honour window_size (Flotilla: 2.14).
describe.skipIf(AGAINST_NATS_SERVER)('flow control', () => {
  it('holds back chunks beyond the window until they are acked', async () => {
    // 1 KiB chunks, 2 KiB window: two chunks in flight at most.
    const snap = await snapshot(a.nc, 'S', { chunk_size: 1024, window_size: 2048 }, 1000);
    expect(snap.beforeAcks).toBe(2);
    expect(snap.chunks.length).toBeGreaterThan(5);
    expect(snap.chunks.slice(0, -1).every((c) => c.length === 1024)).toBe(true);
    expect(snap.end.headers?.code).toBe(END_CODE);
  });
});

describe('jsck', () => {
  it('checks every message first and then streams the same archive', async () => {
    const plain = await snapshot(a.nc, 'S', { chunk_size: 4096 });
    const checked = await snapshot(a.nc, 'S', { chunk_size: 4096, jsck: true });
    expect(checked.end.headers?.code).toBe(END_CODE);
    expect(checked.response.state).toEqual(plain.response.state);
    expect(Buffer.concat(checked.chunks).length).toBeGreaterThan(0);
  });
});

describe('refusals', () => {
  it('snapshot: an invalid deliver subject 10015, a missing stream 10059, an empty request 10003', async () => {
    const req = async (subject: string, body: string): Promise<any> => JSON.parse(dec.decode((await a.nc.request(subject, enc.encode(body), { timeout: 3000 })).data)).error;
    const invalid = { code: 400, err_code: 10015, description: 'deliver subject not valid' };
    expect(await req('$JS.API.STREAM.SNAPSHOT.S', '{"deliver_subject":"a..b"}')).toEqual(invalid);
    expect(await req('$JS.API.STREAM.SNAPSHOT.S', '{"deliver_subject":""}')).toEqual(invalid);
    // 2.14 checks IsValidPublishSubject (no wildcards); 2.9 only IsValidSubject.
    if (!AGAINST_NATS_SERVER) expect(await req('$JS.API.STREAM.SNAPSHOT.S', '{"deliver_subject":"a.*"}')).toEqual(invalid);
    expect((await req('$JS.API.STREAM.SNAPSHOT.NOPE', '{"deliver_subject":"x"}')).err_code).toBe(10059);
    expect((await req('$JS.API.STREAM.SNAPSHOT.S', '')).err_code).toBe(10003);
    expect((await req('$JS.API.STREAM.RESTORE.S', '')).err_code).toBe(10003);
    // 2.14 refuses a config naming another stream (10056); 2.9 does not check, and answers 10130 for S.
    expect((await req('$JS.API.STREAM.RESTORE.S', '{"config":{"name":"OTHER","subjects":["o"]}}')).err_code).toBe(AGAINST_NATS_SERVER ? 10130 : 10056);
    expect(await req('$JS.API.STREAM.RESTORE.S', '{"config":{"name":"S","subjects":["s.>"]}}')).toEqual({ code: 400, err_code: 10130, description: 'stream name already in use, cannot restore' });
  });

  it('restore: an archive that is not one fails with 10062 and leaves no stream', async () => {
    const junk = new Uint8Array(4096).fill(7);
    const { start, result } = await restore(b.nc, 'JUNK', { config: { name: 'JUNK', subjects: ['junk'] }, state: {} }, [junk, junk]);
    expect(start.error).toBeUndefined();
    expect(result.type).toBe('io.nats.jetstream.api.v1.stream_create_response');
    expect(result.error.err_code).toBe(10062);
    await new Promise((r) => setTimeout(r, 200));
    const names = await b.jsm.streams.names().next();
    expect(names).not.toContain('JUNK');
  });
});

describe('a memory stream', () => {
  it('is refused as nats-server refuses it: 500 10064 snapshot failed: no impl', async () => {
    await a.jsm.streams.add({ name: 'M', subjects: ['m.>'], storage: StorageType.Memory });
    await a.js.publish('m.x', enc.encode('m1'));
    const res = JSON.parse(dec.decode((await a.nc.request('$JS.API.STREAM.SNAPSHOT.M', enc.encode('{"deliver_subject":"snap.m"}'), { timeout: 3000 })).data));
    expect(res).toEqual({ type: 'io.nats.jetstream.api.v1.stream_snapshot_response', error: { code: 500, err_code: 10064, description: 'snapshot failed: no impl' } });
  });
});

describe('stalls', () => {
  // 2.9 waits at most 10 ms per ack and never ends a snapshot for want of them; 2.14 (and Flotilla) after 5 s.
  it.skipIf(AGAINST_NATS_SERVER)('a receiver that stops acking gets 408 No Flow Response after 5 s', async () => {
    const startedMs = Date.now();
    const snap = await snapshot(a.nc, 'S', { chunk_size: 1024, window_size: 2048 }, 7000);
    expect(snap.beforeAcks).toBe(2);
    expect(snap.end.headers?.code).toBe(408);
    expect(snap.end.headers?.description).toBe('No Flow Response');
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(5000);
  }, 15_000);

  it('a restore whose client goes silent is dropped after 5 s, leaving no stream', async () => {
    const snap = await snapshot(a.nc, 'S');
    const start = JSON.parse(dec.decode((await b.nc.request('$JS.API.STREAM.RESTORE.HALF', enc.encode(JSON.stringify({ config: { ...snap.response.config, name: 'HALF', subjects: ['half'] }, state: snap.response.state })), { timeout: 5000 })).data));
    expect(start.deliver_subject).toBeTruthy();
    await b.nc.request(start.deliver_subject, snap.chunks[0]!.subarray(0, 100), { timeout: 5000 });
    await new Promise((r) => setTimeout(r, 6500));
    const names = (await b.jsm.streams.names().next()) ?? [];
    expect(names).not.toContain('HALF');
    // The deliver subject is gone: a late chunk gets no answer.
    await expect(b.nc.request(start.deliver_subject, snap.chunks[0]!, { timeout: 1000 })).rejects.toThrow();
  }, 15_000);
});

describe('consistency', () => {
  it('a snapshot taken while publishing holds exactly the state its reply names', async () => {
    await a.jsm.streams.add({ name: 'LIVE', subjects: ['live.>'] });
    for (let i = 0; i < 50; i++) await a.js.publish('live.x', enc.encode(`before ${i}`));
    let stop = false;
    let published = 0;
    const load = (async () => {
      // Bounded: stops at the snapshot's end or after 2,000 messages.
      while (!stop && published < 2000) {
        await a.js.publish('live.x', enc.encode(`during ${published}`));
        published++;
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    const snap = await snapshot(a.nc, 'LIVE', { chunk_size: 1024 });
    stop = true;
    await load;
    expect(published).toBeGreaterThan(0);
    const { result } = await restore(b.nc, 'LIVE', { config: snap.response.config, state: snap.response.state }, snap.chunks);
    expect(result.error).toBeUndefined();
    expect(result.state.last_seq).toBe(snap.response.state.last_seq);
    expect(result.state.messages).toBe(snap.response.state.messages);
    const last = snap.response.state.last_seq;
    expect(await rawGet(b.nc, 'LIVE', last)).toEqual(await rawGet(a.nc, 'LIVE', last));
    expect((await rawGet(b.nc, 'LIVE', last + 1)).error?.err_code).toBe(10037);
  }, 20_000);
});
