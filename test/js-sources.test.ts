// Sources (issue 19 item 2) through the stock `nats` client on one node: a stream with `sources` stores each
// origin message once, in arrival order, with the Nats-Stream-Source header as nats-server writes it, beside
// its own subjects; sources are added and removed by stream update; stream info has one `sources` entry per
// source; a kill -9 resumes from the last sourced message. Runs against nats-server 2.9.10 too
// (E2E_SERVER=nats-server; its header is the 2.9 form `<name> <seq>`).
import { describe, it, expect, afterAll } from 'vitest';
import { headers, StorageType, type JetStreamManager, type JetStreamClient, type NatsConnection, type StreamInfo } from 'nats';
import { apiError } from './helpers/api-replies.js';
import { RestartableJetStream, useJetStreamServer } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dec = new TextDecoder();

let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

useJetStreamServer('js-sources-', { reconnect: false }, (f) => ({ nc, js, jsm } = f));

/** nats-server 2.14's header (`<name> <seq> <filter> <dest> <subject>`), or 2.9's (`<name> <seq>`). */
function sourceHeader(name: string, seq: number, subject: string, filter = '>'): string {
  return AGAINST_NATS_SERVER ? `${name} ${seq}` : `${name} ${seq} ${filter} > ${subject}`;
}

async function messagesOf(stream: string, timeoutMs = 10_000, count?: number): Promise<Array<{ seq: number; subject: string; data: string; source: string | undefined }>> {
  const si: StreamInfo = await until(
    async () => {
      const s = await jsm.streams.info(stream);
      return count === undefined || s.state.messages === count ? s : null;
    },
    timeoutMs,
    `${stream} with ${count} messages`,
    50,
  );
  const out = [];
  for (let seq = si.state.first_seq; seq <= si.state.last_seq && seq > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m !== null) out.push({ seq, subject: m.subject, data: dec.decode(m.data), source: m.header?.get('Nats-Stream-Source') || undefined });
  }
  return out;
}

