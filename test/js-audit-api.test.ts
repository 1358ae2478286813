// Audit of issue 5 items 1–2: API endpoints and stream options not covered elsewhere, with the real `nats`
// client — every CONSUMER.CREATE subject form and DURABLE.CREATE with their refusals, CONSUMER.NAMES/LIST/
// DELETE raw, MSG.DELETE with no_erase, max_consumers, description and metadata.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, connect, type JetStreamManager, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

// metadata is a 2.10 feature; nats-server 2.9.10 does not know it.
const SERVER_29 = process.env['E2E_SERVER'] === 'nats-server';

let server: FlotillaProcess;
let nc: NatsConnection;
let jsm: JetStreamManager;
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'jsdata'] });
  nc = await connect({ servers: server.url, reconnect: false });
  jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: 'CA', subjects: ['ca.>'] });
  const js = nc.jetstream();
  for (const s of ['ca.a', 'ca.b', 'ca.a']) await js.publish(s, s);
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await server?.stop();
});

/** The raw API answer, as JSON. */
async function api(subject: string, body: object | string = ''): Promise<Record<string, any>> {
  const data = enc.encode(typeof body === 'string' ? body : JSON.stringify(body));
  const m = await nc.request(subject, data, { timeout: 3000 });
  return JSON.parse(dec.decode(m.data));
}

const CREATED = 'io.nats.jetstream.api.v1.consumer_create_response';

describe('consumer create subject forms (audit)', () => {
  it('legacy CONSUMER.CREATE.<stream> makes an ephemeral consumer and refuses a durable name', async () => {
    const eph = await api('$JS.API.CONSUMER.CREATE.CA', { stream_name: 'CA', config: { ack_policy: 'explicit' } });
    expect(eph.type).toBe(CREATED);
    expect(eph.error).toBeUndefined();
    expect(eph.name).toMatch(/^[A-Za-z0-9]{8,}$/);
    expect(eph.config.durable_name).toBeUndefined();
    expect(eph.config.inactive_threshold).toBe(5_000_000_000);
    expect(eph.num_pending).toBe(3);
    const durable = await api('$JS.API.CONSUMER.CREATE.CA', { stream_name: 'CA', config: { durable_name: 'x', ack_policy: 'explicit' } });
    expect(durable.error).toEqual({ code: 400, err_code: 10020, description: 'consumer expected to be ephemeral but a durable name was set in request' });
    const wrongStream = await api('$JS.API.CONSUMER.CREATE.CA', { stream_name: 'OTHER', config: { ack_policy: 'explicit' } });
    expect(wrongStream.error.err_code).toBe(10056);
  });

  it('CONSUMER.CREATE.<stream>.<name> and .<name>.<filter>', async () => {
    const named = await api('$JS.API.CONSUMER.CREATE.CA.N1', { stream_name: 'CA', config: { name: 'N1', durable_name: 'N1', ack_policy: 'explicit' } });
    expect(named.type).toBe(CREATED);
    expect([named.name, named.config.durable_name, named.num_pending]).toEqual(['N1', 'N1', 3]);
    const filtered = await api('$JS.API.CONSUMER.CREATE.CA.N2.ca.a', {
      stream_name: 'CA',
      config: { name: 'N2', ack_policy: 'explicit', filter_subject: 'ca.a' },
    });
    expect([filtered.name, filtered.config.filter_subject, filtered.num_pending]).toEqual(['N2', 'ca.a', 2]);
    const mismatch = await api('$JS.API.CONSUMER.CREATE.CA.N3.ca.a', {
      stream_name: 'CA',
      config: { name: 'N3', ack_policy: 'explicit', filter_subject: 'ca.b' },
    });
    expect(mismatch.error).toEqual({ code: 400, err_code: 10131, description: 'Consumer create request did not match filtered subject from create subject' });
    const wrongDurable = await api('$JS.API.CONSUMER.CREATE.CA.N4', { stream_name: 'CA', config: { durable_name: 'OTHER', ack_policy: 'explicit' } });
    expect(wrongDurable.error).toEqual({ code: 400, err_code: 10017, description: 'consumer name in subject does not match durable name in request' });
  });

  it('legacy CONSUMER.DURABLE.CREATE.<stream>.<durable>', async () => {
    const d = await api('$JS.API.CONSUMER.DURABLE.CREATE.CA.D1', { stream_name: 'CA', config: { durable_name: 'D1', ack_policy: 'explicit' } });
    expect(d.type).toBe(CREATED);
    expect([d.name, d.config.durable_name]).toEqual(['D1', 'D1']);
    const other = await api('$JS.API.CONSUMER.DURABLE.CREATE.CA.D2', { stream_name: 'CA', config: { durable_name: 'D3', ack_policy: 'explicit' } });
    expect(other.error.err_code).toBe(10017);
    const none = await api('$JS.API.CONSUMER.DURABLE.CREATE.CA.D4', { stream_name: 'CA', config: { ack_policy: 'explicit' } });
    expect(none.error.err_code).toBe(10018);
  });

  it('CONSUMER.NAMES, LIST and DELETE answer with their types', async () => {
    const names = await api('$JS.API.CONSUMER.NAMES.CA');
    expect(names.type).toBe('io.nats.jetstream.api.v1.consumer_names_response');
    expect(names.consumers).toEqual(expect.arrayContaining(['N1', 'N2', 'D1']));
    expect(names.consumers).toEqual([...names.consumers].sort());
    expect(names).toMatchObject({ total: names.consumers.length, offset: 0, limit: 1024 });
    const list = await api('$JS.API.CONSUMER.LIST.CA');
    expect(list.type).toBe('io.nats.jetstream.api.v1.consumer_list_response');
    expect(list.consumers.map((c: { name: string }) => c.name)).toEqual(names.consumers);
    expect(list).toMatchObject({ total: names.consumers.length, offset: 0, limit: 256 });
    const del = await api('$JS.API.CONSUMER.DELETE.CA.D1');
    expect(del).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_delete_response', success: true });
    const again = await api('$JS.API.CONSUMER.DELETE.CA.D1');
    expect(again.error).toEqual({ code: 404, err_code: 10014, description: 'consumer not found' });
    const missingStream = await api('$JS.API.CONSUMER.NAMES.NOPE');
    expect(missingStream.error).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
  });
});

