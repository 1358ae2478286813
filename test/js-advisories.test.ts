// JetStream advisories and metric events through the stock `nats` client, field by field, against one node:
// the API audit (`$JS.EVENT.ADVISORY.API`, io.nats.jetstream.advisory.v1.api_audit) for an answered and a
// refused request, and the ack sample (`$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>`,
// io.nats.jetstream.metric.v1.consumer_ack) for a consumer with `sample_freq: "100%"`. Shapes are
// nats-server 2.14.5's jetstream_events.go (JSAPIAudit, JSConsumerAckMetric) and jetstream_api.go
// (sendAPIResponse / sendAPIErrResponse audit every answer); 2.9.10 emits both, so this also runs with
// E2E_SERVER=nats-server.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy, type Subscription } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';

let s: JetStreamServer;
const dec = new TextDecoder();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  s = await startJetStreamServer('flotilla-advisories-');
});
afterAll(async () => {
  await s.stop();
});

function collect(subject: string): { sub: Subscription; got: Array<{ subject: string; body: Record<string, unknown> }> } {
  const got: Array<{ subject: string; body: Record<string, unknown> }> = [];
  const sub = s.nc.subscribe(subject, { callback: (_e, m) => got.push({ subject: m.subject, body: JSON.parse(dec.decode(m.data)) as Record<string, unknown> }) });
  return { sub, got };
}

describe('$JS.EVENT.ADVISORY.API audit', () => {
  it('publishes one audit per answered request with the request and the response as sent', async () => {
    const { sub, got } = collect('$JS.EVENT.ADVISORY.API');
    await s.nc.flush();
    const cfg = { name: 'AUD', subjects: ['aud.>'], storage: 'memory' };
    const reply = await s.nc.request('$JS.API.STREAM.CREATE.AUD', JSON.stringify(cfg));
    const responseText = dec.decode(reply.data);
    const audit = await until(() => got.find((g) => g.body['subject'] === '$JS.API.STREAM.CREATE.AUD'), 10_000, 'the create audit');
    expect(audit.subject).toBe('$JS.EVENT.ADVISORY.API');
    const a = audit.body;
    expect(Object.keys(a).slice(0, 3)).toEqual(['type', 'id', 'timestamp']);
    expect(a['type']).toBe('io.nats.jetstream.advisory.v1.api_audit');
    expect(a['id']).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(a['timestamp']).toMatch(ISO);
    expect(typeof a['server']).toBe('string');
    expect((a['server'] as string).length).toBeGreaterThan(0);
    expect(JSON.parse(a['request'] as string)).toEqual(cfg);
    expect(JSON.parse(a['response'] as string)).toEqual(JSON.parse(responseText));
    expect(a).toHaveProperty('client');
    expect(a['domain']).toBeUndefined();

    // A refused request is audited too (sendAPIErrResponse), its response the error answer; an empty request has no `request`.
    const info = await s.nc.request('$JS.API.STREAM.INFO.NOPE', '');
    const errText = dec.decode(info.data);
    expect((JSON.parse(errText) as { error: { err_code: number } }).error.err_code).toBe(10059);
    const refused = await until(() => got.find((g) => g.body['subject'] === '$JS.API.STREAM.INFO.NOPE'), 10_000, 'the refused audit');
    expect(refused.body['request']).toBeUndefined();
    expect(JSON.parse(refused.body['response'] as string)).toEqual(JSON.parse(errText));
    sub.unsubscribe();
  });
});

describe('$JS.EVENT.METRIC.CONSUMER.ACK', () => {
  it('samples every ack of a consumer with sample_freq 100%', async () => {
    await s.jsm.streams.add({ name: 'ACKS', subjects: ['acks.>'] });
    await s.jsm.consumers.add('ACKS', { durable_name: 'D', ack_policy: AckPolicy.Explicit, sample_freq: '100%' });
    await s.jsm.consumers.add('ACKS', { durable_name: 'QUIET', ack_policy: AckPolicy.Explicit });
    const { sub, got } = collect('$JS.EVENT.METRIC.CONSUMER.ACK.ACKS.*');
    await s.nc.flush();
    for (let i = 0; i < 3; i++) await s.js.publish(`acks.${i}`, `m${i}`);
    for (const durable of ['D', 'QUIET']) {
      const c = await s.js.consumers.get('ACKS', durable);
      const batch = await c.fetch({ max_messages: 3, expires: 5000 });
      for await (const m of batch) {
        await m.ackAck();
        if (m.info.streamSequence === 3) break;
      }
    }
    await until(() => got.length >= 3, 10_000, 'three ack samples');
    await s.nc.flush();
    expect(got.map((g) => g.subject)).toEqual(['$JS.EVENT.METRIC.CONSUMER.ACK.ACKS.D', '$JS.EVENT.METRIC.CONSUMER.ACK.ACKS.D', '$JS.EVENT.METRIC.CONSUMER.ACK.ACKS.D']);
    got.forEach((g, i) => {
      const e = g.body;
      expect(Object.keys(e)).toEqual(['type', 'id', 'timestamp', 'stream', 'consumer', 'consumer_seq', 'stream_seq', 'ack_time', 'deliveries']);
      expect(e['type']).toBe('io.nats.jetstream.metric.v1.consumer_ack');
      expect(e['id']).toMatch(/^[A-Za-z0-9]{22}$/);
      expect(e['timestamp']).toMatch(ISO);
      expect(e['stream']).toBe('ACKS');
      expect(e['consumer']).toBe('D');
      expect(e['consumer_seq']).toBe(i + 1);
      expect(e['stream_seq']).toBe(i + 1);
      expect(e['deliveries']).toBe(1);
      expect(e['ack_time']).toBeGreaterThan(0);
      expect(e['ack_time']).toBeLessThan(60e9);
    });
    sub.unsubscribe();
  });
});
