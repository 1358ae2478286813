// Message schedules on one node (ADR-51), through the stock @nats-io/* v3 clients: allow_msg_schedules and its
// config rules, the Nats-Schedule headers and their errors, `@at` firing once (the schedule then purged),
// `@every` firing repeatedly with Nats-Schedule-Next moving on, Nats-Schedule-TTL / -Source on the copies,
// and a schedule surviving a restart. nats-server 2.9.10 predates schedules (2.12), so this runs against
// Flotilla only; every expected value is nats-server 2.14.5's (scheduler.go getScheduledMessages, stream.go
// checkStreamCfg, jetstream_batching.go checkMsgHeadersPreClusteredProposal, errors.json).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection } from '@nats-io/transport-node';
import { type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { JetStreamV3Server, jsApiFailure as apiFailure, rawPubAck } from './helpers/jetstream-v3-server.js';
import { until } from './helpers/until.js';

const srv = new JetStreamV3Server('flotilla-schedules-');
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

const publish = (subject: string, hdrs: Record<string, string>, body = ''): Promise<Record<string, unknown>> => rawPubAck(nc, subject, hdrs, body);

const scheduleStream = (name: string, extra: Partial<StreamConfig> = {}): Partial<StreamConfig> =>
  ({ name, subjects: [`${name.toLowerCase()}.>`], allow_msg_schedules: true, ...extra }) as Partial<StreamConfig>;

/** Messages on `subject` in stream order. */
async function messagesOn(stream: string, subject: string): Promise<Array<{ seq: number; data: string; header: Record<string, string> }>> {
  const info = await jsm.streams.info(stream);
  const out: Array<{ seq: number; data: string; header: Record<string, string> }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m === null || m.subject !== subject) continue;
    const header: Record<string, string> = {};
    for (const k of m.header?.keys() ?? []) header[k] = m.header.get(k);
    out.push({ seq, data: dec.decode(m.data), header });
  }
  return out;
}

describe('schedule stream config', () => {
  it('allow_msg_schedules turns roll-ups on, refuses discard new, and cannot be turned off', async () => {
    const si = await jsm.streams.add(scheduleStream('SCFG', { deny_purge: true } as never));
    expect([si.config.allow_msg_schedules, si.config.allow_rollup_hdrs, si.config.deny_purge]).toEqual([true, true, false]);
    expect(await apiFailure(jsm.streams.add(scheduleStream('SNEW', { discard: 'new' as never })))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'message scheduling cannot use discard new',
    });
    expect(await apiFailure(jsm.streams.update('SCFG', { allow_msg_schedules: false } as never))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'message schedules can not be disabled',
    });
    expect(await apiFailure(jsm.streams.add({ name: 'SCNT', subjects: ['scnt.>'], allow_msg_schedules: true, allow_msg_counter: true } as never))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'counter stream cannot use message schedules',
    });
  });
});

