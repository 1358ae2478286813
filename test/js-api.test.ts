// The JetStream API behind a domain (`$JS.<domain>.API`), account info, and the raw API conventions
// (typed responses, no reply for unknown subjects).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

const confDir = mkdtempSync(join(tmpdir(), 'flotilla-js-api-'));
let server: FlotillaProcess;
let nc: NatsConnection;
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  const conf = join(confDir, 'js.conf');
  writeFileSync(conf, `jetstream {\n  store_dir: "${join(confDir, 'store')}"\n  domain: hub\n}\n`);
  server = await startFlotilla({ args: ['-c', conf] });
  nc = await connect({ servers: server.url, reconnect: false });
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  const code = server ? await server.stop() : 0; // undefined when startup failed
  rmSync(confDir, { recursive: true, force: true });
  if (process.env['E2E_SERVER'] !== 'nats-server') expect(code).toBe(0); // nats-server exits 1 on SIGTERM
});

async function raw(subject: string, body = ''): Promise<Record<string, any>> {
  const m = await nc.request(subject, enc.encode(body), { timeout: 3000 });
  return JSON.parse(dec.decode(m.data));
}

describe('JetStream domain', () => {
  it('serves the API under $JS.hub.API and puts the domain into PubAcks and infos', async () => {
    const jsm = await nc.jetstreamManager({ domain: 'hub' });
    const si = await jsm.streams.add({ name: 'DOM', subjects: ['dom.>'] });
    expect(si.config.name).toBe('DOM');
    const info = await raw('$JS.hub.API.STREAM.INFO.DOM');
    expect(info.domain).toBe('hub');
    const js = nc.jetstream({ domain: 'hub' });
    const ack = await js.publish('dom.a', enc.encode('x'));
    expect(ack).toMatchObject({ stream: 'DOM', seq: 1, domain: 'hub' });
    const m = await nc.request('dom.b', enc.encode('y'), { timeout: 2000 });
    expect(dec.decode(m.data)).toBe('{"stream":"DOM", "domain":"hub", "seq":2}');
  });

  it('answers $JS.API.INFO with account info (also without the domain prefix)', async () => {
    const ai = await raw('$JS.API.INFO');
    expect(ai).toMatchObject({
      type: 'io.nats.jetstream.api.v1.account_info_response',
      memory: 0,
      streams: 1,
      consumers: 0,
      limits: { max_memory: -1, max_storage: -1, max_streams: -1, max_consumers: -1, max_ack_pending: -1 },
      domain: 'hub',
    });
    expect(ai.storage).toBeGreaterThan(0);
    expect(ai.api.total).toBeGreaterThan(0);
    const viaDomain = await raw('$JS.hub.API.INFO');
    expect(viaDomain.streams).toBe(1);
  });

  it('gives no reply to unknown API subjects', async () => {
    await expect(nc.request('$JS.API.STREAM.FROB.DOM', enc.encode(''), { timeout: 300 })).rejects.toThrow();
    await expect(nc.request('$JS.hub.API.NOPE', enc.encode(''), { timeout: 300 })).rejects.toThrow();
  });
});
