// JetStream per account on one node, with the stock client: each JetStream-enabled account has its own
// streams (invisible to the others) under `<store_dir>/jetstream/<account>`, an account without JetStream
// answers 10039, and an account's limits are enforced with nats-server's error codes and reported by
// `$JS.API.INFO`. With E2E_SERVER=nats-server every case runs against nats-server (2.9.10 here) to show
// the expectations are its behaviour; the one place 2.9 and 2.14 differ is marked.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { allRawReplies, allReplies } from './helpers/api-replies.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const { dir, conns, writeConf, serverWith } = useConfServers('js-accounts', { expectCleanExit: true });

async function login(s: FlotillaProcess, user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, user, pass: user });
  conns.push(nc);
  return nc;
}

/** The one answer to a `$JS.API` request (or a publish with a reply: its PubAck); undefined when none came. */
async function api(nc: NatsConnection, subject: string, body: object | string = ''): Promise<Record<string, unknown> | undefined> {
  const replies = await allReplies(nc, subject, typeof body === 'string' ? body : JSON.stringify(body), { firstMs: 1500, extraMs: 100 });
  expect(replies.length).toBeLessThanOrEqual(1);
  return replies[0];
}

/** Replies to a request that must get none, within a short wait (an answer comes within milliseconds). */
async function repliesWithin300ms(nc: NatsConnection, subject: string, body: object): Promise<number> {
  return (await allReplies(nc, subject, JSON.stringify(body), { firstMs: 300, extraMs: 0 })).length;
}

function errorOf(reply: Record<string, unknown> | undefined): unknown {
  return reply?.['error'];
}

const stream = (name: string, extra: object = {}): object => ({ name, subjects: [`${name.toLowerCase()}.>`], storage: 'file', ...extra });
const NOT_ENABLED = { code: 503, err_code: 10039, description: 'JetStream not enabled for account' };

