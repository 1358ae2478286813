// Publishing into streams with the real `nats` client: PubAcks, Nats-Msg-Id de-duplication, the
// Nats-Expected-* checks, rollups, limits (discard old/new), sealed and no_ack streams.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, headers, DiscardPolicy, type NatsConnection, type JetStreamManager, type JetStreamClient } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { apiError } from './helpers/api-replies.js';

let server: FlotillaProcess;
let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'jsdata'] });
  nc = await connect({ servers: server.url, reconnect: false });
  jsm = await nc.jetstreamManager();
  js = nc.jetstream();
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (!server) return; // startup failed: nothing to stop
  const code = await server.stop();
  if (process.env['E2E_SERVER'] !== 'nats-server') expect(code).toBe(0); // nats-server exits 1 on SIGTERM
});


/** Raw PubAck bytes for a request with the given headers. */
async function rawPublish(subject: string, hdrs: Record<string, string> = {}, body = 'x'): Promise<string> {
  const h = headers();
  for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
  const m = await nc.request(subject, enc.encode(body), { timeout: 2000, headers: Object.keys(hdrs).length > 0 ? h : undefined });
  return dec.decode(m.data);
}

describe('PubAck and de-duplication', () => {
  it('acks with the exact nats-server bytes', async () => {
    await jsm.streams.add({ name: 'PA', subjects: ['pa.>'] });
    expect(await rawPublish('pa.a')).toBe('{"stream":"PA", "seq":1}');
    expect(await rawPublish('pa.a', { 'Nats-Msg-Id': 'id1' })).toBe('{"stream":"PA", "seq":2}');
    expect(await rawPublish('pa.a', { 'Nats-Msg-Id': 'id1' })).toBe('{"stream":"PA", "seq":2,"duplicate": true}');
  });

  it('js.publish with msgID reports duplicates and stores once', async () => {
    const a = await js.publish('pa.b', enc.encode('1'), { msgID: 'm-1' });
    const b = await js.publish('pa.b', enc.encode('1'), { msgID: 'm-1' });
    expect(a.duplicate).toBe(false);
    expect(b.duplicate).toBe(true);
    expect(b.seq).toBe(a.seq);
    const si = await jsm.streams.info('PA');
    expect(si.state.messages).toBe(3);
  });

  it('forgets ids after duplicate_window', async () => {
    await jsm.streams.add({ name: 'DW', subjects: ['dw'], duplicate_window: 200_000_000 });
    const a = await js.publish('dw', enc.encode('1'), { msgID: 'w' });
    await new Promise((r) => setTimeout(r, 350));
    const b = await js.publish('dw', enc.encode('1'), { msgID: 'w' });
    expect(b.duplicate).toBe(false);
    expect(b.seq).toBe(a.seq + 1);
  });
});

describe('expectations', () => {
  it('Nats-Expected-Stream', async () => {
    await jsm.streams.add({ name: 'EX', subjects: ['ex.>'] });
    const ok = await js.publish('ex.a', enc.encode('1'), { expect: { streamName: 'EX' } });
    expect(ok.seq).toBe(1);
    expect(await rawPublish('ex.a', { 'Nats-Expected-Stream': 'OTHER' })).toBe(
      '{"error":{"code":400,"err_code":10060,"description":"expected stream does not match"},"stream":"EX","seq":0}',
    );
  });

  it('Nats-Expected-Last-Sequence and -Last-Subject-Sequence', async () => {
    await js.publish('ex.b', enc.encode('2')); // seq 2
    const ok = await js.publish('ex.a', enc.encode('3'), { expect: { lastSequence: 2 } });
    expect(ok.seq).toBe(3);
    const bad = await apiError(js.publish('ex.a', enc.encode('x'), { expect: { lastSequence: 1 } }));
    expect(bad).toEqual({ code: 400, err_code: 10071, description: 'wrong last sequence: 3' });
    const subjOk = await js.publish('ex.b', enc.encode('4'), { expect: { lastSubjectSequence: 2 } });
    expect(subjOk.seq).toBe(4);
    const subjBad = await apiError(js.publish('ex.b', enc.encode('x'), { expect: { lastSubjectSequence: 2 } }));
    expect(subjBad).toEqual({ code: 400, err_code: 10071, description: 'wrong last sequence: 4' });
    const none = await js.publish('ex.new', enc.encode('5'), { expect: { lastSubjectSequence: 0 } });
    expect(none.seq).toBe(5);
  });

  it('Nats-Expected-Last-Msg-Id', async () => {
    await js.publish('ex.c', enc.encode('6'), { msgID: 'last-1' });
    const ok = await js.publish('ex.c', enc.encode('7'), { msgID: 'last-2', expect: { lastMsgID: 'last-1' } });
    expect(ok.seq).toBe(7);
    const bad = await apiError(js.publish('ex.c', enc.encode('8'), { expect: { lastMsgID: 'last-1' } }));
    expect(bad).toEqual({ code: 400, err_code: 10070, description: 'wrong last msg ID: last-2' });
  });
});

