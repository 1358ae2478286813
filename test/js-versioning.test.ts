// JetStream versioning (ADR-44) end to end, as nats-server 2.14.5 does it (jetstream_versioning.go and its
// callers in jetstream_api.go / jetstream_cluster.go): `$JS.API.INFO`'s `api.level`, the `_nats.req.level`
// stored with each stream and consumer config (recomputed on create, update and pause), the dynamic
// `_nats.ver` / `_nats.level` every answer adds, `ts` in StreamInfo and ConsumerInfo, and
// `Nats-Required-Api-Level` against our level. One node through the stock v3 client, three nodes through v2.
// nats-server 2.9.10 has none of this (no levels, no `ts`): only the idempotent re-create with an info's config
// runs against it too.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { headers as v3Headers, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { headers as v2Headers } from 'nats';
import { ADVERTISED_NATS_VERSION, JS_API_LEVEL } from '../packages/jetstream/src/api/api-level.js';
import { JetStreamV3Server } from './helpers/jetstream-v3-server.js';
import { AGAINST_NATS_SERVER, addStream, apiRequest, useJsCluster, type JsCluster } from './helpers/js-cluster.js';
import { allReplies } from './helpers/api-replies.js';

const dec = new TextDecoder();
const enc = new TextEncoder();
const dynamic = { '_nats.ver': ADVERTISED_NATS_VERSION, '_nats.level': String(JS_API_LEVEL) };
const REQUIRED = { code: 412, err_code: 10185, description: 'JetStream minimum api level required' };

/** A `ts` of an answer gathered between `before` and now (Go's RFC 3339 in UTC). */
function expectFreshTs(ts: unknown, beforeMs: number): void {
  expect(typeof ts).toBe('string');
  expect(ts as string).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  const ms = Date.parse(ts as string);
  expect(ms).toBeGreaterThanOrEqual(beforeMs - 1000);
  expect(ms).toBeLessThanOrEqual(Date.now() + 1000);
}

async function raw(nc: NatsConnection, subject: string, body: object | string, level?: string): Promise<Record<string, unknown>> {
  const h = v3Headers();
  if (level !== undefined) h.set('Nats-Required-Api-Level', level);
  const m = await nc.request(subject, enc.encode(typeof body === 'string' ? body : JSON.stringify(body)), { timeout: 5000, headers: h });
  return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
}

describe.skipIf(AGAINST_NATS_SERVER)('versioning on one node (stock @nats-io/jetstream)', () => {
  const srv = new JetStreamV3Server('flotilla-versioning-');
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    ({ nc, jsm } = await srv.start());
  });
  afterAll(async () => {
    expect(await srv.remove()).toBe(0);
  });

  it('$JS.API.INFO reports our api.level (docs/compatibility.md), before the request counts', async () => {
    const info = await jsm.getAccountInfo();
    expect(info.api.level).toBe(JS_API_LEVEL);
    expect(JS_API_LEVEL).toBe(2); // nats-server 2.12's; pinned to the table by compatibility-table.test.ts
  });

  it('a stream stores the level it needs; every answer adds this server\'s version and level, and ts', async () => {
    const before = Date.now();
    const plain = await jsm.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
    expect(plain.config.metadata).toEqual({ '_nats.req.level': '0', ...dynamic });
    expectFreshTs((plain as unknown as { ts: unknown }).ts, before);
    // A client's _nats.* keys: the dynamic ones are dropped, the level is the server's own computation.
    const ttl = await jsm.streams.add({ name: 'TTL', subjects: ['ttl.>'], allow_msg_ttl: true, metadata: { team: 'a', '_nats.ver': '0.0.1', '_nats.req.level': '9' } });
    expect(ttl.config.metadata).toEqual({ team: 'a', '_nats.req.level': '1', ...dynamic });
    const info = await jsm.streams.info('TTL');
    expect(info.config.metadata).toEqual({ team: 'a', '_nats.req.level': '1', ...dynamic });
    expectFreshTs((info as unknown as { ts: unknown }).ts, before);
    const listed = (await jsm.streams.list().next()).find((s) => s.config.name === 'TTL');
    expect(listed?.config.metadata).toEqual({ team: 'a', '_nats.req.level': '1', ...dynamic });
    expectFreshTs((listed as unknown as { ts: unknown }).ts, before);
  });

  it('re-creating with the config an info returned is the same stream; an update recomputes the level', async () => {
    const info = await jsm.streams.info('PLAIN');
    const again = await raw(nc, '$JS.API.STREAM.CREATE.PLAIN', info.config);
    expect(again['error']).toBeUndefined();
    expect((again['config'] as { metadata: unknown }).metadata).toEqual({ '_nats.req.level': '0', ...dynamic });
    const updated = await jsm.streams.update('PLAIN', { ...info.config, allow_msg_ttl: true });
    expect(updated.config.metadata).toEqual({ '_nats.req.level': '1', ...dynamic });
  });

  it('a consumer stores its level: pause raises it to 1, resume lowers it; priority groups need 1', async () => {
    const before = Date.now();
    const ci = await jsm.consumers.add('PLAIN', { durable_name: 'C', ack_policy: AckPolicy.Explicit });
    expect(ci.config.metadata).toEqual({ '_nats.req.level': '0', ...dynamic });
    expectFreshTs((ci as unknown as { ts: unknown }).ts, before);
    await jsm.consumers.pause('PLAIN', 'C', new Date(Date.now() + 3_600_000));
    expect((await jsm.consumers.info('PLAIN', 'C')).config.metadata).toEqual({ '_nats.req.level': '1', ...dynamic });
    // The client resumes with 1970-01-01, which is not Go's zero time: 2.14 still counts it as a pause.
    await jsm.consumers.resume('PLAIN', 'C');
    expect((await jsm.consumers.info('PLAIN', 'C')).config.metadata).toEqual({ '_nats.req.level': '1', ...dynamic });
    // A pause request without pause_until clears it, and the level with it.
    expect(await raw(nc, '$JS.API.CONSUMER.PAUSE.PLAIN.C', {})).toMatchObject({ paused: false });
    const resumed = await jsm.consumers.info('PLAIN', 'C');
    expect(resumed.config.metadata).toEqual({ '_nats.req.level': '0', ...dynamic });
    expectFreshTs((resumed as unknown as { ts: unknown }).ts, before);
    // Re-creating with the info's config (dynamic keys included) is the same consumer.
    const again = await raw(nc, '$JS.API.CONSUMER.CREATE.PLAIN.C', { stream_name: 'PLAIN', config: resumed.config, action: 'create' });
    expect(again['error']).toBeUndefined();
    const grouped = await jsm.consumers.add('PLAIN', {
      durable_name: 'G', ack_policy: AckPolicy.Explicit, priority_groups: ['jobs'], priority_policy: 'overflow', metadata: { owner: 'x' },
    } as never);
    expect(grouped.config.metadata).toEqual({ owner: 'x', '_nats.req.level': '1', ...dynamic });
  });

  it('Nats-Required-Api-Level: our level is served, the next one is refused with 412 / 10185', async () => {
    expect((await raw(nc, '$JS.API.STREAM.INFO.PLAIN', '', String(JS_API_LEVEL)))['error']).toBeUndefined();
    expect(await raw(nc, '$JS.API.STREAM.INFO.PLAIN', '', String(JS_API_LEVEL + 1))).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_info_response', error: REQUIRED });
    expect((await raw(nc, '$JS.API.INFO', '', String(JS_API_LEVEL + 1)))['error']).toEqual(REQUIRED);
  });

  it('the stored level survives a restart', async () => {
    const names = async () => (await jsm.consumers.list('PLAIN').next()).map((c) => c.name).sort();
    expect(await names()).toEqual(['C', 'G']);
    expect(await srv.stop()).toBe(0);
    ({ nc, jsm } = await srv.start());
    expect(await names()).toEqual(['C', 'G']);
    expect((await jsm.streams.info('TTL')).config.metadata).toEqual({ team: 'a', '_nats.req.level': '1', ...dynamic });
    expect((await jsm.consumers.info('PLAIN', 'G')).config.metadata).toEqual({ owner: 'x', '_nats.req.level': '1', ...dynamic });
  });
});

