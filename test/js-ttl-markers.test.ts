// Subject delete markers (subject_delete_marker_ttl, ADR-43) and KV per-key TTL (ADR-48) on one node through
// the stock @nats-io/jetstream and @nats-io/kv v3.4.0 clients: a message that was its subject's last and passes
// its TTL or max_age is replaced by a marker (`Nats-Marker-Reason: MaxAge`, `Nats-TTL` = the marker TTL as a
// Go duration, `Nats-Rollup: sub`, empty payload), which goes itself after its TTL; a message that was not the
// last just goes. KV: `kv.create(key, value, ttl)`, `kv.purge(key, { ttl })`, bucket `markerTTL` (the client
// turns it into allow_msg_ttl + subject_delete_marker_ttl) and the limit markers a bucket `ttl` leaves, which
// the client reads as PURGE. nats-server 2.9.10 predates these (2.11), so this runs against Flotilla only; the
// marker's header bytes, reason and the last-of-subject rule are 2.14.5's (memstore.go/filestore.go
// expireMsgs, shouldProcessSdm, handleRemovalOrSdm; 2.14.5 writes MaxAge markers only: its Purge and Remove
// reasons are constants nothing writes).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startFlotilla, sleep, type FlotillaProcess } from './helpers/flotilla-process.js';

let server: FlotillaProcess;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'jsdata'] });
  nc = await connect({ servers: server.url, reconnect: false });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (server) expect(await server.stop()).toBe(0);
});

async function until<T>(probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

const addStream = (cfg: Partial<StreamConfig> & { name: string }) => jsm.streams.add(cfg);
const seqs = async (stream: string): Promise<number[]> => {
  const st = (await jsm.streams.info(stream)).state;
  const out: number[] = [];
  for (let s = st.first_seq; s <= st.last_seq && st.messages > 0; s++) {
    const m = await jsm.streams.getMessage(stream, { seq: s }).catch(() => null);
    if (m !== null) out.push(s);
  }
  return out;
};

/** The marker's headers as the client sees them. */
function headerMap(h: { keys(): string[]; get(k: string): string } | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of h?.keys() ?? []) out[k] = h!.get(k);
  return out;
}

describe.each(['file', 'memory'] as const)('%s: subject delete markers', (storage) => {
  it('a TTL expiry of the last message of a subject leaves a MaxAge marker, which expires in turn', async () => {
    const name = `SDM_${storage}`;
    await addStream({ name, subjects: [`sdm.${storage}.>`], storage: storage as never, subject_delete_marker_ttl: 1_000_000_000 });
    const subj = `sdm.${storage}.a`;
    const first = await js.publish(subj, 'one', { ttl: '1s' });
    const last = await js.publish(subj, 'two', { ttl: '1s' });
    const other = await js.publish(`sdm.${storage}.b`, 'kept');
    const marker = await until(async () => {
      const m = await jsm.streams.getMessage(name, { last_by_subj: subj }).catch(() => null);
      return m !== null && m.seq > other.seq ? m : null;
    }, 5000);
    expect(marker.seq).toBe(other.seq + 1);
    expect(marker.data.length).toBe(0);
    expect(headerMap(marker.header)).toEqual({ 'Nats-Marker-Reason': 'MaxAge', 'Nats-TTL': '1s', 'Nats-Rollup': 'sub' });
    // The marker's roll-up removed both messages of its subject: one marker, not one per message.
    expect(await seqs(name)).toEqual([other.seq, marker.seq]);
    expect([first.seq, last.seq]).toEqual([1, 2]);
    // The marker expires after its TTL without leaving another marker.
    await until(async () => ((await seqs(name)).length === 1 ? true : null), 5000);
    expect(await seqs(name)).toEqual([other.seq]);
    await sleep(300);
    expect((await jsm.streams.info(name)).state.last_seq).toBe(marker.seq);
  });

  it('max_age removes a subject last message through a marker too; a minute marker TTL reads 1m0s', async () => {
    const name = `SDM_AGE_${storage}`;
    await addStream({ name, subjects: [`sdmage.${storage}.>`], storage: storage as never, max_age: 800_000_000, subject_delete_marker_ttl: 60_000_000_000 });
    const subj = `sdmage.${storage}.k`;
    const pa = await js.publish(subj, 'v');
    const marker = await until(async () => {
      const m = await jsm.streams.getMessage(name, { last_by_subj: subj }).catch(() => null);
      return m !== null && m.seq > pa.seq ? m : null;
    }, 5000);
    expect(headerMap(marker.header)).toEqual({ 'Nats-Marker-Reason': 'MaxAge', 'Nats-TTL': '1m0s', 'Nats-Rollup': 'sub' });
    expect(await jsm.streams.getMessage(name, { seq: pa.seq }).catch(() => null)).toBeNull();
  });
});

