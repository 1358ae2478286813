import { ADVERTISED_NATS_VERSION, JS_API_LEVEL } from '../src/api/api-level.js';
import { describe, expect, it } from 'vitest';
import { fixture } from './support/consumer-fixture.js';

const T = 'io.nats.jetstream.api.v1.';

describe('consumer API: create, info, list, names, delete', () => {
  it('creates a durable pull consumer with nats-server defaults and reports its info', async () => {
    const f = await fixture();
    for (let i = 0; i < 3; i++) await f.publish('s.a');
    const r = await f.api('$JS.API.CONSUMER.DURABLE.CREATE.S.D1', { stream_name: 'S', config: { durable_name: 'D1', ack_policy: 'explicit' } });
    expect(r.type).toBe(`${T}consumer_create_response`);
    expect(r.stream_name).toBe('S');
    expect(r.name).toBe('D1');
    expect(r.config).toEqual({
      durable_name: 'D1',
      deliver_policy: 'all',
      ack_policy: 'explicit',
      ack_wait: 30000000000,
      max_deliver: -1,
      replay_policy: 'instant',
      max_waiting: 512,
      max_ack_pending: 1000,
      num_replicas: 0,
      // 2.14's server-set metadata (api-level.ts): the stored level, and this server's version and level.
      metadata: { '_nats.req.level': '0', '_nats.ver': ADVERTISED_NATS_VERSION, '_nats.level': String(JS_API_LEVEL) },
    });
    expect(r.delivered).toEqual({ consumer_seq: 0, stream_seq: 0 });
    expect(r.ack_floor).toEqual({ consumer_seq: 0, stream_seq: 0 });
    expect([r.num_ack_pending, r.num_redelivered, r.num_waiting, r.num_pending]).toEqual([0, 0, 0, 3]);
    const info = await f.api('$JS.API.CONSUMER.INFO.S.D1');
    expect(info.type).toBe(`${T}consumer_info_response`);
    expect(info.num_pending).toBe(3);
  });

  it('honours the subject forms and their name rules', async () => {
    const f = await fixture();
    const named = await f.api('$JS.API.CONSUMER.CREATE.S.C1.s.a', { stream_name: 'S', config: { filter_subject: 's.a', ack_policy: 'none' } });
    expect(named.name).toBe('C1');
    expect(named.config.name).toBe('C1');
    expect(named.config.inactive_threshold).toBe(5_000_000_000);
    const legacy = await f.api('$JS.API.CONSUMER.CREATE.S', { stream_name: 'S', config: { ack_policy: 'none' } });
    expect(legacy.name).toMatch(/^[A-Za-z0-9]{8}$/);
    const legacyNamed = await f.api('$JS.API.CONSUMER.CREATE.S', { stream_name: 'S', config: { name: 'ORD1', ack_policy: 'none' } });
    expect(legacyNamed.name).toBe('ORD1');

    const err = async (subject: string, body: unknown) => (await f.api(subject, body)).error;
    expect(await err('$JS.API.CONSUMER.CREATE.S', { stream_name: 'S', config: { durable_name: 'X' } })).toEqual({
      code: 400,
      err_code: 10020,
      description: 'consumer expected to be ephemeral but a durable name was set in request',
    });
    expect((await err('$JS.API.CONSUMER.CREATE.S.A', { stream_name: 'S', config: { durable_name: 'B' } })).err_code).toBe(10017);
    expect((await err('$JS.API.CONSUMER.DURABLE.CREATE.S.A', { stream_name: 'S', config: { durable_name: 'B' } })).err_code).toBe(10017);
    expect((await err('$JS.API.CONSUMER.DURABLE.CREATE.S.A', { stream_name: 'S', config: {} })).err_code).toBe(10018);
    expect((await err('$JS.API.CONSUMER.CREATE.S.A.s.b', { stream_name: 'S', config: { filter_subject: 's.c' } })).err_code).toBe(10131);
    expect((await err('$JS.API.CONSUMER.CREATE.S.A', { stream_name: 'T', config: {} })).err_code).toBe(10056);
    expect(await err('$JS.API.CONSUMER.CREATE.S.A', 'not json')).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON' });
    expect((await err('$JS.API.CONSUMER.CREATE.S.A', { stream_name: 'S', config: { ack_policy: 'sometimes' } })).err_code).toBe(10025);
    expect((await err('$JS.API.CONSUMER.CREATE.S.A', { stream_name: 'S', config: { num_replicas: 3 } })).err_code).toBe(10074);
  });

  it('validates the config with nats-server errors', async () => {
    const f = await fixture();
    const create = async (config: object) => (await f.api('$JS.API.CONSUMER.CREATE.S.V', { stream_name: 'S', config })).error;
    expect((await create({ idle_heartbeat: 1e9 })).err_code).toBe(10088);
    expect((await create({ flow_control: true })).err_code).toBe(10089);
    expect(await create({ deliver_policy: 'by_start_sequence' })).toEqual({
      code: 400,
      err_code: 10094,
      description: 'consumer delivery policy is deliver by start sequence, but optional start sequence is not set',
    });
    expect((await create({ deliver_policy: 'last_per_subject' })).description).toBe(
      'consumer delivery policy is deliver last per subject, but optional filter subject is not set',
    );
    expect((await create({ deliver_subject: 'out', flow_control: true })).err_code).toBe(10108);
    expect((await create({ deliver_subject: 'out', max_waiting: 10 })).err_code).toBe(10080);
    expect((await create({ deliver_subject: 'out.*' })).err_code).toBe(10079);
    expect((await create({ deliver_subject: 's.x' })).err_code).toBe(10081);
    expect((await create({ ack_policy: 'explicit', backoff: [1e9, 2e9], max_deliver: 2 })).err_code).toBe(10116);
    expect((await create({ filter_subject: 'other.>' })).err_code).toBe(10093);
    expect((await create({ filter_subjects: ['s.a', 's.*'] })).err_code).toBe(10138);
    expect((await create({ filter_subject: 's.a', filter_subjects: ['s.b'] })).err_code).toBe(10136);
    // a request without config is the zero config (nats-server holds it by value): an ephemeral
    const bare = await f.api('$JS.API.CONSUMER.CREATE.S', { stream_name: 'S' });
    expect(bare.config).toMatchObject({ deliver_policy: 'all', ack_policy: 'none', inactive_threshold: 5e9 });
  });

  it('applies action create/update semantics', async () => {
    const f = await fixture();
    const cfg = { durable_name: 'D', ack_policy: 'explicit' };
    expect((await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: cfg, action: 'create' })).name).toBe('D');
    // identical create is idempotent
    expect((await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: cfg, action: 'create' })).error).toBeUndefined();
    const diff = await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { ...cfg, max_deliver: 5 }, action: 'create' });
    expect(diff.error).toEqual({ code: 400, err_code: 10148, description: 'consumer already exists' });
    const upd = await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { ...cfg, max_deliver: 5 }, action: 'update' });
    expect(upd.config.max_deliver).toBe(5);
    const missing = await f.api('$JS.API.CONSUMER.CREATE.S.E', { stream_name: 'S', config: { durable_name: 'E' }, action: 'update' });
    expect(missing.error).toEqual({ code: 400, err_code: 10149, description: 'consumer does not exist' });
    const refused = await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { ...cfg, ack_policy: 'all' } });
    expect(refused.error).toEqual({ code: 500, err_code: 10012, description: 'ack policy can not be updated' });
  });

  it('lists, names (sorted, paged) and deletes', async () => {
    const f = await fixture();
    for (const n of ['b', 'a', 'c']) await f.api(`$JS.API.CONSUMER.CREATE.S.${n}`, { stream_name: 'S', config: { durable_name: n } });
    const names = await f.api('$JS.API.CONSUMER.NAMES.S');
    expect(names).toMatchObject({ type: `${T}consumer_names_response`, total: 3, offset: 0, limit: 1024, consumers: ['a', 'b', 'c'] });
    const page = await f.api('$JS.API.CONSUMER.NAMES.S', { offset: 2 });
    expect(page.consumers).toEqual(['c']);
    const list = await f.api('$JS.API.CONSUMER.LIST.S');
    expect(list.limit).toBe(256);
    expect(list.consumers.map((c: { name: string }) => c.name)).toEqual(['a', 'b', 'c']);
    expect(await f.api('$JS.API.CONSUMER.DELETE.S.b')).toEqual({ type: `${T}consumer_delete_response`, success: true });
    expect((await f.api('$JS.API.CONSUMER.DELETE.S.b')).error).toEqual({ code: 404, err_code: 10014, description: 'consumer not found' });
    expect((await f.api('$JS.API.CONSUMER.INFO.S.b')).error.err_code).toBe(10014);
    expect((await f.api('$JS.API.CONSUMER.INFO.NOPE.b')).error.err_code).toBe(10059);
    expect((await f.api('$JS.API.CONSUMER.NAMES.NOPE')).error.err_code).toBe(10059);
    expect(f.service.consumerCount('S')).toBe(2);
  });

  it('refuses workqueue consumers that overlap or are not explicit-ack', async () => {
    const f = await fixture({ retention: 'workqueue' });
    const create = (name: string, config: object) => f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { durable_name: name, ...config } });
    expect((await create('n', { ack_policy: 'none' })).error.err_code).toBe(10084);
    expect((await create('a', { ack_policy: 'explicit', filter_subject: 's.a.>' })).error).toBeUndefined();
    expect((await create('b', { ack_policy: 'explicit' })).error).toEqual({
      code: 400,
      err_code: 10099,
      description: 'multiple non-filtered consumers not allowed on workqueue stream',
    });
    expect((await create('c', { ack_policy: 'explicit', filter_subject: 's.*.x' })).error.err_code).toBe(10100);
    expect((await create('d', { ack_policy: 'explicit', filter_subject: 's.b' })).error).toBeUndefined();
  });
});