describe('rollup', () => {
  it('sub and all rollups purge the other messages', async () => {
    await jsm.streams.add({ name: 'RU', subjects: ['ru.>'], allow_rollup_hdrs: true });
    for (const s of ['ru.a', 'ru.a', 'ru.b', 'ru.a']) await js.publish(s, enc.encode(s));
    const h = headers();
    h.set('Nats-Rollup', 'sub');
    const ack = await js.publish('ru.a', enc.encode('rolled'), { headers: h });
    expect(ack.seq).toBe(5);
    let si = await jsm.streams.info('RU', { subjects_filter: '>' });
    expect(si.state.subjects).toEqual({ 'ru.a': 1, 'ru.b': 1 });
    const all = headers();
    all.set('Nats-Rollup', 'all');
    await js.publish('ru.c', enc.encode('all'), { headers: all });
    si = await jsm.streams.info('RU');
    expect(si.state).toMatchObject({ messages: 1, first_seq: 6, last_seq: 6 });
  });

  it('is refused without allow_rollup_hdrs', async () => {
    await jsm.streams.add({ name: 'NRU', subjects: ['nru'] });
    expect(await rawPublish('nru', { 'Nats-Rollup': 'sub' })).toBe(
      '{"error":{"code":500,"err_code":10111,"description":"rollup not permitted"},"stream":"NRU","seq":0}',
    );
  });
});

describe('limits, sealed, no_ack', () => {
  it('discard old keeps the newest max_msgs', async () => {
    await jsm.streams.add({ name: 'LO', subjects: ['lo'], max_msgs: 3 });
    for (let i = 1; i <= 5; i++) await js.publish('lo', enc.encode(String(i)));
    const si = await jsm.streams.info('LO');
    expect(si.state).toMatchObject({ messages: 3, first_seq: 3, last_seq: 5 });
  });

  it('discard new refuses with 10077 and the store text', async () => {
    await jsm.streams.add({ name: 'LN', subjects: ['ln'], max_msgs: 2, discard: DiscardPolicy.New });
    await js.publish('ln', enc.encode('1'));
    await js.publish('ln', enc.encode('2'));
    const err = await apiError(js.publish('ln', enc.encode('3')));
    expect(err).toEqual({ code: 503, err_code: 10077, description: 'maximum messages exceeded' });
  });

  it('max_msgs_per_subject removes the oldest of that subject', async () => {
    await jsm.streams.add({ name: 'PS', subjects: ['ps.>'], max_msgs_per_subject: 2 });
    for (const s of ['ps.a', 'ps.a', 'ps.b', 'ps.a']) await js.publish(s, enc.encode(s));
    const si = await jsm.streams.info('PS', { subjects_filter: '>' });
    expect(si.state.subjects).toEqual({ 'ps.a': 2, 'ps.b': 1 });
    expect(si.state.first_seq).toBe(2);
  });

  it('discard new per subject and max_bytes refuse with the store text', async () => {
    await jsm.streams.add({ name: 'DNS', subjects: ['dns'], max_msgs_per_subject: 1, discard: DiscardPolicy.New, discard_new_per_subject: true });
    await js.publish('dns', enc.encode('1'));
    const per = await apiError(js.publish('dns', enc.encode('2')));
    expect(per).toEqual({ code: 503, err_code: 10077, description: 'maximum messages per subject exceeded' });
    await jsm.streams.add({ name: 'MB', subjects: ['mb'], max_bytes: 100, discard: DiscardPolicy.New });
    await js.publish('mb', enc.encode('x'.repeat(40)));
    const bytes = await apiError(js.publish('mb', enc.encode('x'.repeat(40))));
    expect(bytes).toEqual({ code: 503, err_code: 10077, description: 'maximum bytes exceeded' });
  });

  it('max_age expires messages', async () => {
    await jsm.streams.add({ name: 'AG', subjects: ['ag'], max_age: 300_000_000 });
    await js.publish('ag', enc.encode('old'));
    await new Promise((r) => setTimeout(r, 700));
    const si = await jsm.streams.info('AG');
    expect(si.state).toMatchObject({ messages: 0, first_seq: 2, last_seq: 1 });
  });

  it('max_msg_size refuses with 10054', async () => {
    await jsm.streams.add({ name: 'MS', subjects: ['ms'], max_msg_size: 8 });
    const err = await apiError(js.publish('ms', enc.encode('0123456789')));
    expect(err).toEqual({ code: 400, err_code: 10054, description: 'message size exceeds maximum allowed' });
  });

  it('a sealed stream refuses publishes, purges and deletes', async () => {
    await jsm.streams.add({ name: 'SE', subjects: ['se'] });
    await js.publish('se', enc.encode('1'));
    const si = await jsm.streams.update('SE', { sealed: true });
    expect(si.config).toMatchObject({ sealed: true, deny_delete: true, deny_purge: true });
    const err = await apiError(js.publish('se', enc.encode('2')));
    expect(err).toEqual({ code: 400, err_code: 10109, description: 'invalid operation on sealed stream' });
    const purge = await apiError(jsm.streams.purge('SE'));
    expect(purge.err_code).toBe(10109);
    const unseal = await apiError(jsm.streams.update('SE', { sealed: false }));
    expect(unseal.err_code).toBe(10052);
  });

  it('no_ack streams store without replying', async () => {
    await jsm.streams.add({ name: 'NA', subjects: ['na'], no_ack: true });
    await expect(nc.request('na', enc.encode('x'), { timeout: 300 })).rejects.toThrow();
    nc.publish('na', enc.encode('y'));
    await nc.flush();
    const si = await jsm.streams.info('NA');
    expect(si.state.messages).toBe(2);
  });

  it('many async publishes are acked in sequence order', async () => {
    await jsm.streams.add({ name: 'AS', subjects: ['as'] });
    const acks = await Promise.all(Array.from({ length: 500 }, (_, i) => js.publish('as', enc.encode(String(i)))));
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    const m = await jsm.streams.getMessage('AS', { seq: 500 });
    expect(dec.decode(m.data)).toBe('499');
  });
});
