// Integers outside int64 in a stream or consumer config (`max_msgs: 1e30`) are refused as nats-server's
// Go decoder refuses them: 400 / 10025 "invalid JSON"; int64's own maximum is accepted.
// (Config files: test/security-failclosed.test.ts, "numbers nats-server refuses".)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let s: JetStreamServer;
beforeAll(async () => {
  s = await startJetStreamServer('flotilla-int64-');
});
afterAll(async () => {
  await s.stop();
});

async function api(subject: string, body: string): Promise<{ error?: { code: number; err_code: number; description: string }; config?: Record<string, unknown> }> {
  const reply = await s.nc.request(subject, body, { timeout: 5_000 });
  return JSON.parse(reply.string()) as { error?: { code: number; err_code: number; description: string } };
}

const INVALID_JSON = { code: 400, err_code: 10025, description: 'invalid JSON' };

describe('integers outside int64 in JetStream configs', () => {
  it.each([
    ['max_msgs', '1e30'],
    ['max_bytes', '-1e30'],
    ['max_age', '10000000000000000000'],
    ['max_msgs_per_subject', '1e19'],
  ])('stream %s: %s is invalid JSON (10025), and no stream is created', async (field, value) => {
    const name = `I64_${field.toUpperCase()}`;
    const r = await api(`$JS.API.STREAM.CREATE.${name}`, `{"name":"${name}","subjects":["i64.${field}"],"${field}":${value}}`);
    expect(r.error).toEqual(INVALID_JSON);
    const info = await api(`$JS.API.STREAM.INFO.${name}`, '');
    expect(info.error?.err_code).toBe(10059); // stream not found
  });

  it('int64 maximum is a valid max_msgs', async () => {
    const r = await api('$JS.API.STREAM.CREATE.I64MAX', '{"name":"I64MAX","subjects":["i64.max"],"max_msgs":9223372036854775807}');
    expect(r.error).toBeUndefined();
    expect(r.config?.['name']).toBe('I64MAX');
  });

  it('consumer max_deliver and backoff outside int64 are invalid JSON (10025)', async () => {
    const maxDeliver = await api(
      '$JS.API.CONSUMER.CREATE.I64MAX',
      '{"stream_name":"I64MAX","config":{"durable_name":"d1","ack_policy":"explicit","max_deliver":1e30}}',
    );
    expect(maxDeliver.error).toEqual(INVALID_JSON);
    const backoff = await api(
      '$JS.API.CONSUMER.CREATE.I64MAX',
      '{"stream_name":"I64MAX","config":{"durable_name":"d2","ack_policy":"explicit","max_deliver":5,"backoff":[1000000000,1e30]}}',
    );
    expect(backoff.error).toEqual(INVALID_JSON);
  });
});