describe('JetStream per account', () => {
  it('each JetStream account has its own streams, under <store_dir>/jetstream/<account>; the others cannot see them', async () => {
    const storeDir = join(dir, 'isolation');
    const s = await serverWith(`
jetstream { store_dir: "${storeDir}" }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: enabled, users: [ { user: b, password: b } ] }
}`);
    const a = await login(s, 'a');
    const b = await login(s, 'b');
    // The same name and subjects in both: two streams, no overlap across the boundary.
    expect(errorOf(await api(a, '$JS.API.STREAM.CREATE.ORDERS', stream('ORDERS')))).toBeUndefined();
    expect(errorOf(await api(b, '$JS.API.STREAM.CREATE.ORDERS', stream('ORDERS')))).toBeUndefined();
    expect(errorOf(await api(a, '$JS.API.STREAM.CREATE.ONLYA', stream('ONLYA')))).toBeUndefined();
    for (let i = 0; i < 3; i++) expect(await api(a, 'orders.new', `a${i}`)).toEqual({ stream: 'ORDERS', seq: i + 1 });
    expect(await api(b, 'orders.new', 'b0')).toEqual({ stream: 'ORDERS', seq: 1 });

    const namesA = await api(a, '$JS.API.STREAM.NAMES');
    const namesB = await api(b, '$JS.API.STREAM.NAMES');
    expect(namesA?.['streams']).toEqual(['ONLYA', 'ORDERS']);
    expect(namesB?.['streams']).toEqual(['ORDERS']);
    expect((await api(b, '$JS.API.STREAM.INFO.ONLYA'))?.['error']).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
    const stateA = (await api(a, '$JS.API.STREAM.INFO.ORDERS'))?.['state'] as Record<string, unknown>;
    const stateB = (await api(b, '$JS.API.STREAM.INFO.ORDERS'))?.['state'] as Record<string, unknown>;
    expect([stateA['messages'], stateB['messages']]).toEqual([3, 1]);
    const infoA = await api(a, '$JS.API.INFO');
    const infoB = await api(b, '$JS.API.INFO');
    expect([infoA?.['streams'], infoB?.['streams']]).toEqual([2, 1]);

    // The stock client in B reads B's stream only.
    const jsm = await b.jetstreamManager();
    const got = await jsm.streams.getMessage('ORDERS', { seq: 1 });
    expect(sc.decode(got.data)).toBe('b0');

    expect(existsSync(join(storeDir, 'jetstream', 'A', 'streams', 'ORDERS'))).toBe(true);
    expect(existsSync(join(storeDir, 'jetstream', 'A', 'streams', 'ONLYA'))).toBe(true);
    expect(existsSync(join(storeDir, 'jetstream', 'B', 'streams', 'ORDERS'))).toBe(true);
    expect(existsSync(join(storeDir, 'jetstream', 'B', 'streams', 'ONLYA'))).toBe(false);
  });

  it('an account without JetStream (and the global account) answers its $JS.API with 10039 of each endpoint’s type', async () => {
    const s = await serverWith(`
jetstream { store_dir: "${join(dir, 'not-enabled')}" }
authorization { users: [ { user: g, password: g } ] }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  N: { users: [ { user: n, password: n } ] }
}`);
    const a = await login(s, 'a');
    expect(errorOf(await api(a, '$JS.API.STREAM.CREATE.S', stream('S')))).toBeUndefined();
    for (const user of ['n', 'g']) {
      const nc = await login(s, user);
      expect(await api(nc, '$JS.API.INFO')).toEqual({ type: 'io.nats.jetstream.api.v1.account_info_response', error: NOT_ENABLED });
      expect(await api(nc, '$JS.API.STREAM.CREATE.S', stream('S'))).toEqual({ type: 'io.nats.jetstream.api.v1.stream_create_response', error: NOT_ENABLED });
      expect(await api(nc, '$JS.API.STREAM.INFO.S')).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_info_response', error: NOT_ENABLED });
      expect(await api(nc, '$JS.API.STREAM.MSG.GET.S', { seq: 1 })).toEqual({ type: 'io.nats.jetstream.api.v1.stream_msg_get_response', error: NOT_ENABLED });
      expect(await api(nc, '$JS.API.CONSUMER.INFO.S.C')).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_info_response', error: NOT_ENABLED });
      // A pull and a direct get are the consumer's and the stream's own subscriptions: no answer.
      expect(await repliesWithin300ms(nc, '$JS.API.CONSUMER.MSG.NEXT.S.C', { batch: 1 })).toBe(0);
      expect(await repliesWithin300ms(nc, '$JS.API.DIRECT.GET.S', { seq: 1 })).toBe(0);
      // The publish reaches no stream of A: nobody is there to answer it.
      const noStream = await allRawReplies(nc, 's.x', 'x', { firstMs: 1500, extraMs: 0 });
      expect(noStream.map((m) => m.headers?.code)).toEqual([503]);
      const jsm = await nc.jetstreamManager({ checkAPI: false });
      await expect(jsm.getAccountInfo()).rejects.toMatchObject({ api_error: NOT_ENABLED });
    }
  });

  it('with no JetStream account JetStream still runs: INFO says so, /healthz is ok, every account answers 10039', async () => {
    const s = await serverWith(`
jetstream { store_dir: "${join(dir, 'none-enabled')}" }
accounts { N: { users: [ { user: n, password: n } ] } }`);
    const n = await login(s, 'n');
    expect(n.info?.jetstream).toBe(true);
    expect(await api(n, '$JS.API.INFO')).toEqual({ type: 'io.nats.jetstream.api.v1.account_info_response', error: NOT_ENABLED });
    const health = await fetch(`http://127.0.0.1:${s.httpPort}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('an account’s streams and consumers come back after a restart, in that account only', async () => {
    const conf = writeConf(`
jetstream { store_dir: "${join(dir, 'restart')}" }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: enabled, users: [ { user: b, password: b } ] }
}`);
    const first = await startFlotilla({ args: ['-c', conf] });
    const a1 = await connect({ servers: first.url, reconnect: false, user: 'a', pass: 'a' });
    expect(errorOf(await api(a1, '$JS.API.STREAM.CREATE.KEPT', stream('KEPT')))).toBeUndefined();
    expect(errorOf(await api(a1, '$JS.API.CONSUMER.DURABLE.CREATE.KEPT.d', { stream_name: 'KEPT', config: { durable_name: 'd', ack_policy: 'explicit' } }))).toBeUndefined();
    for (let i = 0; i < 4; i++) expect(await api(a1, 'kept.x', `m${i}`)).toEqual({ stream: 'KEPT', seq: i + 1 });
    await a1.close();
    const code = await first.stop();
    if (!AGAINST_NATS_SERVER) expect(code).toBe(0);

    const s = await serverWith(`jetstream { store_dir: "${join(dir, 'restart')}" }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: enabled, users: [ { user: b, password: b } ] }
}`);
    const a = await login(s, 'a');
    const b = await login(s, 'b');
    expect(((await api(a, '$JS.API.STREAM.INFO.KEPT'))?.['state'] as Record<string, unknown>)['messages']).toBe(4);
    expect((await api(a, '$JS.API.CONSUMER.INFO.KEPT.d'))?.['num_pending']).toBe(4);
    // nats-server sends null for no names, Flotilla [] (as for the global account): either way, none.
    expect((await api(b, '$JS.API.STREAM.NAMES'))?.['streams'] ?? []).toEqual([]);
    expect(await api(b, '$JS.API.INFO')).toMatchObject({ streams: 0, consumers: 0 });
  });
});

const LIMITS_CONF = (storeDir: string): string => `
jetstream { store_dir: "${storeDir}" }
accounts {
  L: {
    jetstream: { max_mem: 1024, max_file: 4096, max_streams: 2, max_consumers: 1, max_ack_pending: 5, max_bytes_required: true, store_max_stream_bytes: 2048, mem_max_stream_bytes: 512 }
    users: [ { user: l, password: l } ]
  }
  R: { jetstream: { max_mem: 1000, max_file: 1000 }, users: [ { user: r, password: r } ] }
}`;

describe('JetStream account limits', () => {
  it('streams: max_bytes required and capped (10113, 10122), max streams (10027), max_consumers (10026)', async () => {
    const s = await serverWith(LIMITS_CONF(join(dir, 'limits-streams')));
    const l = await login(s, 'l');
    const create = async (name: string, extra: object): Promise<unknown> => errorOf(await api(l, `$JS.API.STREAM.CREATE.${name}`, stream(name, extra)));
    expect(await create('S1', {})).toEqual({ code: 400, err_code: 10113, description: 'account requires a stream config to have max bytes set' });
    expect(await create('S1', { max_bytes: 4000 })).toEqual({ code: 400, err_code: 10122, description: 'stream max bytes exceeds account limit max stream bytes' });
    expect(await create('S1', { max_bytes: 600, storage: 'memory' })).toEqual({ code: 400, err_code: 10122, description: 'stream max bytes exceeds account limit max stream bytes' });
    expect(await create('S1', { max_bytes: 1000, max_consumers: 5 })).toEqual({ code: 400, err_code: 10026, description: 'maximum consumers limit reached' });
    expect(await create('S1', { max_bytes: 1000 })).toBeUndefined();
    expect(await create('S2', { max_bytes: 2048 })).toBeUndefined();
    const maxStreams = { code: 400, err_code: 10027, description: 'maximum number of streams reached' };
    expect(await create('S3', { max_bytes: 10 })).toEqual(maxStreams);
    // 2.14 does not count the stream itself (countStreams skips its name): an identical create answers it;
    // 2.9 counted it.
    expect(await create('S1', { max_bytes: 1000 })).toEqual(AGAINST_NATS_SERVER ? maxStreams : undefined);
    // An update is held to the caps too.
    expect(errorOf(await api(l, '$JS.API.STREAM.UPDATE.S1', stream('S1', { max_bytes: 3500 })))).toEqual({
      code: 400,
      err_code: 10122,
      description: 'stream max bytes exceeds account limit max stream bytes',
    });
    expect(errorOf(await api(l, '$JS.API.STREAM.UPDATE.S1', stream('S1', { max_bytes: 2048 })))).toBeUndefined();
    const info = await api(l, '$JS.API.INFO');
    expect(info).toMatchObject({
      type: 'io.nats.jetstream.api.v1.account_info_response',
      memory: 0,
      storage: 0,
      streams: 2,
      consumers: 0,
      limits: {
        max_memory: 1024,
        max_storage: 4096,
        max_streams: 2,
        max_consumers: 1,
        max_ack_pending: 5,
        memory_max_stream_bytes: 512,
        storage_max_stream_bytes: 2048,
        max_bytes_required: true,
      },
    });
    expect(info?.['tiers']).toBeUndefined();
    if (!AGAINST_NATS_SERVER) expect(info).toMatchObject({ reserved_memory: 0, reserved_storage: 4096 }); // 2.9 has no reserved_*
  });

  it('consumers: the account’s max_consumers per stream (10026) and max_ack_pending as default and cap (10121)', async () => {
    const s = await serverWith(LIMITS_CONF(join(dir, 'limits-consumers')));
    const l = await login(s, 'l');
    expect(errorOf(await api(l, '$JS.API.STREAM.CREATE.S1', stream('S1', { max_bytes: 1000 })))).toBeUndefined();
    expect(errorOf(await api(l, '$JS.API.STREAM.CREATE.S2', stream('S2', { max_bytes: 1000 })))).toBeUndefined();
    const durable = (s: string, name: string, extra: object = {}): object => ({ stream_name: s, config: { durable_name: name, ack_policy: 'explicit', ...extra } });
    const c1 = await api(l, '$JS.API.CONSUMER.DURABLE.CREATE.S1.c1', durable('S1', 'c1'));
    expect((c1?.['config'] as Record<string, unknown>)['max_ack_pending']).toBe(5);
    expect(errorOf(await api(l, '$JS.API.CONSUMER.DURABLE.CREATE.S1.c2', durable('S1', 'c2')))).toEqual({
      code: 400,
      err_code: 10026,
      description: 'maximum consumers limit reached',
    });
    // Per stream: S2 still takes one.
    expect(errorOf(await api(l, '$JS.API.CONSUMER.DURABLE.CREATE.S2.c1', durable('S2', 'c1')))).toBeUndefined();
    expect(errorOf(await api(l, '$JS.API.CONSUMER.DURABLE.CREATE.S1.c1', durable('S1', 'c1', { max_ack_pending: 10 })))).toEqual({
      code: 400,
      err_code: 10121,
      description: 'consumer max ack pending exceeds system limit of 5',
    });
    expect(await api(l, '$JS.API.INFO')).toMatchObject({ streams: 2, consumers: 2 });
  });

  it('bytes: reservations of max_bytes (10047, 10028) and publishes over the account’s storage (10002)', async () => {
    const s = await serverWith(LIMITS_CONF(join(dir, 'limits-bytes')));
    const r = await login(s, 'r');
    const create = async (name: string, extra: object): Promise<unknown> => errorOf(await api(r, `$JS.API.STREAM.CREATE.${name}`, stream(name, extra)));
    expect(await create('F1', { max_bytes: 800 })).toBeUndefined();
    expect(await create('F2', { max_bytes: 800 })).toEqual({ code: 500, err_code: 10047, description: 'insufficient storage resources available' });
    expect(await create('M1', { max_bytes: 2000, storage: 'memory' })).toEqual({ code: 500, err_code: 10028, description: 'insufficient memory resources available' });
    expect(errorOf(await api(r, '$JS.API.STREAM.DELETE.F1'))).toBeUndefined();
    expect(await create('F3', {})).toBeUndefined();
    expect(await create('M2', { storage: 'memory' })).toBeUndefined();
    const exceeded = { code: 400, err_code: 10002, description: 'resource limits exceeded for account' };
    const payload = 'x'.repeat(300);
    // A file message counts 22 + subject + payload + 8 bytes (334): the third would pass 1000.
    expect(await api(r, 'f3.a', payload)).toEqual({ stream: 'F3', seq: 1 });
    expect(await api(r, 'f3.a', payload)).toEqual({ stream: 'F3', seq: 2 });
    expect(await api(r, 'f3.a', payload)).toEqual({ stream: 'F3', seq: 0, error: exceeded });
    // A memory message counts subject + payload + 16 (320): the fourth would pass 1000.
    for (let i = 1; i <= 3; i++) expect(await api(r, 'm2.a', payload)).toEqual({ stream: 'M2', seq: i });
    expect(await api(r, 'm2.a', payload)).toEqual({ stream: 'M2', seq: 0, error: exceeded });
    expect(await api(r, '$JS.API.INFO')).toMatchObject({ memory: 960, storage: 668, streams: 2 });
  });

  it('accounts whose limits together pass the server’s do not start', async () => {
    const file = writeConf(`
jetstream { store_dir: "${join(dir, 'too-big')}", max_file_store: 1000 }
accounts { A: { jetstream: { max_file: 800 }, users: [ { user: a, password: a } ] }, B: { jetstream: { max_file: 800 }, users: [ { user: b, password: b } ] } }`);
    await expect(startFlotilla({ args: ['-c', file], timeoutMs: 5000 })).rejects.toThrow(/insufficient storage resources available/);
  });
});
