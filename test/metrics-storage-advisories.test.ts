// /metrics on one JetStream node (Flotilla only: nats-server serves no /metrics): storage used vs limit for the
// server, the account and the stream; per-stream limits and subject counts; consumer last-delivery and
// last-ack ages; advisories counted by kind; the `cluster` label on every series; prom-client's process_* and
// nodejs_* families under their standard names; no gauge named `_total`.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy, nanos } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { scrape, select, valueOf } from './ops-prometheus-text.js';

let s: JetStreamServer;

beforeAll(async () => {
  s = await startJetStreamServer('flotilla-metrics-storage-');
  await s.jsm.streams.add({ name: 'LIM', subjects: ['lim.>'], max_bytes: 1_000_000, max_msgs: 500, max_msgs_per_subject: 50, max_age: nanos(3_600_000) });
  await s.jsm.streams.add({ name: 'MEM', subjects: ['mem.>'], storage: 'memory' as never });
  await s.jsm.consumers.add('LIM', { durable_name: 'w', ack_policy: AckPolicy.Explicit });
  await s.jsm.consumers.add('LIM', { durable_name: 'idle', ack_policy: AckPolicy.Explicit });
});
afterAll(async () => {
  await s.stop();
});

describe('/metrics storage, limits, ages and advisories', () => {
  it('reports what the streams hold against their limits', async () => {
    for (let i = 0; i < 12; i++) await s.js.publish(`lim.${i % 4}`, new Uint8Array(100));
    for (let i = 0; i < 3; i++) await s.js.publish('mem.x', new Uint8Array(10));
    const c = await s.js.consumers.get('LIM', 'w');
    const batch = await c.fetch({ max_messages: 2, expires: 5000 });
    for await (const m of batch) {
      await m.ackAck();
      if (m.info.streamSequence === 2) break;
    }
    const samples = await scrape(s.server.httpPort);
    const limStream = { stream: 'LIM', account: '$G' };
    const limBytes = valueOf(samples, 'flotilla_stream_bytes', limStream);
    expect(limBytes).toBeGreaterThan(1200);
    expect(valueOf(samples, 'flotilla_stream_subjects', limStream)).toBe(4);
    expect(valueOf(samples, 'flotilla_stream_max_bytes', limStream)).toBe(1_000_000);
    expect(valueOf(samples, 'flotilla_stream_max_msgs', limStream)).toBe(500);
    expect(valueOf(samples, 'flotilla_stream_max_msgs_per_subject', limStream)).toBe(50);
    expect(valueOf(samples, 'flotilla_stream_max_age_seconds', limStream)).toBe(3600);
    expect(valueOf(samples, 'flotilla_stream_max_bytes', { stream: 'MEM' })).toBe(-1);
    const memBytes = valueOf(samples, 'flotilla_stream_bytes', { stream: 'MEM' });

    // Server and account: used is the sum of their streams, the limit the configured (or machine-sized) one.
    expect(valueOf(samples, 'flotilla_jetstream_storage_used_bytes', { type: 'file' })).toBe(limBytes);
    expect(valueOf(samples, 'flotilla_jetstream_storage_used_bytes', { type: 'memory' })).toBe(memBytes);
    expect(valueOf(samples, 'flotilla_account_storage_used_bytes', { account: '$G', type: 'file' })).toBe(limBytes);
    const varz = (await (await fetch(`http://127.0.0.1:${s.server.httpPort}/varz`)).json()) as { jetstream: { config: { max_memory: number; max_storage: number } } };
    expect(valueOf(samples, 'flotilla_jetstream_storage_limit_bytes', { type: 'file' })).toBe(varz.jetstream.config.max_storage);
    expect(valueOf(samples, 'flotilla_jetstream_storage_limit_bytes', { type: 'memory' })).toBe(varz.jetstream.config.max_memory);
    expect(varz.jetstream.config.max_storage).toBeGreaterThan(0);
    expect(valueOf(samples, 'flotilla_account_storage_limit_bytes', { account: '$G', type: 'file' })).toBe(-1);

    // Consumer ages: w delivered and was acked moments ago; idle never delivered (-1).
    const w = { stream: 'LIM', consumer: 'w' };
    expect(valueOf(samples, 'flotilla_consumer_last_delivery_age_seconds', w)).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, 'flotilla_consumer_last_delivery_age_seconds', w)).toBeLessThan(60);
    expect(valueOf(samples, 'flotilla_consumer_last_ack_age_seconds', w)).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, 'flotilla_consumer_last_ack_age_seconds', w)).toBeLessThan(60);
    expect(valueOf(samples, 'flotilla_consumer_last_delivery_age_seconds', { stream: 'LIM', consumer: 'idle' })).toBe(-1);
    expect(valueOf(samples, 'flotilla_consumer_last_ack_age_seconds', { stream: 'LIM', consumer: 'idle' })).toBe(-1);
  });

  it('counts advisories by kind, listened to or not', async () => {
    const created = (all: Awaited<ReturnType<typeof scrape>>, kind: string): number => select(all, 'flotilla_jetstream_advisories_total', { kind })[0]?.value ?? 0;
    const before = await scrape(s.server.httpPort);
    await s.jsm.streams.add({ name: 'ADV', subjects: ['adv.>'] });
    await s.jsm.consumers.add('ADV', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    await s.jsm.streams.delete('ADV');
    const after = await scrape(s.server.httpPort);
    expect(created(after, 'STREAM.CREATED') - created(before, 'STREAM.CREATED')).toBe(1);
    expect(created(after, 'CONSUMER.CREATED') - created(before, 'CONSUMER.CREATED')).toBe(1);
    expect(created(after, 'STREAM.DELETED') - created(before, 'STREAM.DELETED')).toBe(1);
  });

  it('labels every series with cluster and server_name, and keeps the standard Node.js families', async () => {
    const samples = await scrape(s.server.httpPort);
    // Unclustered: empty (the R3 advisories test checks the cluster's name).
    expect(samples.filter((x) => x.labels['cluster'] !== '').map((x) => x.name)).toEqual([]);
    expect(samples.every((x) => typeof x.labels['server_name'] === 'string')).toBe(true);
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(select(samples, 'nodejs_eventloop_lag_seconds').length).toBe(1);
    expect(select(samples, 'flotilla_process_resident_memory_bytes').length).toBe(0);
    const text = await (await fetch(`http://127.0.0.1:${s.server.httpPort}/metrics`)).text();
    // prom-client's own nodejs_active_*_total gauges keep their standard names (stock dashboards query them).
    const gaugesNamedTotal = [...text.matchAll(/^# TYPE (flotilla_\S+) gauge$/gm)].map((m) => m[1]!).filter((n) => n.endsWith('_total'));
    expect(text).toMatch(/^# TYPE flotilla_stream_messages gauge$/m);
    expect(gaugesNamedTotal).toEqual([]);
  });
});
