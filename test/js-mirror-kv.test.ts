// KV buckets on mirrors and sources (issue 19 item 7) with the stock @nats-io/kv v3 client: `kvm.create(name,
// { mirror })` makes a mirror_direct mirror of the bucket's stream, `{ sources }` a bucket fed from another
// one through the `$KV.<src>.>` → `$KV.<dst>.>` subject transform the client writes. Against nats-server
// 2.9.10 (E2E_SERVER=nats-server) the mirror test runs as it is; the v3 client refuses sources itself there
// (transforms need 2.10), and that refusal is what is checked.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { EXPECT_CLEAN_EXIT } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';

let server: FlotillaProcess;
let nc: NatsConnection;
let kvm: Kvm;
let jsm: JetStreamManager;

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'jsdata'] });
  nc = await connect({ servers: server.url, reconnect: false });
  kvm = new Kvm(nc);
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (!server) return;
  const code = await server.stop();
  if (EXPECT_CLEAN_EXIT) expect(code).toBe(0);
});

describe('KV mirrors and sources with @nats-io/kv', () => {
  it('a sourced bucket reads the origin bucket`s keys under its own name and takes its own puts', async () => {
    const origin = await kvm.create('kvorigin', { history: 3 });
    await origin.put('a', 'A1');
    await origin.put('b', 'B1');
    await origin.put('a', 'A2');
    if (AGAINST_NATS_SERVER) {
      await expect(kvm.create('kvagg', { sources: [{ name: 'kvorigin' }] })).rejects.toThrow(/requires server 2.10.0/);
      return;
    }
    const agg = await kvm.create('kvagg', { sources: [{ name: 'kvorigin' }] });
    const a = await until(async () => (await agg.get('a'))?.string() === 'A2' && (await agg.get('a')), 10_000, 'the sourced key', 50);
    expect(a.key).toBe('a');
    expect(a.bucket).toBe('kvagg');
    expect((await agg.get('b'))?.string()).toBe('B1');
    const keys: string[] = [];
    for await (const k of await agg.keys()) keys.push(k);
    expect(keys.sort()).toEqual(['a', 'b']);
    await agg.put('c', 'C1');
    expect((await agg.get('c'))?.string()).toBe('C1');
    // Later changes in the origin follow, deletes included.
    await origin.delete('b');
    await until(async () => (await agg.get('b'))?.operation === 'DEL', 10_000, 'the sourced delete', 50);
    const si = await jsm.streams.info('KV_kvagg');
    expect(si.config.sources?.[0]?.subject_transforms).toEqual([{ src: '$KV.kvorigin.>', dest: '$KV.kvagg.>' }]);
    const stored = await jsm.streams.getMessage('KV_kvagg', { last_by_subj: '$KV.kvagg.a' });
    expect(stored?.subject).toBe('$KV.kvagg.a');
    expect(stored?.header?.get('Nats-Stream-Source')).toBe('KV_kvorigin 3 $KV.kvorigin.> $KV.kvagg.> $KV.kvorigin.a');
  });

  it('a mirrored bucket holds the origin`s entries at its revisions and answers direct gets', async () => {
    const origin = await kvm.create('kvmo', { history: 2 });
    await origin.put('x', 'X1');
    await origin.put('y', 'Y1');
    await origin.put('x', 'X2');
    const mirror = await kvm.create('kvmm', { mirror: { name: 'kvmo' }, history: 2 });
    const si = await until(
      async () => {
        const s = await jsm.streams.info('KV_kvmm');
        return s.state.last_seq === 3 ? s : null;
      },
      10_000,
      'the mirror caught up',
      50,
    );
    expect(si.config.mirror_direct).toBe(true);
    expect(si.config.mirror?.name).toBe('KV_kvmo');
    expect(si.state.messages).toBe(3);
    expect((await mirror.status()).values).toBe(3);
    // The mirror's copy of a key, read by the origin's subject at the origin's revision.
    const m = await jsm.direct.getMessage('KV_kvmm', { last_by_subj: '$KV.kvmo.x' });
    expect(m?.seq).toBe(3);
    expect(m?.string()).toBe('X2');
    // mirror_direct: with the origin gone, the mirror answers direct gets addressed to the origin.
    await jsm.streams.delete('KV_kvmo');
    const r = await nc.request('$JS.API.DIRECT.GET.KV_kvmo', JSON.stringify({ last_by_subj: '$KV.kvmo.y' }), { timeout: 5_000 });
    expect(r.headers?.get('Nats-Stream')).toBe('KV_kvmm');
    expect(r.headers?.get('Nats-Sequence')).toBe('2');
    expect(r.string()).toBe('Y1');
  });
});
