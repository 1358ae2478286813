// Per-message TTL on one node (ADR-43), through the stock @nats-io/* v3 clients: allow_msg_ttl and its config
// rules, the Nats-TTL header and its errors, expiry at the stored timestamp + TTL (also across a restart),
// `never` outliving max_age, and the raised TTL on a stream with delete markers. nats-server 2.9.10 predates
// per-message TTL (2.11), so this runs against Flotilla only; every expected value (error codes and texts,
// header values, config fields) is nats-server 2.14.5's, read from its source: stream.go (checkStreamCfg,
// update check, getMessageTTL/parseMessageTTL, processJetStreamMsg), jetstream_batching.go
// (checkMsgHeadersPreClusteredProposal) and errors.json (10165, 10166, 10052).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { sleep } from './helpers/flotilla-process.js';
import { JetStreamV3Server, jsApiFailure as apiFailure } from './helpers/jetstream-v3-server.js';

const srv = new JetStreamV3Server('flotilla-ttl-');
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const enc = new TextEncoder();
const dec = new TextDecoder();

async function start(): Promise<void> {
  ({ nc, js, jsm } = await srv.start());
}

async function stop(): Promise<void> {
  expect(await srv.stop()).toBe(0);
}

beforeAll(start);
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return Date.now();
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

const addStream = (cfg: Partial<StreamConfig> & { name: string }) => jsm.streams.add(cfg);
const messages = async (stream: string) => (await jsm.streams.info(stream)).state.messages;

describe('allow_msg_ttl and subject_delete_marker_ttl config (checkStreamCfg, update check)', () => {
  it.each(['file', 'memory'] as const)('a %s stream takes allow_msg_ttl and reports it; it cannot be turned off', async (storage) => {
    const name = `CFG_${storage}`;
    const si = await addStream({ name, subjects: [`cfg.${storage}.>`], storage: storage as never, allow_msg_ttl: true });
    expect(si.config.allow_msg_ttl).toBe(true);
    expect(await apiFailure(jsm.streams.update(name, { ...si.config, allow_msg_ttl: false }))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'message TTL status can not be disabled',
    });
    expect((await jsm.streams.info(name)).config.allow_msg_ttl).toBe(true);
  });

  it('a TTL stream can be made from a plain one by update', async () => {
    const si = await addStream({ name: 'LATER', subjects: ['later.>'] });
    expect(si.config.allow_msg_ttl ?? false).toBe(false);
    expect((await jsm.streams.update('LATER', { ...si.config, allow_msg_ttl: true })).config.allow_msg_ttl).toBe(true);
    const pa = await js.publish('later.a', 'x', { ttl: '1h' });
    expect(pa.seq).toBe(1);
  });

  it('a marker TTL turns on allow_msg_ttl and roll-ups (and deny_purge off), as a request that is not pedantic', async () => {
    const si = await addStream({ name: 'MARKERS_CFG', subjects: ['mcfg.>'], subject_delete_marker_ttl: 5_000_000_000, deny_purge: true });
    expect(si.config.allow_msg_ttl).toBe(true);
    expect(si.config.allow_rollup_hdrs).toBe(true);
    expect(si.config.deny_purge).toBe(false);
    expect(si.config.subject_delete_marker_ttl).toBe(5_000_000_000);
  });

  it('marker TTLs below 1s or negative are refused', async () => {
    expect(await apiFailure(addStream({ name: 'SHORT', subjects: ['short.>'], subject_delete_marker_ttl: 500_000_000 }))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'subject delete marker TTL must be at least 1 second',
    });
    expect(await apiFailure(addStream({ name: 'NEG', subjects: ['neg.>'], subject_delete_marker_ttl: -1 }))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'subject delete marker TTL must not be negative',
    });
  });
});

