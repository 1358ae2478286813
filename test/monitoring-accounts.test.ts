// Monitoring over every JetStream account of one node (issue 17 item 6): /jsz totals and account details
// (`accounts=true`, `acc=`), /varz jetstream.stats, /healthz, and the `account` label on the /metrics
// stream, consumer and API series. Two JetStream accounts hold a stream of the same name. With
// E2E_SERVER=nats-server the JSON cases run against nats-server (2.9.10 here); /metrics is Flotilla's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, connect, StorageType, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { scrape, valueOf } from './ops-prometheus-text.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dir = mkdtempSync(join(tmpdir(), 'flotilla-mon-accounts-'));
const conns: NatsConnection[] = [];
let s: FlotillaProcess;

const B_MAX_MEMORY_BYTES = 1_000_000;
const B_MAX_STORE_BYTES = 10_000_000;
const B_STREAM_MAX_BYTES = 4096;

const get = async (path: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(`http://127.0.0.1:${s.httpPort}${path}`);
  return { status: res.status, body: JSON.parse(await res.text()) };
};
const detailOf = (body: any, name: string): any => (body.account_details ?? []).find((d: any) => d.name === name);

async function login(user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, user, pass: user });
  conns.push(nc);
  return nc;
}

beforeAll(async () => {
  const conf = join(dir, 'accounts.conf');
  writeFileSync(
    conf,
    `jetstream { store_dir: "${join(dir, 'js')}" }
accounts {
  A: { jetstream: enabled, users: [ { user: a, password: a } ] }
  B: { jetstream: { max_mem: ${B_MAX_MEMORY_BYTES}, max_file: ${B_MAX_STORE_BYTES} }, users: [ { user: b, password: b } ] }
  C: { users: [ { user: c, password: c } ] }
}
`,
  );
  s = await startFlotilla({ args: ['-c', conf] });
  const [a, b] = [await login('a'), await login('b')];
  await login('c');
  const jsmA = await a.jetstreamManager();
  const jsmB = await b.jetstreamManager();
  // The same stream name in both accounts: two streams, told apart by their account.
  await jsmA.streams.add({ name: 'ORDERS', subjects: ['orders.>'], storage: StorageType.File });
  await jsmB.streams.add({ name: 'ORDERS', subjects: ['orders.>'], storage: StorageType.File, max_bytes: B_STREAM_MAX_BYTES });
  await jsmB.consumers.add('ORDERS', { durable_name: 'worker', ack_policy: AckPolicy.Explicit });
  const jsA = a.jetstream();
  const jsB = b.jetstream();
  for (let i = 0; i < 3; i++) await jsA.publish('orders.a', new TextEncoder().encode('0123456789'));
  for (let i = 0; i < 2; i++) await jsB.publish('orders.b', new TextEncoder().encode('0123456789'));
});

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  const code = await s?.stop();
  if (!AGAINST_NATS_SERVER) expect(code).toBe(0); // nats-server exits 1 on SIGTERM
  rmSync(dir, { recursive: true, force: true });
});

