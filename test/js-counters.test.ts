// Counter streams on one node (ADR-49), through the stock @nats-io/* v3 clients: allow_msg_counter and the
// config rules 2.14 puts on it, Nats-Incr with big-integer values and its errors, the stored {"val":"..."}
// body and the PubAck's `val`, totals that survive a restart (read back from the store), and
// Nats-Counter-Sources on a counter stream sourcing two others. nats-server 2.9.10 predates counters (2.12),
// so this runs against Flotilla only; every expected value is nats-server 2.14.5's (stream.go checkStreamCfg /
// processJetStreamMsg, jetstream_batching.go checkMsgHeadersPreClusteredProposal, errors.json).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection } from '@nats-io/transport-node';
import { type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { JetStreamV3Server, jsApiFailure as apiFailure, rawPubAck } from './helpers/jetstream-v3-server.js';
import { until } from './helpers/until.js';

const srv = new JetStreamV3Server('flotilla-counters-');
let nc: NatsConnection;
let jsm: JetStreamManager;
const dec = new TextDecoder();

async function start(): Promise<void> {
  ({ nc, jsm } = await srv.start());
}

async function stop(): Promise<void> {
  expect(await srv.stop()).toBe(0);
}

beforeAll(start);
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

const incr = (subject: string, hdrs: Record<string, string>, body = ''): Promise<Record<string, unknown>> => rawPubAck(nc, subject, hdrs, body);

const counterStream = (name: string, extra: Partial<StreamConfig> = {}): Partial<StreamConfig> =>
  ({ name, subjects: [`${name.toLowerCase()}.>`], allow_msg_counter: true, ...extra }) as Partial<StreamConfig>;

describe('counter stream config', () => {
  it('is created with allow_msg_counter and reports it; 2.14 refusals come with its texts', async () => {
    const si = await jsm.streams.add(counterStream('CFG'));
    expect(si.config.allow_msg_counter).toBe(true);
    const invalid = (description: string) => ({ code: 500, err_code: 10052, description });
    expect(await apiFailure(jsm.streams.add(counterStream('BADDISC', { discard: 'new' as never })))).toEqual(invalid('counter stream cannot use discard new'));
    expect(await apiFailure(jsm.streams.add(counterStream('BADTTL', { allow_msg_ttl: true } as never)))).toEqual(invalid('counter stream cannot use message TTLs'));
    expect(await apiFailure(jsm.streams.add(counterStream('BADRET', { retention: 'workqueue' as never })))).toEqual(invalid('counter stream can only use limits retention'));
    expect(await apiFailure(jsm.streams.add({ name: 'BADMIRROR', mirror: { name: 'CFG' }, allow_msg_counter: true } as never))).toEqual({
      code: 400,
      err_code: 10173,
      description: 'stream mirrors can not also calculate counters',
    });
    expect(await apiFailure(jsm.streams.update('CFG', { allow_msg_counter: false } as never))).toEqual(
      invalid('stream configuration update can not change message counter setting'),
    );
    const plain = await jsm.streams.add({ name: 'PLAINCFG', subjects: ['plaincfg.>'] });
    expect(plain.config.allow_msg_counter ?? false).toBe(false);
    expect(await apiFailure(jsm.streams.update('PLAINCFG', { allow_msg_counter: true } as never))).toEqual(
      invalid('stream configuration update can not change message counter setting'),
    );
  });
});

describe('Nats-Incr', () => {
  it('sums big integers exactly, stores {"val":...} and acks with val', async () => {
    await jsm.streams.add(counterStream('BIG'));
    const huge = '123456789012345678901234567890';
    expect(await incr('big.a', { 'Nats-Incr': huge })).toEqual({ stream: 'BIG', seq: 1, val: huge });
    expect(await incr('big.a', { 'Nats-Incr': '+10' })).toEqual({ stream: 'BIG', seq: 2, val: '123456789012345678901234567900' });
    expect(await incr('big.a', { 'Nats-Incr': '-123456789012345678901234567901' })).toEqual({ stream: 'BIG', seq: 3, val: '-1' });
    expect(await incr('big.b', { 'Nats-Incr': '0' })).toEqual({ stream: 'BIG', seq: 4, val: '0' });
    const last = await jsm.streams.getMessage('BIG', { last_by_subj: 'big.a' });
    expect(last!.seq).toBe(3);
    expect(dec.decode(last!.data)).toBe('{"val":"-1"}');
    expect(last!.header.get('Nats-Incr')).toBe('-123456789012345678901234567901');
  });

  it('refuses what 2.14 refuses, with its codes', async () => {
    await jsm.streams.add(counterStream('ERRS'));
    const err = (code: number, err_code: number, description: string) => ({ error: { code, err_code, description }, stream: 'ERRS', seq: 0 });
    expect(await incr('errs.a', {}, 'x')).toEqual(err(400, 10169, 'message counter increment is missing'));
    expect(await incr('errs.a', { 'Nats-Msg-Id': 'm1' })).toEqual(err(400, 10169, 'message counter increment is missing'));
    expect(await incr('errs.a', { 'Nats-Incr': '1.5' })).toEqual(err(400, 10171, 'message counter increment is invalid'));
    expect(await incr('errs.a', { 'Nats-Incr': '0x10' })).toEqual(err(400, 10171, 'message counter increment is invalid'));
    expect(await incr('errs.a', { 'Nats-Incr': '1' }, 'payload')).toEqual(err(400, 10170, 'message counter has payload'));
    expect(await incr('errs.a', { 'Nats-Incr': '1', 'Nats-Expected-Last-Sequence': '0' })).toEqual(err(400, 10171, 'message counter increment is invalid'));
    expect(await incr('errs.a', { 'Nats-Incr': '1', 'Nats-Rollup': 'sub' })).toEqual(err(400, 10171, 'message counter increment is invalid'));
    expect(await incr('errs.a', { 'Nats-Incr': '1', 'Nats-TTL': '1m' })).toEqual(err(400, 10166, 'per-message TTL is disabled'));
    // Nothing refused was stored.
    expect((await jsm.streams.info('ERRS')).state.messages).toBe(0);
    // An increment with a Nats-Msg-Id is de-duplicated like any publish.
    expect(await incr('errs.a', { 'Nats-Incr': '7', 'Nats-Msg-Id': 'once' })).toEqual({ stream: 'ERRS', seq: 1, val: '7' });
    expect(await incr('errs.a', { 'Nats-Incr': '7', 'Nats-Msg-Id': 'once' })).toEqual({ stream: 'ERRS', seq: 1, duplicate: true });
    // Not a counter stream: Nats-Incr is 10168, as before.
    await jsm.streams.add({ name: 'NOCOUNT', subjects: ['nocount.>'] });
    expect(await incr('nocount.a', { 'Nats-Incr': '1' })).toMatchObject({ error: { code: 400, err_code: 10168, description: 'message counters is disabled' } });
  });

  it('concurrent increments sum exactly, and the total survives a restart', async () => {
    await jsm.streams.add(counterStream('CONC'));
    const n = 200;
    const acks = await Promise.all(Array.from({ length: n }, (_, i) => incr('conc.x', { 'Nats-Incr': String(i + 1) })));
    expect(acks.every((a) => a['error'] === undefined)).toBe(true);
    const expected = String((n * (n + 1)) / 2);
    expect(acks.map((a) => a['val'] as string)).toContain(expected);
    await stop();
    await start();
    // Read back from the store after the restart: the next increment adds to the stored total.
    expect(await incr('conc.x', { 'Nats-Incr': '-1' })).toEqual({ stream: 'CONC', seq: n + 1, val: String(n * (n + 1) / 2 - 1) });
    // A purged subject starts again at zero.
    await jsm.streams.purge('CONC', { filter: 'conc.x' });
    expect(await incr('conc.x', { 'Nats-Incr': '5' })).toMatchObject({ stream: 'CONC', val: '5' });
  });
});

describe('Nats-Counter-Sources', () => {
  it('a counter stream sourcing two counters adds their totals and records each origin', async () => {
    await jsm.streams.add(counterStream('EU'));
    await jsm.streams.add(counterStream('US'));
    await jsm.streams.add({ name: 'GLOBAL', subjects: [], allow_msg_counter: true, sources: [{ name: 'EU' }, { name: 'US' }] } as never);
    await incr('eu.hits', { 'Nats-Incr': '10' });
    await incr('us.hits', { 'Nats-Incr': '5' });
    await incr('eu.hits', { 'Nats-Incr': '3' });
    const last = await until(
      async () => {
        const info = await jsm.streams.info('GLOBAL');
        if (info.state.messages < 3) return null;
        const m = await jsm.streams.getMessage('GLOBAL', { last_by_subj: 'eu.hits' });
        return m;
      },
      20_000,
      'GLOBAL to source three messages',
    );
    // Each origin subject keeps its own total: eu.hits and us.hits are separate subjects here too.
    expect(dec.decode(last.data)).toBe('{"val":"13"}');
    expect(JSON.parse(last.header.get('Nats-Counter-Sources'))).toEqual({ EU: { 'eu.hits': '13' } });
    // The increment stored is the difference to the origin's previous total.
    expect(last.header.get('Nats-Incr')).toBe('3');
    const us = await jsm.streams.getMessage('GLOBAL', { last_by_subj: 'us.hits' });
    expect(dec.decode(us!.data)).toBe('{"val":"5"}');
  });

  it('sources into one subject (a transform) sum per origin', async () => {
    await jsm.streams.add(counterStream('SHARD1'));
    await jsm.streams.add(counterStream('SHARD2'));
    await jsm.streams.add({
      name: 'TOTAL',
      subjects: [],
      allow_msg_counter: true,
      sources: [
        { name: 'SHARD1', subject_transforms: [{ src: 'shard1.>', dest: 'total.>' }] },
        { name: 'SHARD2', subject_transforms: [{ src: 'shard2.>', dest: 'total.>' }] },
      ],
    } as never);
    await incr('shard1.n', { 'Nats-Incr': '100' });
    await incr('shard2.n', { 'Nats-Incr': '20' });
    await incr('shard1.n', { 'Nats-Incr': '1' });
    const last = await until(
      async () => ((await jsm.streams.info('TOTAL')).state.messages >= 3 ? jsm.streams.getMessage('TOTAL', { last_by_subj: 'total.n' }) : null),
      20_000,
      'TOTAL to source three messages',
    );
    expect(dec.decode(last.data)).toBe('{"val":"121"}');
    expect(JSON.parse(last.header.get('Nats-Counter-Sources'))).toEqual({ SHARD1: { 'shard1.n': '101' }, SHARD2: { 'shard2.n': '20' } });
  });
});