describe('the Nats-TTL header and its errors', () => {
  beforeAll(async () => {
    await addStream({ name: 'PLAIN', subjects: ['plain.>'] });
    await addStream({ name: 'TTL', subjects: ['ttl.>'], allow_msg_ttl: true, storage: 'memory' as never });
  });

  async function pubAck(subject: string, ttl: string): Promise<Record<string, unknown>> {
    const h = headers();
    h.set('Nats-TTL', ttl);
    const m = await nc.request(subject, enc.encode('x'), { headers: h, timeout: 2000 });
    return JSON.parse(dec.decode(m.data)) as Record<string, unknown>;
  }

  it('on a stream without allow_msg_ttl: 10166, nothing stored', async () => {
    expect(await pubAck('plain.a', '5s')).toEqual({ error: { code: 400, err_code: 10166, description: 'per-message TTL is disabled' }, stream: 'PLAIN', seq: 0 });
    expect(await messages('PLAIN')).toBe(0);
  });

  it.each(['soon', '500ms', '0', '-5s', '5 s', '1.5'])('the invalid value %j: 10165, nothing stored', async (value) => {
    expect(await pubAck('ttl.bad', value)).toEqual({ error: { code: 400, err_code: 10165, description: 'invalid per-message TTL' }, stream: 'TTL', seq: 0 });
    expect((await jsm.streams.info('TTL', { subjects_filter: 'ttl.bad' })).state.subjects?.['ttl.bad']).toBeUndefined();
  });

  it.each(['1s', '1m30s', '90', 'never', 'NEVER', '2h'])('the valid value %j is stored with the header as sent', async (value) => {
    const pa = await js.publish('ttl.ok', 'x', { ttl: value });
    const sm = await jsm.streams.getMessage('TTL', { seq: pa.seq });
    expect(sm?.header.get('Nats-TTL')).toBe(value);
  });
});