describe('Nats-Schedule headers', () => {
  it('refuses bad schedules with 2.14 codes', async () => {
    await jsm.streams.add(scheduleStream('SERR'));
    const err = (err_code: number, description: string) => ({ error: { code: 400, err_code, description }, stream: 'SERR', seq: 0 });
    const base = { 'Nats-Schedule-Target': 'serr.out' };
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 500ms' })).toEqual(err(10189, 'message schedules pattern is invalid'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '* * * *' })).toEqual(err(10189, 'message schedules pattern is invalid'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@at 2026-13-01T00:00:00Z' })).toEqual(err(10189, 'message schedules pattern is invalid'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Time-Zone': 'Europe/Amsterdam' })).toEqual(
      err(10189, 'message schedules pattern is invalid'),
    );
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '0 0 * * * *', 'Nats-Schedule-Time-Zone': 'Mars/Olympus' })).toEqual(
      err(10223, 'message schedules time zone is invalid'),
    );
    expect(await publish('serr.s', { 'Nats-Schedule': '@every 1s' })).toEqual(err(10190, 'message schedules target is invalid'));
    expect(await publish('serr.s', { 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Target': 'serr.s' })).toEqual(err(10190, 'message schedules target is invalid'));
    expect(await publish('serr.s', { 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Target': 'elsewhere.x' })).toEqual(err(10190, 'message schedules target is invalid'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 1s', 'Nats-Schedule-TTL': 'soon' })).toEqual(err(10191, 'message schedules invalid per-message TTL'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 1s', 'Nats-Schedule-TTL': '5s' })).toEqual(err(10166, 'per-message TTL is disabled'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Rollup': 'all' })).toEqual(err(10192, 'message schedules invalid rollup'));
    expect(await publish('serr.s', { ...base, 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Source': 'serr.out' })).toEqual(err(10203, 'message schedules source is invalid'));
    expect(await publish('serr.s', { 'Nats-Scheduler': 'serr.x' })).toEqual(err(10212, 'message schedules invalid scheduler'));
    expect((await jsm.streams.info('SERR')).state.messages).toBe(0);
    // Not a schedule stream: 10188, as before.
    await jsm.streams.add({ name: 'SPLAIN', subjects: ['splain.>'] });
    expect(await publish('splain.s', { 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Target': 'splain.o' })).toMatchObject({ error: { err_code: 10188 } });
  });
});

describe('firing', () => {
  it('@at fires once at its time, with Nats-Scheduler and Nats-Schedule-Next: purge, and the schedule is purged', async () => {
    await jsm.streams.add(scheduleStream('SAT', { allow_msg_ttl: true } as never));
    const atMs = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const at = new Date(atMs).toISOString().replace('.000Z', 'Z');
    const ack = await publish(
      'sat.sched',
      { 'Nats-Schedule': `@at ${at}`, 'Nats-Schedule-Target': 'sat.out', 'Nats-Schedule-TTL': '1h', 'Nats-Msg-Id': 'a1', 'X-Mine': 'kept' },
      'payload',
    );
    expect(ack).toEqual({ stream: 'SAT', seq: 1 });
    const stored = await jsm.streams.getMessage('SAT', { seq: 1 });
    expect(stored!.header.get('Nats-Rollup')).toBe('sub');
    const copies = await until(async () => {
      const c = await messagesOn('SAT', 'sat.out');
      return c.length > 0 ? c : null;
    }, 20_000, 'the @at copy');
    const firedMs = (await jsm.streams.getMessage('SAT', { seq: copies[0]!.seq }))!.time.getTime();
    expect(firedMs).toBeGreaterThanOrEqual(atMs - 50);
    expect(copies[0]!.data).toBe('payload');
    expect(copies[0]!.header).toEqual({ 'X-Mine': 'kept', 'Nats-Scheduler': 'sat.sched', 'Nats-Schedule-Next': 'purge', 'Nats-TTL': '1h' });
    // The schedule itself is gone, and nothing fires again.
    await until(async () => (await messagesOn('SAT', 'sat.sched')).length === 0, 10_000, 'the schedule purged');
    await new Promise((r) => setTimeout(r, 2500));
    expect(await messagesOn('SAT', 'sat.out')).toHaveLength(1);
  });

  it('@every fires repeatedly, Nats-Schedule-Next naming the next firing; a new schedule on the subject replaces it', async () => {
    await jsm.streams.add(scheduleStream('SEVERY'));
    await publish('severy.tick', { 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Target': 'severy.out' }, 'tick');
    const copies = await until(async () => {
      const c = await messagesOn('SEVERY', 'severy.out');
      return c.length >= 3 ? c : null;
    }, 30_000, 'three @every copies');
    const nexts = copies.map((c) => Date.parse(c.header['Nats-Schedule-Next']!));
    expect(nexts.every((n) => Number.isFinite(n))).toBe(true);
    expect(nexts[1]! - nexts[0]!).toBeGreaterThanOrEqual(1000);
    expect(copies.every((c) => c.header['Nats-Scheduler'] === 'severy.tick' && c.data === 'tick')).toBe(true);
    // A plain message on the schedule's subject ends it (the rollup keeps one message per subject).
    await publish('severy.tick', { 'Nats-Rollup': 'sub' }, 'stop');
    const count = (await messagesOn('SEVERY', 'severy.out')).length;
    await new Promise((r) => setTimeout(r, 3000));
    expect((await messagesOn('SEVERY', 'severy.out')).length).toBeLessThanOrEqual(count + 1);
  });

  it('Nats-Schedule-Source sends the latest message of another subject', async () => {
    await jsm.streams.add(scheduleStream('SSRC'));
    await publish('ssrc.latest', {}, 'v1');
    await publish('ssrc.latest', {}, 'v2');
    const at = new Date(Date.now() - 1000).toISOString();
    await publish('ssrc.sched', { 'Nats-Schedule': `@at ${at.replace(/\.\d+Z$/, 'Z')}`, 'Nats-Schedule-Target': 'ssrc.out', 'Nats-Schedule-Source': 'ssrc.latest' }, 'ignored');
    const copies = await until(async () => {
      const c = await messagesOn('SSRC', 'ssrc.out');
      return c.length > 0 ? c : null;
    }, 20_000, 'the sourced copy');
    expect(copies[0]!.data).toBe('v2');
  });

  it('a cron schedule survives a restart and fires after it', async () => {
    await jsm.streams.add(scheduleStream('SCRON'));
    await publish('scron.s', { 'Nats-Schedule': '* * * * * *', 'Nats-Schedule-Target': 'scron.out' }, 'c');
    await until(async () => (await messagesOn('SCRON', 'scron.out')).length >= 1, 20_000, 'a cron copy');
    await stop();
    await start();
    const before = (await messagesOn('SCRON', 'scron.out')).length;
    await until(async () => (await messagesOn('SCRON', 'scron.out')).length >= before + 2, 20_000, 'cron copies after the restart');
  });
});