describe('KV per-key TTL (ADR-48) with @nats-io/kv 3.4.0', () => {
  it('markerTTL makes the bucket stream a marker stream; kv.create with a TTL expires the key into a PURGE marker, then nothing', async () => {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('ttlkv', { markerTTL: 1000 });
    const si = await jsm.streams.info('KV_ttlkv');
    expect(si.config.allow_msg_ttl).toBe(true);
    expect(si.config.subject_delete_marker_ttl).toBe(1_000_000_000);
    expect((await kv.status()).markerTTL).toBe(1000);
    const rev = await kv.create('k', 'v', '1s');
    const created = await kv.get('k');
    expect([created?.revision, created?.string(), created?.operation]).toEqual([rev, 'v', 'PUT']);
    const purged = await until(async () => {
      const e = await kv.get('k');
      return e !== null && e.operation === 'PURGE' ? e : null;
    }, 5000);
    expect(purged.revision).toBeGreaterThan(rev);
    // The marker lets create() take the key again (its last operation is a PURGE), and expires after 1s.
    await until(async () => ((await kv.get('k')) === null ? true : null), 5000);
    expect(await kv.create('k', 'again')).toBeGreaterThan(purged.revision);
  });

  it('kv.purge with a TTL leaves a purge marker that expires', async () => {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('purgekv', { markerTTL: 1000 });
    await kv.put('p', 'v');
    await kv.purge('p', { ttl: '1s' });
    const e = await kv.get('p');
    expect(e?.operation).toBe('PURGE');
    const sm = await jsm.streams.getMessage('KV_purgekv', { last_by_subj: '$KV.purgekv.p' });
    expect(sm?.header.get('Nats-TTL')).toBe('1s');
    expect(sm?.header.get('KV-Operation')).toBe('PURGE');
    await until(async () => ((await kv.get('p')) === null ? true : null), 5000);
    expect((await jsm.streams.info('KV_purgekv')).state.messages).toBe(0);
  });

  it('a bucket ttl with markerTTL leaves limit markers: an aged-out key reads as PURGE', async () => {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('agedkv', { ttl: 1000, markerTTL: 2000 });
    await kv.put('a', '1');
    const e = await until(async () => {
      const x = await kv.get('a');
      return x !== null && x.operation === 'PURGE' ? x : null;
    }, 5000);
    expect(e.revision).toBe(2);
    // The stream holds the marker only (kv.keys() of 3.4.0 would still list the key: it reads KV-Operation only).
    const st = (await jsm.streams.info('KV_agedkv')).state;
    expect([st.messages, st.first_seq, st.last_seq]).toEqual([1, 2, 2]);
    const sm = await jsm.streams.getMessage('KV_agedkv', { seq: 2 });
    expect(sm?.header.get('Nats-Marker-Reason')).toBe('MaxAge');
    expect(sm?.header.get('Nats-TTL')).toBe('2s');
  });

  it('kv.create with a TTL on a bucket without markerTTL is refused by the server (10166)', async () => {
    const kvm = new Kvm(nc);
    const kv = await kvm.create('plainkv');
    await expect(kv.create('k', 'v', '5s')).rejects.toMatchObject({ code: 10166 });
  });
});