describe('expiry', () => {
  it.each(['file', 'memory'] as const)('%s: a message goes at its stored timestamp + TTL, others stay', async (storage) => {
    const name = `EXP_${storage}`;
    await addStream({ name, subjects: [`exp.${storage}.>`], storage: storage as never, allow_msg_ttl: true });
    const short = await js.publish(`exp.${storage}.a`, 'short', { ttl: '1s' });
    await js.publish(`exp.${storage}.b`, 'plain');
    await js.publish(`exp.${storage}.c`, 'long', { ttl: '1h' });
    const tsMs = (await jsm.streams.getMessage(name, { seq: short.seq }))!.time.getTime();
    const goneAt = await until(async () => (await messages(name)) === 2, 5000);
    const dueMs = tsMs + 1000;
    console.log(`${storage}: gone ${goneAt - dueMs} ms after due`);
    expect(goneAt - dueMs).toBeGreaterThanOrEqual(-20);
    expect(goneAt - dueMs).toBeLessThan(750);
    expect(await jsm.streams.getMessage(name, { seq: short.seq }).catch(() => null)).toBeNull();
    expect((await jsm.streams.info(name)).state.first_seq).toBe(2);
  });

  it("'never' keeps a message past max_age while the others age out", async () => {
    await addStream({ name: 'NEVER', subjects: ['never.>'], allow_msg_ttl: true, max_age: 500_000_000 });
    await js.publish('never.a', 'old');
    const kept = await js.publish('never.a', 'kept', { ttl: 'never' });
    await js.publish('never.a', 'old too');
    await until(async () => (await messages('NEVER')) === 1, 5000);
    const sm = await jsm.streams.getMessage('NEVER', { last_by_subj: 'never.a' });
    expect([sm!.seq, sm!.string()]).toEqual([kept.seq, 'kept']);
  });

  it('a TTL below the marker TTL is raised to it in the stored header (seconds), unless max_msgs_per_subject is 1', async () => {
    await addStream({ name: 'RAISED', subjects: ['raised.>'], subject_delete_marker_ttl: 60_000_000_000 });
    const pa = await js.publish('raised.a', 'x', { ttl: '5s', headers: (() => { const h = headers(); h.set('Other', 'y'); return h; })() });
    const sm = await jsm.streams.getMessage('RAISED', { seq: pa.seq });
    expect(sm!.header.get('Nats-TTL')).toBe('60');
    expect(sm!.header.get('Other')).toBe('y');
    await addStream({ name: 'RAISED1', subjects: ['raised1.>'], subject_delete_marker_ttl: 60_000_000_000, max_msgs_per_subject: 1 });
    const one = await js.publish('raised1.a', 'x', { ttl: '5s' });
    expect((await jsm.streams.getMessage('RAISED1', { seq: one.seq }))!.header.get('Nats-TTL')).toBe('5s');
  });

  it('is exact across a restart: the expiry comes from the stored message, not a timer the restart forgets', async () => {
    await addStream({ name: 'RESTART', subjects: ['restart.>'], allow_msg_ttl: true, storage: 'file' as never });
    const pa = await js.publish('restart.a', 'x', { ttl: '4s' });
    await js.publish('restart.b', 'stays');
    const tsMs = (await jsm.streams.getMessage('RESTART', { seq: pa.seq }))!.time.getTime();
    await stop();
    await sleep(500);
    await start();
    expect(await messages('RESTART')).toBe(2);
    const goneAt = await until(async () => (await messages('RESTART')) === 1, 8000);
    const dueMs = tsMs + 4000;
    console.log(`after a restart: gone ${goneAt - dueMs} ms after due`);
    expect(goneAt - dueMs).toBeGreaterThanOrEqual(-20);
    expect(goneAt - dueMs).toBeLessThan(750);
  });

  it('with delete markers, a message due while the server was down gets its marker as the server starts', async () => {
    await addStream({ name: 'DOWNSDM', subjects: ['downsdm.>'], storage: 'file' as never, max_msgs_per_subject: 1, subject_delete_marker_ttl: 60_000_000_000 });
    const pa = await js.publish('downsdm.a', 'x', { ttl: '1s' });
    await stop();
    await sleep(1500);
    await start();
    const startedAt = Date.now();
    const sm = await (async () => {
      for (;;) {
        const m = await jsm.streams.getMessage('DOWNSDM', { last_by_subj: 'downsdm.a' }).catch(() => null);
        if (m !== null && m.seq > pa.seq) return m;
        if (Date.now() - startedAt > 5000) throw new Error('no marker');
        await sleep(20);
      }
    })();
    // Written once the stream serves (no wait for the 2 s report retry).
    expect(Date.now() - startedAt).toBeLessThan(1000);
    expect([sm.seq, sm.header.get('Nats-Marker-Reason'), sm.header.get('Nats-TTL')]).toEqual([pa.seq + 1, 'MaxAge', '1m0s']);
    expect((await jsm.streams.info('DOWNSDM')).state.messages).toBe(1);
  });

  it('a message due while the server was down goes as it starts', async () => {
    await addStream({ name: 'DOWN', subjects: ['down.>'], allow_msg_ttl: true, storage: 'file' as never });
    await js.publish('down.a', 'x', { ttl: '1s' });
    await js.publish('down.b', 'stays');
    await stop();
    await sleep(1500);
    await start();
    await until(async () => (await messages('DOWN')) === 1, 2000);
    expect((await jsm.streams.info('DOWN')).state.first_seq).toBe(2);
  });
});

describe('a sourced message with Nats-TTL', () => {
  it('is stored verbatim by a sourcing stream without allow_msg_ttl (the origin validated it, as 2.14)', async () => {
    await jsm.streams.add({ name: 'TTLORIGIN', subjects: ['ttlorigin.>'], allow_msg_ttl: true } as Partial<StreamConfig>);
    await jsm.streams.add({ name: 'TTLSOURCED', sources: [{ name: 'TTLORIGIN' }] } as Partial<StreamConfig>);
    const h = headers();
    h.set('Nats-TTL', '1h');
    const ack = await js.publish('ttlorigin.a', enc.encode('kept'), { headers: h });
    expect(ack.seq).toBe(1);
    await until(async () => (await jsm.streams.info('TTLSOURCED')).state.messages === 1, 10_000);
    const m = await jsm.streams.getMessage('TTLSOURCED', { seq: 1 });
    expect(m.header.get('Nats-TTL')).toBe('1h');
    expect(dec.decode(m.data)).toBe('kept');
    expect((await jsm.streams.info('TTLSOURCED')).sources?.[0]?.error).toBeUndefined();
  });
});
