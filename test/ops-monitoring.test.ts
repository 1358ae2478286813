// One JetStream node: /metrics per stream, consumer and API operation, fsync histograms; /jsz, /varz
// jetstream, /healthz options and /routez as an unclustered node serves them.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { scrape, select, valueOf } from './ops-prometheus-text.js';

let s: JetStreamServer;

const get = async (path: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(`http://127.0.0.1:${s.server.httpPort}${path}`);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // plain-text answers (leader-only refusals) stay text
  }
  return { status: res.status, body };
};

beforeAll(async () => {
  s = await startJetStreamServer('flotilla-ops-mon-');
  await s.jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
  await s.jsm.consumers.add('ORDERS', { durable_name: 'worker', ack_policy: AckPolicy.Explicit });
});

afterAll(async () => {
  await s.stop();
});

describe('/metrics on one JetStream node', () => {
  it('exports stream and consumer state, API requests by operation and fsync latency', async () => {
    const before = await scrape(s.server.httpPort);
    const fsyncBefore = valueOf(before, 'flotilla_fsync_seconds_count', { kind: 'stream_store' });
    for (let i = 0; i < 20; i++) await s.js.publish(`orders.${i % 3}`, new TextEncoder().encode('0123456789'));
    const c = await s.js.consumers.get('ORDERS', 'worker');
    const batch = await c.fetch({ max_messages: 5, expires: 2000 });
    let acked = 0;
    for await (const m of batch) {
      if (acked < 3) m.ack();
      acked++;
    }
    await s.nc.flush();
    const after = await scrape(s.server.httpPort);

    expect(valueOf(after, 'flotilla_stream_messages', { stream: 'ORDERS' })).toBe(20);
    expect(valueOf(after, 'flotilla_stream_first_seq', { stream: 'ORDERS' })).toBe(1);
    expect(valueOf(after, 'flotilla_stream_last_seq', { stream: 'ORDERS' })).toBe(20);
    expect(valueOf(after, 'flotilla_stream_bytes', { stream: 'ORDERS' })).toBeGreaterThan(200);
    expect(valueOf(after, 'flotilla_stream_consumers', { stream: 'ORDERS' })).toBe(1);
    expect(valueOf(after, 'flotilla_jetstream_streams')).toBe(1);
    const consumer = { stream: 'ORDERS', consumer: 'worker' };
    expect(valueOf(after, 'flotilla_consumer_num_pending', consumer)).toBe(15);
    expect(valueOf(after, 'flotilla_consumer_num_ack_pending', consumer)).toBe(2);
    expect(valueOf(after, 'flotilla_consumer_delivered_stream_seq', consumer)).toBe(5);
    expect(valueOf(after, 'flotilla_consumer_ack_floor_stream_seq', consumer)).toBe(3);
    expect(valueOf(after, 'flotilla_consumer_num_redelivered', consumer)).toBe(0);
    expect(valueOf(after, 'flotilla_consumer_num_waiting', consumer)).toBe(0);

    // Every publish above stored with fsync (sync: always) and was timed.
    expect(valueOf(after, 'flotilla_fsync_seconds_count', { kind: 'stream_store' }) - fsyncBefore).toBeGreaterThanOrEqual(20);
    expect(valueOf(after, 'flotilla_fsync_seconds_sum', { kind: 'stream_store' })).toBeGreaterThan(0);
    expect(select(after, 'flotilla_fsync_seconds_bucket', { kind: 'stream_store', le: '+Inf' })[0]!.value).toBe(
      valueOf(after, 'flotilla_fsync_seconds_count', { kind: 'stream_store' }),
    );

    const reqs = (op: string, samples = after) => select(samples, 'flotilla_jetstream_api_requests_total', { operation: op })[0]?.value ?? 0;
    expect(reqs('STREAM.CREATE')).toBe(1);
    expect(reqs('CONSUMER.DURABLE.CREATE') + reqs('CONSUMER.CREATE')).toBe(1);
    expect(reqs('CONSUMER.INFO') - reqs('CONSUMER.INFO', before)).toBe(1);
    expect(reqs('CONSUMER.MSG.NEXT') - reqs('CONSUMER.MSG.NEXT', before)).toBeGreaterThanOrEqual(1);
    // Every sample carries the node's name, and no series is per subject.
    expect(after.every((x) => typeof x.labels['server_name'] === 'string')).toBe(true);
    expect(after.some((x) => Object.values(x.labels).some((v) => v.startsWith('orders.')))).toBe(false);
  });

  it('counts API errors by operation and error code', async () => {
    const notFound = { operation: 'STREAM.INFO', err_code: '10059' };
    const count = (samples: Awaited<ReturnType<typeof scrape>>) => select(samples, 'flotilla_jetstream_api_errors_total', notFound)[0]?.value ?? 0;
    const before = count(await scrape(s.server.httpPort));
    await expect(s.jsm.streams.info('MISSING')).rejects.toThrow();
    await expect(s.jsm.streams.info('MISSING2')).rejects.toThrow();
    await expect(s.jsm.consumers.info('ORDERS', 'nobody')).rejects.toThrow();
    const after = await scrape(s.server.httpPort);
    expect(count(after) - before).toBe(2);
    expect(valueOf(after, 'flotilla_jetstream_api_errors_total', { operation: 'CONSUMER.INFO', err_code: '10014' })).toBe(1);
    expect(valueOf(after, 'flotilla_jetstream_api_requests_total', { operation: 'STREAM.INFO' })).toBeGreaterThanOrEqual(2);
  });

  it('keeps /varz out_msgs free of the metrics observer', async () => {
    const v1 = (await get('/varz')).body;
    await s.jsm.streams.info('ORDERS');
    const v2 = (await get('/varz')).body;
    // request in → JetStream (1 out), reply → client (1 out)
    expect(v2.out_msgs - v1.out_msgs).toBe(2);
  });
});

