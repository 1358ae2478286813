// nats-server 2.14 config fields and publish headers Flotilla does not implement yet are refused by name
// through the stock `nats` client, never stored and ignored: stream and consumer fields (10052), a field 2.14
// does not know (its strict decoding, 10025), and 2.11+ publish headers on a stream without their features
// (the PubAck error 2.14 sends). nats-server 2.9.10 predates all of these, so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { AckPolicy, connect, headers, type ConsumerConfig, type JetStreamManager, type NatsConnection, type StreamConfig } from 'nats';
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
  await jsm.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (!server) return; // startup failed: nothing to stop
  expect(await server.stop()).toBe(0);
});


describe('config fields Flotilla does not implement', () => {
  it('stream add with the defaults of those fields is accepted', async () => {
    const cfg = { name: 'DEFAULTS', subjects: ['defaults.>'], allow_msg_ttl: false, allow_atomic: false, persist_mode: 'default' } as unknown as Partial<StreamConfig>;
    const si = await jsm.streams.add(cfg);
    expect(si.config.name).toBe('DEFAULTS');
  });

  it('a stream field 2.14 does not know is invalid JSON naming it', async () => {
    const cfg = { name: 'UNKNOWN', subjects: ['unknown.>'], max_msg: 3 } as unknown as Partial<StreamConfig>;
    expect(await apiError(jsm.streams.add(cfg))).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON: json: unknown field "max_msg"' });
  });

  it('consumer add with priority groups but no policy gets 2.14\'s own error and creates nothing', async () => {
    const noPolicy = { durable_name: 'WORKERS', ack_policy: AckPolicy.Explicit, priority_groups: ['jobs'] };
    expect(await apiError(jsm.consumers.add('PLAIN', noPolicy as unknown as Partial<ConsumerConfig>))).toEqual({
      code: 400,
      err_code: 10196,
      description: 'consumer can not have priority groups when policy is none',
    });
    expect(await apiError(jsm.consumers.info('PLAIN', 'WORKERS'))).toMatchObject({ code: 404, err_code: 10014 });
  });
});

describe('2.11+ publish headers on a stream that does not allow them', () => {
  async function rawPublish(subject: string, hdrs: Record<string, string>): Promise<string> {
    const h = headers();
    for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
    const m = await nc.request(subject, enc.encode('x'), { timeout: 2000, headers: h });
    return dec.decode(m.data);
  }

  it("Nats-TTL is refused with nats-server's PubAck error and nothing is stored", async () => {
    const before = (await jsm.streams.info('PLAIN')).state.messages;
    expect(await rawPublish('plain.ttl', { 'Nats-TTL': '5s' })).toBe(
      '{"error":{"code":400,"err_code":10166,"description":"per-message TTL is disabled"},"stream":"PLAIN","seq":0}',
    );
    expect((await jsm.streams.info('PLAIN')).state.messages).toBe(before);
  });

  it('Nats-Incr, Nats-Batch-Id and Nats-Schedule get their own errors', async () => {
    expect(JSON.parse(await rawPublish('plain.c', { 'Nats-Incr': '1' }))['error']).toEqual({
      code: 400,
      err_code: 10168,
      description: 'message counters is disabled',
    });
    expect(JSON.parse(await rawPublish('plain.b', { 'Nats-Batch-Id': 'b1', 'Nats-Batch-Sequence': '1' }))['error']).toEqual({
      code: 400,
      err_code: 10174,
      description: 'atomic publish is disabled',
    });
    expect(JSON.parse(await rawPublish('plain.s', { 'Nats-Schedule': '@every 1m', 'Nats-Schedule-Target': 'plain.t' }))['error']).toEqual({
      code: 400,
      err_code: 10188,
      description: 'message schedules is disabled',
    });
  });

  it('Nats-Expected-Last-Subject-Sequence-Subject checks the subject it names', async () => {
    const first = JSON.parse(await rawPublish('plain.k1', {})) as { seq: number };
    const ok = JSON.parse(
      await rawPublish('plain.k2', { 'Nats-Expected-Last-Subject-Sequence': String(first.seq), 'Nats-Expected-Last-Subject-Sequence-Subject': 'plain.k1' }),
    ) as { seq: number };
    expect(ok.seq).toBe(first.seq + 1);
    expect(JSON.parse(await rawPublish('plain.k2', { 'Nats-Expected-Last-Subject-Sequence-Subject': 'plain.k1' }))['error']).toEqual({
      code: 400,
      err_code: 10193,
      description: 'missing sequence for expected last sequence per subject',
    });
  });
});

describe('Nats-Required-Api-Level on an API request (2.14: 412 / 10185 above the server level)', () => {
  it('a level above Flotilla\'s is refused with the endpoint\'s response type; none or 0 is served', async () => {
    const h = headers();
    h.set('Nats-Required-Api-Level', '99');
    const refused = JSON.parse(dec.decode((await nc.request('$JS.API.STREAM.INFO.PLAIN', enc.encode(''), { headers: h, timeout: 2000 })).data));
    // (a stream_info error carries the paging fields too, as every stream_info error here does)
    expect(refused).toMatchObject({
      type: 'io.nats.jetstream.api.v1.stream_info_response',
      error: { code: 412, err_code: 10185, description: 'JetStream minimum api level required' },
    });
    const info = headers();
    info.set('Nats-Required-Api-Level', '99');
    const account = JSON.parse(dec.decode((await nc.request('$JS.API.INFO', enc.encode(''), { headers: info, timeout: 2000 })).data));
    expect(account.error).toEqual({ code: 412, err_code: 10185, description: 'JetStream minimum api level required' });
    const ok = headers();
    ok.set('Nats-Required-Api-Level', '0');
    const served = JSON.parse(dec.decode((await nc.request('$JS.API.STREAM.INFO.PLAIN', enc.encode(''), { headers: ok, timeout: 2000 })).data));
    expect(served.config.name).toBe('PLAIN');
  });
});
