import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JetStreamService, type JetStreamServiceOptions } from '../src/jetstream-service.js';
import { FakeBus } from './support/fake-bus.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const dirs: string[] = [];
const services: JetStreamService[] = [];

async function service(storeDir?: string, extra: Partial<JetStreamServiceOptions> = {}): Promise<{ bus: FakeBus; js: JetStreamService; dir: string }> {
  const dir = storeDir ?? mkdtempSync(join(tmpdir(), 'flotilla-js-api-'));
  if (!storeDir) dirs.push(dir);
  const bus = new FakeBus();
  const js = new JetStreamService(bus, { storeDir: dir, maxMemoryStoreBytes: -1, maxFileStoreBytes: -1, serverName: 'n1', serverId: 'ID1', ...extra }, silent);
  await js.start();
  services.push(js);
  return { bus, js, dir };
}

afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('JetStreamService API router', () => {
  it('answers $JS.API.INFO with account info', async () => {
    const { bus } = await service();
    await bus.request('$JS.API.STREAM.CREATE.A', { name: 'A' });
    const info = await bus.request('$JS.API.INFO');
    expect(info).toMatchObject({
      type: 'io.nats.jetstream.api.v1.account_info_response',
      memory: 0,
      storage: 0,
      streams: 1,
      consumers: 0,
      limits: { max_memory: -1, max_storage: -1, max_streams: -1, max_consumers: -1 },
      api: { total: 2, errors: 0 },
    });
  });

  it('sends nothing for unknown subjects and 10025 for bad JSON', async () => {
    const { bus } = await service();
    expect(await bus.request('$JS.API.NOPE', '', 50)).toBeNull();
    expect(await bus.request('$JS.API.STREAM.CREATE.a.b', '{}', 50)).toBeNull();
    expect(await bus.request('$JS.API.STREAM.MSG.PEEK.A', '{}', 50)).toBeNull();
    expect(await bus.request('$JS.API.STREAM.CREATE.A', '{bad')).toEqual({
      type: 'io.nats.jetstream.api.v1.stream_create_response',
      error: { code: 400, err_code: 10025, description: 'invalid JSON' },
    });
    expect(await bus.request('$JS.API.STREAM.NAMES', '[1')).toMatchObject({ error: { err_code: 10025 }, total: 0, offset: 0, limit: 0 });
    expect(await bus.request('$JS.API.STREAM.LEADER.STEPDOWN.A')).toMatchObject({
      type: 'io.nats.jetstream.api.v1.stream_leader_stepdown_response',
      error: { code: 503, err_code: 10010, description: 'JetStream clustering support required' },
    });
    expect(await bus.request('$JS.API.STREAM.PEER.REMOVE.A', { peer: 'x' })).toMatchObject({
      type: 'io.nats.jetstream.api.v1.stream_remove_peer_response',
      error: { code: 503, err_code: 10010 },
    });
    expect(await bus.request('$JS.API.META.LEADER.STEPDOWN', '', 50)).toBeNull();
  });

  it('serves the domain prefix too', async () => {
    const { bus } = await service(undefined, { domain: 'hub' });
    const r = await bus.request('$JS.hub.API.STREAM.CREATE.D', { name: 'D' });
    expect(r).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_create_response', config: { name: 'D' }, domain: 'hub' });
    expect(await bus.request('$JS.API.INFO')).toMatchObject({ domain: 'hub', streams: 1 });
  });

  it('serialises concurrent creates of one name: one stream, both succeed', async () => {
    const { bus, js } = await service();
    const [a, b] = await Promise.all([bus.request('$JS.API.STREAM.CREATE.C', { name: 'C' }), bus.request('$JS.API.STREAM.CREATE.C', { name: 'C' })]);
    expect(a!.error).toBeUndefined();
    expect(b!.error).toBeUndefined();
    expect([...js.streams()].length).toBe(1);
  });

  it('reloads file streams (config, created, messages) after stop and start', async () => {
    const first = await service();
    const created = await first.bus.request('$JS.API.STREAM.CREATE.P', { name: 'P', subjects: ['p.*'], max_msgs: 100 });
    await first.bus.request('p.1', 'hello');
    await first.bus.request('$JS.API.STREAM.CREATE.M', { name: 'M', storage: 'memory' });
    await first.js.stop();
    services.splice(services.indexOf(first.js), 1);
    const second = await service(first.dir);
    const info = await second.bus.request('$JS.API.STREAM.INFO.P');
    expect(info!.config).toEqual(created!.config);
    expect(info!.created).toBe(created!.created);
    expect(info!.state).toMatchObject({ messages: 1, last_seq: 1 });
    expect((await second.bus.request('$JS.API.STREAM.NAMES'))!.streams).toEqual(['P']);
    const got = await second.bus.request('$JS.API.STREAM.MSG.GET.P', { seq: 1 });
    expect(Buffer.from(got!.message.data, 'base64').toString()).toBe('hello');
  });

  it('enforces max_file_store / max_memory_store like nats-server', async () => {
    const { bus } = await service(undefined, { maxFileStoreBytes: 1000, maxMemoryStoreBytes: 1000 });
    expect((await bus.request('$JS.API.STREAM.CREATE.A', { name: 'A', max_bytes: 2000 }))!.error).toEqual({
      code: 500,
      err_code: 10047,
      description: 'insufficient storage resources available',
    });
    expect((await bus.request('$JS.API.STREAM.CREATE.M', { name: 'M', max_bytes: 2000, storage: 'memory' }))!.error).toEqual({
      code: 500,
      err_code: 10028,
      description: 'insufficient memory resources available',
    });
    expect((await bus.request('$JS.API.STREAM.CREATE.B', { name: 'B' }))!.error).toBeUndefined();
    expect(await bus.request('B', 'x'.repeat(1200))).toEqual({ stream: 'B', seq: 1 });
    await new Promise((r) => setTimeout(r, 60)); // usage is re-summed at most every 50 ms
    expect(await bus.request('B', 'x')).toEqual({
      error: { code: 503, err_code: 10023, description: 'insufficient resources' },
      stream: 'B',
      seq: 0,
    });
  });

  it('publishes stream action advisories when someone listens', async () => {
    const { bus } = await service();
    const seen: Array<Record<string, unknown>> = [];
    bus.subscribe('$JS.EVENT.ADVISORY.STREAM.>', (m) => seen.push({ subject: m.subject, ...JSON.parse(m.data.toString()) }));
    await bus.request('$JS.API.STREAM.CREATE.ADV', { name: 'ADV' });
    await bus.request('$JS.API.STREAM.UPDATE.ADV', { name: 'ADV', max_msgs: 5 });
    await bus.request('$JS.API.STREAM.DELETE.ADV');
    expect(seen.map((a) => [a['subject'], a['action']])).toEqual([
      ['$JS.EVENT.ADVISORY.STREAM.CREATED.ADV', 'create'],
      ['$JS.EVENT.ADVISORY.STREAM.UPDATED.ADV', 'modify'],
      ['$JS.EVENT.ADVISORY.STREAM.DELETED.ADV', 'delete'],
    ]);
    expect(seen[0]).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.stream_action', stream: 'ADV' });
  });

  it('starts sequences at first_seq', async () => {
    const { bus } = await service();
    const r = await bus.request('$JS.API.STREAM.CREATE.F', { name: 'F', first_seq: 100 });
    expect(r).toMatchObject({ config: { first_seq: 100 }, state: { first_seq: 100, last_seq: 99 } });
    expect(await bus.request('F', 'x')).toEqual({ stream: 'F', seq: 100 });
  });

  it('deletes a stream with its directory', async () => {
    const { bus } = await service();
    await bus.request('$JS.API.STREAM.CREATE.X', { name: 'X' });
    expect(await bus.request('$JS.API.STREAM.DELETE.X')).toEqual({ type: 'io.nats.jetstream.api.v1.stream_delete_response', success: true });
    expect(await bus.request('$JS.API.STREAM.DELETE.X')).toMatchObject({ error: { code: 404, err_code: 10059 } });
    expect(await bus.request('$JS.API.STREAM.DELETE.X', '{"a":1}')).toMatchObject({
      error: { code: 400, err_code: 10038, description: 'expected an empty request payload' },
    });
    expect(await bus.request('$JS.API.STREAM.DELETE.X', '{}')).toMatchObject({ error: { err_code: 10059 } });
    expect(await bus.request('$JS.API.STREAM.INFO.X', ' ')).toMatchObject({ error: { err_code: 10025 } });
    expect((await bus.request('$JS.API.STREAM.NAMES'))!.streams).toBeNull(); // nats-server answers null when there are none
  });
});
