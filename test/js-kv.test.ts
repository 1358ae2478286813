// JetStream key/value buckets through the real `nats` client (js.views.kv) against the real binary:
// every KV operation is a client convention over streams, publishes with expectation headers, DIRECT.GET
// and ordered push consumers, so this exercises those server features end to end.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection, type JetStreamClient, type JetStreamManager, type KvEntry } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { EXPECT_CLEAN_EXIT, rejectionOf, startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

const text = (e: KvEntry | null): string | null => (e ? new TextDecoder().decode(e.value) : null);

beforeAll(async () => {
  fixture = await startJetStreamServer('js-kv-', { reconnect: false });
  ({ nc, js, jsm } = fixture);
});

afterAll(async () => {
  const code = await fixture.stop();
  if (EXPECT_CLEAN_EXIT) expect(code).toBe(0);
});

describe('KV with the nats client', () => {
  it('creates the bucket as a KV_ stream with the KV settings', async () => {
    await js.views.kv('cfg', { history: 3 });
    const si = await jsm.streams.info('KV_cfg');
    expect(si.config.subjects).toEqual(['$KV.cfg.>']);
    expect(si.config.max_msgs_per_subject).toBe(3);
    expect(si.config.discard).toBe('new');
    expect(si.config.allow_rollup_hdrs).toBe(true);
    expect(si.config.allow_direct).toBe(true);
    expect(si.config.storage).toBe('file');
  });

  it('puts and gets values with revisions', async () => {
    const kv = await js.views.kv('basic', { history: 5 });
    const r1 = await kv.put('k1', 'v1');
    const r2 = await kv.put('k2', 'v2');
    const r3 = await kv.put('k1', 'v1b');
    expect([r1, r2, r3]).toEqual([1, 2, 3]);
    const e = await kv.get('k1');
    expect(text(e)).toBe('v1b');
    expect(e!.key).toBe('k1');
    expect(e!.bucket).toBe('basic');
    expect(e!.revision).toBe(3);
    expect(e!.operation).toBe('PUT');
    expect(Math.abs(e!.created.getTime() - Date.now())).toBeLessThan(10_000);
    expect(text(await kv.get('k2'))).toBe('v2');
    expect(await kv.get('missing')).toBeNull();
    // get by revision: the stored message at that sequence, or null when it is another key's
    expect(text(await kv.get('k1', { revision: 1 }))).toBe('v1');
    expect(await kv.get('k1', { revision: 2 })).toBeNull();
    // keys with dots, slashes, equals and dashes are subjects with several tokens
    await kv.put('a.b/c=d-e', 'deep');
    expect(text(await kv.get('a.b/c=d-e'))).toBe('deep');
  });

  it('create fails with 10071 when the key exists, and succeeds after a delete', async () => {
    const kv = await js.views.kv('create');
    expect(await kv.create('k', 'first')).toBe(1);
    const err = await rejectionOf(kv.create('k', 'second'));
    expect(err.api_error?.err_code).toBe(10071);
    expect(err.message).toBe('wrong last sequence: 1');
    expect(text(await kv.get('k'))).toBe('first');
    await kv.delete('k');
    // the client sees the DEL marker and retries as update(k, v, markerRevision)
    expect(await kv.create('k', 'again')).toBe(3);
    expect(text(await kv.get('k'))).toBe('again');
  });

  it('update succeeds only with the latest revision of the key', async () => {
    const kv = await js.views.kv('update');
    const r1 = await kv.put('k', 'a');
    await kv.put('other', 'x'); // stream seq moves, the key's last revision does not
    const r2 = await kv.update('k', 'b', r1);
    expect(r2).toBe(3);
    const err = await rejectionOf(kv.update('k', 'c', r1));
    expect(err.api_error?.err_code).toBe(10071);
    expect(err.message).toBe(`wrong last sequence: ${r2}`);
    expect(text(await kv.get('k'))).toBe('b');
  });

  it('expires entries in a TTL bucket', async () => {
    const kv = await js.views.kv('ttl', { ttl: 1_000 });
    expect((await jsm.streams.info('KV_ttl')).config.max_age).toBe(1_000_000_000);
    await kv.put('k', 'soon gone');
    expect(text(await kv.get('k'))).toBe('soon gone');
    expect((await kv.status()).ttl).toBe(1_000);
    let gone = false;
    for (let i = 0; i < 40 && !gone; i++) {
      await sleep(100);
      gone = (await kv.get('k')) === null;
    }
    expect(gone).toBe(true);
    expect((await kv.status()).values).toBe(0);
  });

  it('reports bucket status', async () => {
    const kv = await js.views.kv('stat', { history: 2, max_bytes: 1 << 20 });
    await kv.put('a', 'aaaa');
    await kv.put('b', 'bbbb');
    const st = await kv.status();
    expect(st.bucket).toBe('stat');
    expect(st.values).toBe(2);
    expect(st.history).toBe(2);
    expect(st.max_bytes).toBe(1 << 20);
    expect(st.size).toBeGreaterThan(8);
    expect(st.streamInfo.config.storage).toBe('file');
    expect(st.streamInfo.config.name).toBe('KV_stat');
  });

  it('purges the whole bucket and destroys it', async () => {
    const kv = await js.views.kv('doomed');
    await kv.put('a', '1');
    await kv.put('b', '2');
    // what Bucket.purgeBucket() sends (not on the KV interface): STREAM.PURGE of the backing stream
    expect((await jsm.streams.purge('KV_doomed')).purged).toBe(2);
    expect((await kv.status()).values).toBe(0);
    expect(await kv.get('a')).toBeNull();
    expect(await kv.destroy()).toBe(true);
    const err = await rejectionOf(jsm.streams.info('KV_doomed'));
    expect(err.message).toBe('stream not found');
    const names = await jsm.streams.listKvs().next();
    expect(names.map((s) => s.bucket)).not.toContain('doomed');
    expect(names.map((s) => s.bucket)).toContain('basic');
  });

  it('binds to an existing bucket from a second connection', async () => {
    const kv = await js.views.kv('shared');
    await kv.put('k', 'from-1');
    const nc2 = await connect({ servers: fixture.server.url, reconnect: false });
    try {
      const kv2 = await nc2.jetstream().views.kv('shared', { bindOnly: true });
      expect(text(await kv2.get('k'))).toBe('from-1');
      await kv2.put('k', 'from-2');
      expect(text(await kv.get('k'))).toBe('from-2');
    } finally {
      await nc2.close();
    }
  });
});