describe('monitoring JSON of an unclustered JetStream node', () => {
  it('/jsz totals, and details with streams, consumers and config', async () => {
    const plain = (await get('/jsz')).body;
    expect(plain).toMatchObject({ accounts: 1, ha_assets: 0, streams: 1, consumers: 1 });
    expect(plain.messages).toBeGreaterThanOrEqual(20);
    expect(plain.config.store_dir).toBe(s.storeDir);
    expect(plain.api.total).toBeGreaterThan(0);
    expect(plain.meta_cluster).toBeUndefined();
    expect(plain.account_details).toBeUndefined();

    const detail = (await get('/jsz?consumers=true&config=true')).body;
    const stream = detail.account_details[0].stream_detail[0];
    expect(detail.account_details[0].name).toBe('$G');
    expect(stream.name).toBe('ORDERS');
    expect(stream.config.subjects).toEqual(['orders.>']);
    expect(stream.state).toMatchObject({ first_seq: 1, consumer_count: 1 });
    expect(stream.consumer_detail[0]).toMatchObject({ stream_name: 'ORDERS', name: 'worker' });
    expect(stream.consumer_detail[0].config.durable_name).toBe('worker');

    const streamsOnly = (await get('/jsz?streams=true')).body.account_details[0].stream_detail[0];
    expect(streamsOnly.config).toBeUndefined();
    expect(streamsOnly.consumer_detail).toBeUndefined();
    expect((await get('/jsz?acc=OTHER')).body.account_details).toEqual([]);
    // Unclustered, this node is the leader of everything it serves.
    expect((await get('/jsz?leader-only=true')).status).toBe(200);
  });

  it('/varz carries the jetstream config and stats', async () => {
    const v = (await get('/varz')).body;
    expect(v.jetstream.config.store_dir).toBe(s.storeDir);
    expect(v.jetstream.stats).toMatchObject({ accounts: 1, ha_assets: 0 });
    expect(v.jetstream.stats.api.total).toBeGreaterThan(0);
    expect(v.jetstream.meta).toBeUndefined();
  });

  it('/healthz with the nats-server query options', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/healthz?js-enabled-only=true')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/healthz?js-server-only=true')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('/routez of a node without routes', async () => {
    expect((await get('/routez')).body).toMatchObject({ num_routes: 0, routes: [], peers: [] });
  });
});