describe('sources on one node', () => {
  it('aggregates two origins and its own subjects, each message once with its source header', async () => {
    await jsm.streams.add({ name: 'SA', subjects: ['sa.>'] });
    await jsm.streams.add({ name: 'SB', subjects: ['sb.>'] });
    for (let i = 1; i <= 5; i++) await js.publish(`sa.${i}`, `a${i}`);
    for (let i = 1; i <= 3; i++) await js.publish(`sb.${i}`, `b${i}`);
    await jsm.streams.add({ name: 'AGG', subjects: ['agg.own'], sources: [{ name: 'SA' }, { name: 'SB' }] });
    await js.publish('agg.own', 'own1');
    const msgs = await messagesOf('AGG', 10_000, 9);
    const fromA = msgs.filter((m) => m.subject.startsWith('sa.'));
    const fromB = msgs.filter((m) => m.subject.startsWith('sb.'));
    expect(fromA.map((m) => m.data)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(fromB.map((m) => m.data)).toEqual(['b1', 'b2', 'b3']);
    expect(fromA[2]!.source).toBe(sourceHeader('SA', 3, 'sa.3'));
    expect(fromB[0]!.source).toBe(sourceHeader('SB', 1, 'sb.1'));
    expect(msgs.find((m) => m.subject === 'agg.own')?.source).toBeUndefined();
    // Sequences are the sourcing stream's own, without gaps.
    expect(msgs.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // It follows the origins.
    await js.publish('sa.6', 'a6');
    const more = await messagesOf('AGG', 10_000, 10);
    expect(more[9]!.data).toBe('a6');
    const si = await jsm.streams.info('AGG');
    expect(si.sources?.map((s) => s.name).sort()).toEqual(['SA', 'SB']);
    for (const s of si.sources ?? []) {
      expect(s.lag).toBe(0);
      expect(s.active).toBeGreaterThanOrEqual(0);
      expect(s.error).toBeUndefined();
    }
  });

  it('a filtered source takes only its filter; Nats-Expected headers are not checked again', async () => {
    await jsm.streams.add({ name: 'FS', subjects: ['fs.>'] });
    const h = headers();
    h.set('Nats-Expected-Last-Sequence', '0');
    await js.publish('fs.keep', 'k1', { headers: h });
    await js.publish('fs.drop', 'd1');
    await js.publish('fs.keep', 'k2');
    await jsm.streams.add({ name: 'FSAGG', sources: [{ name: 'FS', filter_subject: 'fs.keep' }] });
    const msgs = await messagesOf('FSAGG', 10_000, 2);
    expect(msgs.map((m) => m.data)).toEqual(['k1', 'k2']);
    expect(msgs[1]!.source).toBe(sourceHeader('FS', 3, 'fs.keep', 'fs.keep'));
    const first = await jsm.streams.getMessage('FSAGG', { seq: 1 });
    // 2.10+ strips them from sourced messages; 2.9 kept them.
    expect(first.header?.get('Nats-Expected-Last-Sequence') ?? '').toBe(AGAINST_NATS_SERVER ? '0' : '');
    const si = await jsm.streams.info('FSAGG');
    if (!AGAINST_NATS_SERVER) expect(si.sources?.[0]?.filter_subject).toBe('fs.keep');
  });

  it('a Nats-Msg-Id seen within the window is stored once', async () => {
    await jsm.streams.add({ name: 'D1', subjects: ['d1'] });
    await jsm.streams.add({ name: 'D2', subjects: ['d2'] });
    await js.publish('d1', 'x', { msgID: 'same' });
    await js.publish('d2', 'y', { msgID: 'same' });
    await js.publish('d2', 'z', { msgID: 'other' });
    await jsm.streams.add({ name: 'DAGG', sources: [{ name: 'D1' }, { name: 'D2' }] });
    const msgs = await messagesOf('DAGG', 10_000, 2);
    // The two origins race: whichever of x and y arrives first is kept, the other is its duplicate.
    const held = msgs.map((m) => m.data).sort();
    expect(held.length).toBe(2);
    expect(held[1]).toBe('z');
    expect(['x', 'y']).toContain(held[0]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await jsm.streams.info('DAGG')).state.messages).toBe(2);
  });

  it('adding and removing a source by stream update', async () => {
    await jsm.streams.add({ name: 'U1', subjects: ['u1'] });
    await jsm.streams.add({ name: 'U2', subjects: ['u2'] });
    await js.publish('u1', 'one');
    await js.publish('u2', 'two');
    await jsm.streams.add({ name: 'UAGG', sources: [{ name: 'U1' }] });
    await messagesOf('UAGG', 10_000, 1);
    let cfg = (await jsm.streams.info('UAGG')).config;
    await jsm.streams.update('UAGG', { ...cfg, sources: [{ name: 'U1' }, { name: 'U2' }] });
    let msgs = await messagesOf('UAGG', 10_000, 2);
    expect(msgs.map((m) => m.data)).toEqual(['one', 'two']);
    // The kept source goes on from where it was: nothing of U1 twice.
    await js.publish('u1', 'three');
    msgs = await messagesOf('UAGG', 10_000, 3);
    expect(msgs.map((m) => m.data)).toEqual(['one', 'two', 'three']);
    cfg = (await jsm.streams.info('UAGG')).config;
    await jsm.streams.update('UAGG', { ...cfg, sources: [{ name: 'U2' }] });
    await js.publish('u1', 'not taken');
    await js.publish('u2', 'four');
    msgs = await messagesOf('UAGG', 10_000, 4);
    expect(msgs.map((m) => m.data)).toEqual(['one', 'two', 'three', 'four']);
    expect((await jsm.streams.info('UAGG')).sources?.map((s) => s.name)).toEqual(['U2']);
  });

  it('a source of a missing origin shows the error in its entry, then takes the origin once it exists', async () => {
    await jsm.streams.add({ name: 'LATEAGG', subjects: ['lateagg'], sources: [{ name: 'LATESRC' }, { name: 'SA' }] });
    const failing = await until(
      async () => {
        const si = await jsm.streams.info('LATEAGG');
        return si.sources?.find((s) => s.name === 'LATESRC')?.error !== undefined ? si : null;
      },
      10_000,
      'the source error',
      50,
    );
    const late = failing.sources!.find((s) => s.name === 'LATESRC')!;
    expect(late.error).toMatchObject({ code: 404, err_code: 10059, description: 'stream not found' });
    expect(late.active).toBe(-1);
    expect(failing.sources!.find((s) => s.name === 'SA')?.error).toBeUndefined();
    await jsm.streams.add({ name: 'LATESRC', subjects: ['latesrc'], storage: StorageType.Memory });
    await js.publish('latesrc', 'late1');
    const msgs = await messagesOf('LATEAGG', 25_000, 7);
    expect(msgs.filter((m) => m.subject === 'latesrc').map((m) => m.data)).toEqual(['late1']);
    const si = await jsm.streams.info('LATEAGG');
    expect(si.sources?.find((s) => s.name === 'LATESRC')?.error).toBeUndefined();
  }, 30_000);

  it('opt_start_seq and opt_start_time start a source there', async () => {
    await jsm.streams.add({ name: 'ST', subjects: ['st'] });
    for (let i = 1; i <= 6; i++) await js.publish('st', `s${i}`);
    await new Promise((r) => setTimeout(r, 50));
    const cut = new Date();
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 7; i <= 9; i++) await js.publish('st', `s${i}`);
    await jsm.streams.add({ name: 'STSEQ', sources: [{ name: 'ST', opt_start_seq: 5 }] });
    await jsm.streams.add({ name: 'STTIME', sources: [{ name: 'ST', opt_start_time: cut.toISOString() }] });
    expect((await messagesOf('STSEQ', 10_000, 5)).map((m) => m.data)).toEqual(['s5', 's6', 's7', 's8', 's9']);
    expect((await messagesOf('STTIME', 10_000, 3)).map((m) => m.data)).toEqual(['s7', 's8', 's9']);
  });

  it('refuses a duplicate source, an invalid name and durable sourcing (2.10+ checks; 2.9 has none)', async () => {
    await jsm.streams.add({ name: 'DUPO', subjects: ['dupo'] });
    if (AGAINST_NATS_SERVER) return;
    expect(await apiError(jsm.streams.add({ name: 'DUPAGG', sources: [{ name: 'DUPO' }, { name: 'DUPO' }] }))).toEqual({
      code: 400,
      err_code: 10140,
      description: 'duplicate source configuration detected',
    });
    expect(await apiError(jsm.streams.add({ name: 'BADAGG', sources: [{ name: 'a.b' }] }))).toEqual({
      code: 400,
      err_code: 10141,
      description: 'sourced stream name is invalid',
    });
    // 2.14's durable sourcing is not implemented: refused by name, nothing created.
    const durable = { name: 'DURAGG', sources: [{ name: 'DUPO', consumer: { name: 'C', deliver_subject: 'x.y' } }] };
    expect(await apiError(jsm.streams.add(durable as never))).toEqual({
      code: 500,
      err_code: 10052,
      description: "stream configuration field 'sources.consumer' is not supported",
    });
    expect(await apiError(jsm.streams.info('DURAGG'))).toMatchObject({ err_code: 10059 });
  });
});

