// `ts` in StreamInfo and ConsumerInfo (nats-server 2.10+'s TimeStamp, kept in 2.14): when the server took the
// info, in STREAM.INFO / CONSUMER.INFO answers and /jsz consumer_detail, through the stock `nats` client.
// 2.9.10 predates the field, so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy } from 'nats';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

let s: JetStreamServer;
beforeAll(async () => {
  s = await startJetStreamServer('flotilla-info-ts-');
  await s.jsm.streams.add({ name: 'TS', subjects: ['ts.>'] });
  await s.jsm.consumers.add('TS', { durable_name: 'C', ack_policy: AckPolicy.Explicit });
});
afterAll(async () => {
  await s.stop();
});

const within = (ts: unknown, fromMs: number, toMs: number): boolean => typeof ts === 'string' && Date.parse(ts) >= fromMs - 1000 && Date.parse(ts) <= toMs + 1000;

describe.skipIf(AGAINST_NATS_SERVER)('ts in stream and consumer info', () => {
  it('is the time the info was taken', async () => {
    const before = Date.now();
    const si = JSON.parse((await s.nc.request('$JS.API.STREAM.INFO.TS', '')).string()) as Record<string, unknown>;
    const ci = JSON.parse((await s.nc.request('$JS.API.CONSUMER.INFO.TS.C', '')).string()) as Record<string, unknown>;
    const jsz = (await (await fetch(`http://127.0.0.1:${s.server.httpPort}/jsz?consumers=true`)).json()) as any;
    const after = Date.now();
    expect(within(si['ts'], before, after)).toBe(true);
    expect(within(ci['ts'], before, after)).toBe(true);
    expect(Object.keys(ci).indexOf('ts')).toBeGreaterThan(Object.keys(ci).indexOf('num_pending'));
    expect(within(jsz.account_details[0].stream_detail[0].consumer_detail[0].ts, before, after)).toBe(true);
  });
});