describe('versioning on three nodes', () => {
  const startedMs = Date.now();
  let cluster: JsCluster;
  useJsCluster({ size: 3 }, (c) => (cluster = c));

  it('an R3 stream re-created through another node with its info\'s config is the same stream', async () => {
    const n1 = await cluster.connect('n1');
    const created = await addStream(await n1.jetstreamManager(), { name: 'V3', subjects: ['v3.>'], num_replicas: 3 });
    const n2 = await cluster.connect('n2');
    const again = await apiRequest(n2, '$JS.API.STREAM.CREATE.V3', created.config, 15_000);
    expect((again['config'] as { name: string }).name).toBe('V3');
    await n1.close();
    await n2.close();
  });

  it.skipIf(AGAINST_NATS_SERVER)('every node answers with the stored level, its version and level, and ts; INFO says our level', async () => {
    const before = Date.now();
    for (const node of ['n1', 'n2', 'n3']) {
      const nc = await cluster.connect(node);
      const info = await apiRequest(nc, '$JS.API.STREAM.INFO.V3', '');
      expect((info['config'] as { metadata: unknown }).metadata, node).toEqual({ '_nats.req.level': '0', ...dynamic });
      expectFreshTs(info['ts'], before);
      // The leader answers, with when it began to lead (2.11+ ClusterInfo.leader_since).
      const since = Date.parse((info['cluster'] as { leader_since: string }).leader_since);
      expect(since).toBeGreaterThanOrEqual(startedMs - 1000);
      expect(since).toBeLessThanOrEqual(Date.now());
      expect((await apiRequest(nc, '$JS.API.INFO', ''))['api']).toMatchObject({ level: JS_API_LEVEL });
      await nc.close();
    }
    const nc = await cluster.connect('n3');
    const ci = await apiRequest(nc, '$JS.API.CONSUMER.CREATE.V3.W', { stream_name: 'V3', config: { durable_name: 'W', ack_policy: 'explicit', num_replicas: 3 } }, 15_000);
    expect((ci['config'] as { metadata: unknown }).metadata).toEqual({ '_nats.req.level': '0', ...dynamic });
    expectFreshTs(ci['ts'], before);
    const paused = await apiRequest(nc, '$JS.API.CONSUMER.PAUSE.V3.W', { pause_until: new Date(Date.now() + 3_600_000).toISOString() }, 15_000);
    expect(paused['paused']).toBe(true);
    const info = await apiRequest(nc, '$JS.API.CONSUMER.INFO.V3.W', '');
    expect((info['config'] as { metadata: unknown }).metadata).toEqual({ '_nats.req.level': '1', ...dynamic });
    // One answer per request, 412 above our level, through a follower too.
    const h = v2Headers();
    h.set('Nats-Required-Api-Level', String(JS_API_LEVEL + 1));
    const refused = await allReplies(nc, '$JS.API.CONSUMER.INFO.V3.W', '', { headers: h });
    expect(refused.length).toBe(1);
    expect(refused[0]!['error']).toEqual(REQUIRED);
    await nc.close();
  });
});