describe('stream options (audit)', () => {
  it('MSG.DELETE with and without no_erase removes the message', async () => {
    await jsm.streams.add({ name: 'NE', subjects: ['ne.>'] });
    const js = nc.jetstream();
    for (let i = 1; i <= 3; i++) await js.publish('ne.x', String(i));
    const kept = await api('$JS.API.STREAM.MSG.DELETE.NE', { seq: 2, no_erase: true });
    expect(kept).toEqual({ type: 'io.nats.jetstream.api.v1.stream_msg_delete_response', success: true });
    expect(await jsm.streams.deleteMessage('NE', 3, true)).toBe(true); // erase
    const si = await jsm.streams.info('NE', { deleted_details: true });
    expect(si.state).toMatchObject({ messages: 1, first_seq: 1, last_seq: 3 });
    const miss = await api('$JS.API.STREAM.MSG.GET.NE', { seq: 2 });
    expect(miss.error.err_code).toBe(10037);
  });

  it('max_consumers refuses one consumer too many', async () => {
    await jsm.streams.add({ name: 'MC', subjects: ['mc.>'], max_consumers: 1 });
    await jsm.consumers.add('MC', { durable_name: 'one', ack_policy: AckPolicy.Explicit });
    const err = await jsm.consumers
      .add('MC', { durable_name: 'two', ack_policy: AckPolicy.Explicit })
      .catch((e: { api_error?: unknown }) => e.api_error);
    expect(err).toEqual({ code: 400, err_code: 10026, description: 'maximum consumers limit reached' });
  });

  it('keeps description and (2.10) metadata, and updates them', async () => {
    const si = await jsm.streams.add({ name: 'DM', subjects: ['dm'], description: 'first' });
    expect(si.config.description).toBe('first');
    const upd = await jsm.streams.update('DM', { description: 'second' });
    expect(upd.config.description).toBe('second');
    if (SERVER_29) return; // metadata needs 2.10: the client refuses to send it to 2.9
    const meta = await jsm.streams.update('DM', { metadata: { owner: 'audit' } });
    expect(meta.config.metadata).toMatchObject({ owner: 'audit' });
    expect((await jsm.streams.info('DM')).config.metadata).toMatchObject({ owner: 'audit' });
    const ci = await jsm.consumers.add('DM', { durable_name: 'c', ack_policy: AckPolicy.Explicit, metadata: { team: 'x' } });
    expect(ci.config.metadata).toMatchObject({ team: 'x' });
  });

  it('refuses the updates nats-server refuses', async () => {
    await jsm.streams.add({ name: 'UR', subjects: ['ur'], deny_delete: true, deny_purge: true });
    const cfg = (await jsm.streams.info('UR')).config;
    const refusal = async (change: object): Promise<unknown> => (await api('$JS.API.STREAM.UPDATE.UR', { ...cfg, ...change })).error;
    const invalid = (description: string) => ({ code: 500, err_code: 10052, description });
    expect(await refusal({ max_consumers: 5 })).toEqual(invalid('stream configuration update can not change MaxConsumers'));
    expect(await refusal({ retention: 'workqueue' })).toEqual(
      // 2.10 lets limits and interest switch, only workqueue is fixed
      invalid(SERVER_29 ? 'stream configuration update can not change retention policy' : 'stream configuration update can not change retention policy to/from workqueue'),
    );
    expect(await refusal({ deny_delete: false })).toEqual(invalid('stream configuration update can not cancel deny message deletes'));
    expect(await refusal({ deny_purge: false })).toEqual(invalid('stream configuration update can not cancel deny purge'));
    const renamed = await api('$JS.API.STREAM.UPDATE.UR', { ...cfg, name: 'OTHER' });
    expect(renamed.error.err_code).toBe(10056);
  });

  it('account info counts API requests, but not pull requests or direct gets', async () => {
    await jsm.streams.add({ name: 'AC', subjects: ['ac'], allow_direct: true });
    await nc.jetstream().publish('ac', 'x');
    await jsm.consumers.add('AC', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    const before = await api('$JS.API.INFO');
    // noMux: the pulled message arrives with its stored subject, which the shared-inbox mux cannot route
    await nc.request('$JS.API.CONSUMER.MSG.NEXT.AC.d', enc.encode('{"batch":1}'), { timeout: 2000, noMux: true });
    await nc.request('$JS.API.DIRECT.GET.AC', enc.encode('{"seq":1}'), { timeout: 2000 });
    await api('$JS.API.STREAM.INFO.AC');
    const after = await api('$JS.API.INFO');
    // STREAM.INFO and the second INFO
    expect(after.api.total - before.api.total).toBe(2);
    expect(after.api.errors).toBe(before.api.errors);
  });
});
