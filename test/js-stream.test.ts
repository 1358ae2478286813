// Stream management through the real `nats` client: create/update/delete/info/list/names/purge,
// message get/delete, direct get, and the config errors nats-server returns.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection, type JetStreamManager, RetentionPolicy, StorageType, DiscardPolicy, headers } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { apiError } from './helpers/api-replies.js';

let server: FlotillaProcess;
let nc: NatsConnection;
let jsm: JetStreamManager;
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'jsdata'] });
  nc = await connect({ servers: server.url, reconnect: false });
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (!server) return; // startup failed: nothing to stop
  const code = await server.stop();
  if (process.env['E2E_SERVER'] !== 'nats-server') expect(code).toBe(0); // nats-server exits 1 on SIGTERM
});

/** The raw API answer, as JSON. */
async function api(subject: string, body: string | object = ''): Promise<Record<string, any>> {
  const data = typeof body === 'string' ? enc.encode(body) : enc.encode(JSON.stringify(body));
  const m = await nc.request(subject, data, { timeout: 3000 });
  return JSON.parse(dec.decode(m.data));
}


describe('stream create and defaults', () => {
  it('fills nats-server defaults and subjects [name]', async () => {
    const si = await jsm.streams.add({ name: 'DEF' });
    expect(si.config).toMatchObject({
      name: 'DEF',
      subjects: ['DEF'],
      retention: 'limits',
      max_consumers: -1,
      max_msgs: -1,
      max_bytes: -1,
      max_age: 0,
      max_msgs_per_subject: -1,
      max_msg_size: -1,
      discard: 'old',
      storage: 'file',
      num_replicas: 1,
      duplicate_window: 120_000_000_000,
      sealed: false,
      deny_delete: false,
      deny_purge: false,
      allow_rollup_hdrs: false,
      allow_direct: false,
    });
    expect(si.state).toMatchObject({ messages: 0, bytes: 0, first_seq: 0, last_seq: 0, consumer_count: 0 });
    expect(si.state.first_ts).toBe('0001-01-01T00:00:00Z');
    expect(si.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it('duplicate_window follows a smaller max_age', async () => {
    const si = await jsm.streams.add({ name: 'AGE', subjects: ['age.>'], max_age: 30_000_000_000 });
    expect(si.config.duplicate_window).toBe(30_000_000_000);
  });

  it('identical re-create succeeds, different config is 10058', async () => {
    const again = await api('$JS.API.STREAM.CREATE.DEF', { name: 'DEF' });
    expect(again.type).toBe('io.nats.jetstream.api.v1.stream_create_response');
    expect(again.error).toBeUndefined();
    expect(again.config.name).toBe('DEF');
    const diff = await apiError(jsm.streams.add({ name: 'DEF', max_msgs: 10 }));
    expect(diff).toEqual({ code: 400, err_code: 10058, description: 'stream name already in use with a different configuration' });
  });

  it('refuses overlapping subjects with 10065', async () => {
    await jsm.streams.add({ name: 'OV1', subjects: ['ov.a.*'] });
    const err = await apiError(jsm.streams.add({ name: 'OV2', subjects: ['ov.>'] }));
    expect(err).toEqual({ code: 400, err_code: 10065, description: 'subjects overlap with an existing stream' });
  });

  it('returns the config errors of nats-server', async () => {
    const r3 = await api('$JS.API.STREAM.CREATE.R3', { name: 'R3', num_replicas: 3 });
    expect(r3.error).toEqual({ code: 500, err_code: 10074, description: 'replicas > 1 not supported in non-clustered mode' });
    const r6 = await api('$JS.API.STREAM.CREATE.R6', { name: 'R6', num_replicas: 6 });
    expect(r6.error).toEqual({ code: 500, err_code: 10052, description: 'maximum replicas is 5' });
    const mismatch = await api('$JS.API.STREAM.CREATE.X1', { name: 'X2' });
    expect(mismatch.error).toEqual({ code: 400, err_code: 10056, description: 'stream name in subject does not match request' });
    const badJson = await api('$JS.API.STREAM.CREATE.BJ', '{nope');
    expect(badJson.error).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON' });
    const badEnum = await api('$JS.API.STREAM.CREATE.BE', { name: 'BE', retention: 'forever' });
    expect(badEnum.error.err_code).toBe(10025);
    const rollup = await api('$JS.API.STREAM.CREATE.RP', { name: 'RP', deny_purge: true, allow_rollup_hdrs: true });
    expect(rollup.error).toEqual({ code: 500, err_code: 10052, description: 'roll-ups require the purge permission' });
    const dup = await api('$JS.API.STREAM.CREATE.DW', { name: 'DW', max_age: 1_000_000_000, duplicate_window: 2_000_000_000 });
    expect(dup.error).toEqual({ code: 500, err_code: 10052, description: 'duplicates window can not be larger then max age' });
    const sealed = await api('$JS.API.STREAM.CREATE.SC', { name: 'SC', sealed: true });
    expect(sealed.error).toEqual({ code: 500, err_code: 10052, description: 'stream configuration for create can not be sealed' });
  });

  it('gives no reply to unknown API subjects', async () => {
    await expect(nc.request('$JS.API.STREAM.CREATE.bad.name', enc.encode('{}'), { timeout: 300 })).rejects.toThrow();
  });
});

describe('stream update, info, names, list, delete', () => {
  it('updates allowed fields and refuses storage changes', async () => {
    await jsm.streams.add({ name: 'UP', subjects: ['up.>'] });
    const si = await jsm.streams.update('UP', { subjects: ['up.>', 'up2.*'], max_msgs: 5, description: 'd' });
    expect(si.config.subjects).toEqual(['up.>', 'up2.*']);
    expect(si.config.max_msgs).toBe(5);
    const info = await jsm.streams.info('UP');
    const bad = await api('$JS.API.STREAM.UPDATE.UP', { ...info.config, storage: 'memory' });
    expect(bad.type).toBe('io.nats.jetstream.api.v1.stream_update_response');
    expect(bad.error).toEqual({ code: 500, err_code: 10052, description: 'stream configuration update can not change storage type' });
    const missing = await api('$JS.API.STREAM.UPDATE.NOPE', { name: 'NOPE' });
    expect(missing.error).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
    // new subject is live
    const js = nc.jetstream();
    const ack = await js.publish('up2.x', enc.encode('hi'));
    expect(ack.stream).toBe('UP');
  });

  it('STREAM.INFO of a missing stream keeps the paging fields', async () => {
    const r = await api('$JS.API.STREAM.INFO.MISSING');
    expect(r).toEqual({
      type: 'io.nats.jetstream.api.v1.stream_info_response',
      error: { code: 404, err_code: 10059, description: 'stream not found' },
      total: 0,
      offset: 0,
      limit: 0,
    });
  });

  it('names and list with a subject filter (overlap semantics)', async () => {
    const names: string[] = [];
    for await (const n of jsm.streams.names()) names.push(n);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('DEF');
    const filtered = await api('$JS.API.STREAM.NAMES', { subject: 'ov.a.b' });
    expect(filtered.streams).toEqual(['OV1']);
    expect(filtered).toMatchObject({ total: 1, offset: 0, limit: 1024 });
    const wild = await api('$JS.API.STREAM.NAMES', { subject: 'up.>' });
    expect(wild.streams).toEqual(['UP']);
    const infos = [];
    for await (const si of jsm.streams.list()) infos.push(si);
    expect(infos.map((i) => i.config.name)).toEqual(names);
    const page = await api('$JS.API.STREAM.LIST', { offset: 1 });
    expect(page).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_list_response', total: names.length, offset: 1, limit: 256 });
    expect(page.streams.length).toBe(names.length - 1);
  });

  it('deletes a stream', async () => {
    await jsm.streams.add({ name: 'GONE', subjects: ['gone'] });
    expect(await jsm.streams.delete('GONE')).toBe(true);
    const err = await apiError(jsm.streams.info('GONE'));
    expect(err.err_code).toBe(10059);
    // its subjects are free again
    await jsm.streams.add({ name: 'GONE2', subjects: ['gone'] });
  });

  it('account info counts streams', async () => {
    const ai = await jsm.getAccountInfo();
    expect(ai.streams).toBeGreaterThanOrEqual(5);
    expect(ai.limits.max_streams).toBe(-1);
  });
});

describe('messages: info paging, purge, get, delete, direct get', () => {
  it('subjects_filter paging and deleted_details', async () => {
    await jsm.streams.add({ name: 'M', subjects: ['m.>'], allow_direct: true });
    const js = nc.jetstream();
    for (const s of ['m.a', 'm.b', 'm.a', 'm.c', 'm.a']) await js.publish(s, enc.encode(s));
    const info = await jsm.streams.info('M', { subjects_filter: '>' });
    expect(info.state.subjects).toEqual({ 'm.a': 3, 'm.b': 1, 'm.c': 1 });
    expect(info.state.num_subjects).toBe(3);
    const raw = await api('$JS.API.STREAM.INFO.M', { subjects_filter: 'm.a' });
    expect(raw).toMatchObject({ total: 1, offset: 0, limit: 100000 });
    const plain = await api('$JS.API.STREAM.INFO.M');
    expect(plain).toMatchObject({ total: 0, offset: 0, limit: 0 });
    expect(plain.state.subjects).toBeUndefined();
    expect(await jsm.streams.deleteMessage('M', 2)).toBe(true);
    const det = await jsm.streams.info('M', { deleted_details: true });
    expect(det.state.deleted).toEqual([2]);
    expect(det.state.num_deleted).toBe(1);
    const gone = await api('$JS.API.STREAM.MSG.DELETE.M', { seq: 2 });
    expect(gone.error).toEqual({ code: 400, err_code: 10043, description: 'sequence 2 not found' });
    const zero = await api('$JS.API.STREAM.MSG.DELETE.M', { seq: 0 });
    expect(zero.error).toEqual({ code: 500, err_code: 10057, description: 'no message found' });
    const past = await api('$JS.API.STREAM.MSG.DELETE.M', { seq: 99 });
    expect(past.error).toEqual({ code: 500, err_code: 10057, description: 'stream store EOF' });
    const empty = await api('$JS.API.STREAM.MSG.DELETE.M');
    expect(empty.error).toEqual({ code: 400, err_code: 10003, description: 'bad request' });
  });

  it('MSG.GET by seq, last_by_subj and next_by_subj', async () => {
    const m = await jsm.streams.getMessage('M', { seq: 1 });
    expect(m.subject).toBe('m.a');
    expect(dec.decode(m.data)).toBe('m.a');
    const last = await jsm.streams.getMessage('M', { last_by_subj: 'm.a' });
    expect(last.seq).toBe(5);
    const next = await jsm.streams.getMessage('M', { next_by_subj: 'm.a', seq: 2 });
    expect(next.seq).toBe(3);
    const raw = await api('$JS.API.STREAM.MSG.GET.M', { seq: 4 });
    expect(raw.message).toMatchObject({ subject: 'm.c', seq: 4, data: Buffer.from('m.c').toString('base64') });
    expect(raw.message.hdrs).toBeUndefined();
    const miss = await api('$JS.API.STREAM.MSG.GET.M', { seq: 99 });
    expect(miss.error).toEqual({ code: 404, err_code: 10037, description: 'no message found' });
    const empty = await api('$JS.API.STREAM.MSG.GET.M');
    expect(empty.error).toEqual({ code: 400, err_code: 10003, description: 'bad request' });
  });

  it('direct get by sequence and last-by-subject, with the stream headers', async () => {
    const h = headers();
    h.set('Foo', 'bar');
    await nc.jetstream().publish('m.h', enc.encode('hv'), { headers: h });
    const m = await jsm.direct.getMessage('M', { last_by_subj: 'm.h' });
    expect(m.seq).toBe(6);
    expect(m.subject).toBe('m.h');
    expect(m.header.get('Foo')).toBe('bar');
    expect(dec.decode(m.data)).toBe('hv');
    const raw = await nc.request('$JS.API.DIRECT.GET.M.m.c', new Uint8Array(0), { timeout: 2000 });
    expect(raw.headers?.get('Nats-Stream')).toBe('M');
    expect(raw.headers?.get('Nats-Subject')).toBe('m.c');
    expect(raw.headers?.get('Nats-Sequence')).toBe('4');
    expect(raw.headers?.get('Nats-Time-Stamp')).toMatch(/Z$/);
    const miss = await nc.request('$JS.API.DIRECT.GET.M', enc.encode('{"seq":99}'), { timeout: 2000 });
    expect(miss.headers?.code).toBe(404);
    expect(miss.headers?.description).toBe('Message Not Found');
    // no allow_direct: no responder at all
    await expect(nc.request('$JS.API.DIRECT.GET.DEF', enc.encode('{"seq":1}'), { timeout: 300 })).rejects.toThrow();
  });

  it('purge with filter, keep and seq; full purge keeps sequences', async () => {
    await jsm.streams.add({ name: 'P', subjects: ['p.>'] });
    const js = nc.jetstream();
    for (let i = 0; i < 10; i++) await js.publish(i % 2 === 0 ? 'p.even' : 'p.odd', enc.encode(String(i)));
    expect((await jsm.streams.purge('P', { filter: 'p.odd', keep: 2 })).purged).toBe(3);
    expect((await jsm.streams.purge('P', { seq: 5 })).purged).toBe(2);
    const both = await api('$JS.API.STREAM.PURGE.P', { seq: 3, keep: 1 });
    expect(both.error).toEqual({ code: 400, err_code: 10003, description: 'bad request' });
    expect(both.purged).toBe(0);
    const all = await jsm.streams.purge('P');
    expect(all.purged).toBe(5);
    const si = await jsm.streams.info('P');
    expect(si.state).toMatchObject({ messages: 0, first_seq: 11, last_seq: 10 });
    const ack = await js.publish('p.even', enc.encode('x'));
    expect(ack.seq).toBe(11);
  });

  it('deny_purge and deny_delete', async () => {
    await jsm.streams.add({ name: 'DENY', subjects: ['deny'], deny_purge: true, deny_delete: true });
    await nc.jetstream().publish('deny', enc.encode('x'));
    const p = await api('$JS.API.STREAM.PURGE.DENY');
    expect(p.error).toEqual({ code: 500, err_code: 10110, description: 'stream purge not permitted' });
    const d = await api('$JS.API.STREAM.MSG.DELETE.DENY', { seq: 1 });
    expect(d.error).toEqual({ code: 500, err_code: 10057, description: 'message delete not permitted' });
  });

  it('memory storage works', async () => {
    const si = await jsm.streams.add({ name: 'MEM', subjects: ['mem'], storage: StorageType.Memory, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old });
    expect(si.config.storage).toBe('memory');
    const ack = await nc.jetstream().publish('mem', enc.encode('x'));
    expect(ack).toMatchObject({ stream: 'MEM', seq: 1 });
  });
});