describe('sources across a kill -9', () => {
  const servers = new RestartableJetStream();
  afterAll(() => servers.cleanup());

  it('resumes from the last sourced message: every origin message exactly once, in order', async () => {
    const dir = servers.newStoreDir('js-sources-kill-');
    let { server, nc: c } = await servers.start(dir);
    let m = await c.jetstreamManager();
    await m.streams.add({ name: 'KA', subjects: ['ka'] });
    await m.streams.add({ name: 'KAGG', sources: [{ name: 'KA' }] });
    const j = c.jetstream();
    for (let i = 1; i <= 150; i++) await j.publish('ka', `m${i}`);
    await until(async () => (await m.streams.info('KAGG')).state.messages === 150, 10_000, 'first catch-up', 50);
    await servers.killHard(server);
    ({ server, nc: c } = await servers.start(dir));
    m = await c.jetstreamManager();
    const j2 = c.jetstream();
    for (let i = 151; i <= 250; i++) await j2.publish('ka', `m${i}`);
    await until(async () => (await m.streams.info('KAGG')).state.messages >= 250, 15_000, 'catch-up after restart', 50);
    await new Promise((r) => setTimeout(r, 500));
    const si = await m.streams.info('KAGG');
    expect(si.state.messages).toBe(250);
    const seen: string[] = [];
    for (let seq = 1; seq <= si.state.last_seq; seq++) seen.push(dec.decode((await m.streams.getMessage('KAGG', { seq })).data));
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => `m${i + 1}`));
    await c.close();
  }, 30_000);
});