describe('monitoring JSON over every JetStream account', () => {
  it('/jsz totals count both accounts; without accounts=true no details', async () => {
    const { status, body } = await get('/jsz');
    expect(status).toBe(200);
    expect(body).toMatchObject({ accounts: 2, streams: 2, consumers: 1, messages: 5, memory: 0 });
    expect(body.storage).toBeGreaterThan(0);
    expect(body.bytes).toBe(body.storage);
    // STREAM.CREATE twice, CONSUMER.CREATE, and each manager's INFO: counted in both accounts.
    expect(body.api.total).toBeGreaterThanOrEqual(5);
    expect(body.account_details).toBeUndefined();
  });

  it('/jsz?accounts=true: one detail per JetStream account with its own figures and limits', async () => {
    const { body } = await get('/jsz?accounts=true');
    expect(body.account_details.map((d: any) => d.name).sort()).toEqual(['A', 'B']);
    const a = detailOf(body, 'A');
    const b = detailOf(body, 'B');
    expect(a).toMatchObject({ id: 'A', memory: 0, accounts: 0, ha_assets: 0 });
    expect(b).toMatchObject({ id: 'B', memory: 0, accounts: 0, ha_assets: 0, reserved_memory: B_MAX_MEMORY_BYTES, reserved_storage: B_MAX_STORE_BYTES });
    // Unlimited: nats-server writes -1 as a uint64 (2^64-1, 2^64 once parsed); Flotilla writes 0.
    expect(a.reserved_memory).toBe(AGAINST_NATS_SERVER ? 2 ** 64 : 0);
    // Each account's storage is its own stream's bytes: together the server's.
    expect(a.storage).toBeGreaterThan(0);
    expect(b.storage).toBeGreaterThan(0);
    expect(a.storage + b.storage).toBe(body.storage);
    expect(a.storage).toBeGreaterThan(b.storage); // 3 messages against 2, same sizes
    expect(a.api.total).toBeGreaterThanOrEqual(2);
    expect(b.api.total).toBeGreaterThanOrEqual(3);
    expect(a.api.total + b.api.total).toBe(body.api.total);
    expect(a.stream_detail).toBeUndefined();
    if (!AGAINST_NATS_SERVER) {
      // 2.14's count of JetStream accounts, and its pages in name order (2.9 has neither).
      expect(body.total).toBe(2);
      const page = (await get('/jsz?accounts=true&offset=1&limit=1')).body;
      expect(page.account_details.map((d: any) => d.name)).toEqual(['B']);
      expect(page.total).toBe(2);
    }
  });

  it('/jsz?acc=B&consumers=true: only B, with its stream and consumer', async () => {
    const { body } = await get('/jsz?acc=B&consumers=true');
    expect(body.account_details).toHaveLength(1);
    const b = body.account_details[0];
    expect(b.name).toBe('B');
    expect(b.stream_detail).toHaveLength(1);
    expect(b.stream_detail[0]).toMatchObject({ name: 'ORDERS', state: { messages: 2, first_seq: 1, last_seq: 2, consumer_count: 1 } });
    expect(b.stream_detail[0].consumer_detail[0]).toMatchObject({ stream_name: 'ORDERS', name: 'worker', num_pending: 2 });
    const a = detailOf((await get('/jsz?acc=A&streams=true')).body, 'A');
    expect(a.stream_detail[0]).toMatchObject({ name: 'ORDERS', state: { messages: 3, consumer_count: 0 } });
    // An account without JetStream has no detail (nats-server leaves the list out; Flotilla gives it empty).
    const c = (await get('/jsz?acc=C')).body;
    expect(c.account_details ?? []).toEqual([]);
    expect(c.accounts).toBe(2);
  });

  it('/varz jetstream.stats and /healthz cover every account', async () => {
    const v = (await get('/varz')).body;
    const j = (await get('/jsz')).body;
    expect(v.jetstream.stats).toMatchObject({ accounts: 2, ha_assets: 0, memory: 0, storage: j.storage });
    expect(v.jetstream.stats.api.total).toBeGreaterThanOrEqual(5);
    if (!AGAINST_NATS_SERVER) expect(v.jetstream.stats).toMatchObject({ reserved_memory: 0, reserved_storage: B_STREAM_MAX_BYTES });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/healthz?js-enabled-only=true')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});

describe.skipIf(AGAINST_NATS_SERVER)('/metrics with accounts', () => {
  it('labels stream, consumer and API series by account; connections per account', async () => {
    const m = await scrape(s.httpPort);
    expect(valueOf(m, 'flotilla_jetstream_streams')).toBe(2);
    expect(valueOf(m, 'flotilla_jetstream_consumers')).toBe(1);
    expect(valueOf(m, 'flotilla_stream_messages', { account: 'A', stream: 'ORDERS' })).toBe(3);
    expect(valueOf(m, 'flotilla_stream_messages', { account: 'B', stream: 'ORDERS' })).toBe(2);
    expect(valueOf(m, 'flotilla_stream_consumers', { account: 'A', stream: 'ORDERS' })).toBe(0);
    expect(valueOf(m, 'flotilla_stream_consumers', { account: 'B', stream: 'ORDERS' })).toBe(1);
    expect(valueOf(m, 'flotilla_consumer_num_pending', { account: 'B', stream: 'ORDERS', consumer: 'worker' })).toBe(2);
    expect(m.filter((x) => x.name === 'flotilla_consumer_num_pending')).toHaveLength(1);
    expect(valueOf(m, 'flotilla_jetstream_api_requests_total', { account: 'A', operation: 'STREAM.CREATE' })).toBe(1);
    expect(valueOf(m, 'flotilla_jetstream_api_requests_total', { account: 'B', operation: 'STREAM.CREATE' })).toBe(1);
    expect(valueOf(m, 'flotilla_metrics_series_omitted', { kind: 'stream' })).toBe(0);
    for (const account of ['A', 'B', 'C']) expect(valueOf(m, 'flotilla_account_client_connections', { account })).toBe(1);
    expect(valueOf(m, 'flotilla_account_client_connections', { account: '$G' })).toBe(0);
  });

  it('counts API errors in the account that got them', async () => {
    const b = conns[1]!;
    const jsmB = await b.jetstreamManager();
    await expect(jsmB.streams.info('MISSING')).rejects.toThrow();
    const m = await scrape(s.httpPort);
    expect(valueOf(m, 'flotilla_jetstream_api_errors_total', { account: 'B', operation: 'STREAM.INFO', err_code: '10059' })).toBe(1);
    expect(m.filter((x) => x.name === 'flotilla_jetstream_api_errors_total' && x.labels['account'] === 'A')).toHaveLength(0);
  });
});

describe('JetStream on, no account with it', () => {
  it('/jsz and /varz say enabled with no accounts, /healthz is ok', async () => {
    const conf = join(dir, 'none.conf');
    writeFileSync(conf, `jetstream { store_dir: "${join(dir, 'js-none')}" }\naccounts { C: { users: [ { user: c, password: c } ] } }\n`);
    const other = await startFlotilla({ args: ['-c', conf] });
    try {
      const at = async (path: string): Promise<any> => (await fetch(`http://127.0.0.1:${other.httpPort}${path}`)).json();
      const j = await at('/jsz?accounts=true');
      expect(j.disabled).toBeUndefined();
      expect(j).toMatchObject({ accounts: 0, streams: 0, consumers: 0, memory: 0, storage: 0, api: { total: 0, errors: 0 } });
      expect(j.account_details).toBeUndefined();
      expect((await at('/varz')).jetstream.stats).toMatchObject({ accounts: 0, memory: 0, storage: 0, ha_assets: 0 });
      expect(await at('/healthz')).toEqual({ status: 'ok' });
    } finally {
      const code = await other.stop();
      if (!AGAINST_NATS_SERVER) expect(code).toBe(0);
    }
  });
});
