// Mirrors (issue 19 item 1) through the stock `nats` client on one node: a mirror holds the origin's messages
// at the origin's sequences (gaps kept as deletes), follows it, shows the `mirror` block in stream info,
// refuses `subjects` and changes as nats-server does, reports a missing origin in `error` and catches up
// once it appears, and resumes after a kill -9 without storing anything twice. Runs against nats-server
// 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect, afterAll } from 'vitest';
import { StorageType, type JetStreamManager, type JetStreamClient, type NatsConnection, type StreamInfo } from 'nats';
import { apiError } from './helpers/api-replies.js';
import { RestartableJetStream, useJetStreamServer } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dec = new TextDecoder();

let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

useJetStreamServer('js-mirror-', { reconnect: false }, (f) => ({ nc, js, jsm } = f));

/** seq → `subject data` of every message held, read one by one. */
async function contents(stream: string, info: StreamInfo): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m !== null) out.set(seq, `${m.subject} ${dec.decode(m.data)}`);
  }
  return out;
}

async function caughtUp(mirror: string, lastSeq: number, timeoutMs = 10_000): Promise<StreamInfo> {
  return until(
    async () => {
      const si = await jsm.streams.info(mirror);
      return si.state.last_seq === lastSeq ? si : null;
    },
    timeoutMs,
    `${mirror} at ${lastSeq}`,
    50,
  );
}

describe('mirrors on one node', () => {
  it.each([
    ['file', StorageType.File],
    ['memory', StorageType.Memory],
  ])('a %s mirror holds the origin at its sequences, deletes kept as gaps, and follows it', async (name, storage) => {
    const origin = `ORIG_${name}`;
    const mirror = `MIR_${name}`;
    await jsm.streams.add({ name: origin, subjects: [`orig.${name}.>`] });
    for (let i = 1; i <= 30; i++) await js.publish(`orig.${name}.${i % 4}`, `m${i}`);
    await jsm.streams.deleteMessage(origin, 7);
    await jsm.streams.deleteMessage(origin, 8);
    await jsm.streams.add({ name: mirror, storage, mirror: { name: origin } });
    let si = await caughtUp(mirror, 30);
    expect(si.state.messages).toBe(28);
    // nats-server omits an empty `subjects` (omitempty).
    expect(si.config.subjects).toBeUndefined();
    expect(si.mirror?.name).toBe(origin);
    expect(si.mirror?.lag).toBe(0);
    expect(si.mirror?.active).toBeGreaterThanOrEqual(0);
    expect(si.mirror?.error).toBeUndefined();
    const originInfo = await jsm.streams.info(origin);
    expect(await contents(mirror, si)).toEqual(await contents(origin, originInfo));
    expect((await contents(mirror, si)).has(7)).toBe(false);
    // Timestamps are the origin's.
    const a = await jsm.streams.getMessage(origin, { seq: 3 });
    const b = await jsm.streams.getMessage(mirror, { seq: 3 });
    expect(b.time.getTime()).toBe(a.time.getTime());
    // It follows the origin.
    for (let i = 31; i <= 40; i++) await js.publish(`orig.${name}.x`, `m${i}`);
    si = await caughtUp(mirror, 40);
    expect(si.state.messages).toBe(38);
    expect((await jsm.streams.getMessage(mirror, { seq: 40 })).subject).toBe(`orig.${name}.x`);
  });

  it('a filtered mirror keeps only the filter, still at the origin sequences', async () => {
    await jsm.streams.add({ name: 'FORIG', subjects: ['forig.>'] });
    for (let i = 1; i <= 12; i++) await js.publish(`forig.${i % 2 === 0 ? 'even' : 'odd'}`, `m${i}`);
    await jsm.streams.add({ name: 'FMIR', mirror: { name: 'FORIG', filter_subject: 'forig.even' } });
    const si = await caughtUp('FMIR', 12);
    expect(si.state.messages).toBe(6);
    const held = await contents('FMIR', si);
    expect([...held.keys()]).toEqual([2, 4, 6, 8, 10, 12]);
    expect(held.get(4)).toBe('forig.even m4');
  });

  it('opt_start_seq starts the mirror there', async () => {
    await jsm.streams.add({ name: 'SORIG', subjects: ['sorig'] });
    for (let i = 1; i <= 10; i++) await js.publish('sorig', `m${i}`);
    await jsm.streams.add({ name: 'SMIR', mirror: { name: 'SORIG', opt_start_seq: 6 } });
    const si = await caughtUp('SMIR', 10);
    expect(si.state.messages).toBe(5);
    expect(si.state.first_seq).toBe(6);
  });

  it('refuses subjects, sources and mirror changes with nats-server errors; takes no direct publish', async () => {
    await jsm.streams.add({ name: 'RORIG', subjects: ['rorig'] });
    expect(await apiError(jsm.streams.add({ name: 'RMIR', subjects: ['rmir'], mirror: { name: 'RORIG' } }))).toEqual({
      code: 400,
      err_code: 10034,
      description: 'stream mirrors can not contain subjects',
    });
    expect(await apiError(jsm.streams.add({ name: 'RMIR', mirror: { name: 'RORIG' }, sources: [{ name: 'RORIG' }] }))).toEqual({
      code: 400,
      err_code: 10031,
      description: 'stream mirrors can not also contain other sources',
    });
    await jsm.streams.add({ name: 'RMIR', mirror: { name: 'RORIG' } });
    expect(await apiError(jsm.streams.update('RMIR', { mirror: { name: 'RORIG', filter_subject: 'rorig' } }))).toEqual({
      code: 400,
      err_code: 10055,
      description: 'stream mirror configuration can not be updated',
    });
    // A mirror captures no subject: a publish on its name reaches no stream.
    const err = await js.publish('RMIR', 'direct').then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/503/);
    await js.publish('rorig', 'via origin');
    const si = await caughtUp('RMIR', 1);
    expect(si.state.messages).toBe(1);
  });

  it('a mirror inherits mirror_direct from the origin`s allow_direct; a smaller max_msg_size is refused', async () => {
    await jsm.streams.add({ name: 'DORIG', subjects: ['dorig'], allow_direct: true, max_msg_size: 1024 });
    const mi = await jsm.streams.add({ name: 'DMIR', mirror: { name: 'DORIG' } });
    expect(mi.config.mirror_direct).toBe(true);
    expect(await apiError(jsm.streams.add({ name: 'DMIR2', mirror: { name: 'DORIG' }, max_msg_size: 512 }))).toEqual({
      code: 400,
      err_code: 10030,
      description: 'stream mirror must have max message size >= source',
    });
    expect(await apiError(jsm.streams.add({ name: 'DSRC', sources: [{ name: 'DORIG' }], max_msg_size: 512 }))).toEqual({
      code: 400,
      err_code: 10046,
      description: 'stream source must have max message size >= target',
    });
  });

  it('a mirror of a missing origin shows the error, then catches up once it exists', async () => {
    await jsm.streams.add({ name: 'LATEMIR', mirror: { name: 'LATE' } });
    const failing = await until(
      async () => {
        const si = await jsm.streams.info('LATEMIR');
        return si.mirror?.error !== undefined ? si : null;
      },
      10_000,
      'the mirror error',
      50,
    );
    expect(failing.mirror?.error).toMatchObject({ code: 404, err_code: 10059, description: 'stream not found' });
    expect(failing.mirror?.active).toBe(-1);
    await jsm.streams.add({ name: 'LATE', subjects: ['late'] });
    for (let i = 1; i <= 5; i++) await js.publish('late', `m${i}`);
    const si = await caughtUp('LATEMIR', 5, 25_000);
    expect(si.mirror?.error).toBeUndefined();
    expect(si.state.messages).toBe(5);
  }, 30_000);

  it('removing the mirror promotes it to a plain stream (2.14; 2.9 refuses the change)', async () => {
    await jsm.streams.add({ name: 'PORIG', subjects: ['porig'] });
    await js.publish('porig', 'one');
    await jsm.streams.add({ name: 'PMIR', mirror: { name: 'PORIG' } });
    await caughtUp('PMIR', 1);
    const cfg = (await jsm.streams.info('PMIR')).config;
    if (AGAINST_NATS_SERVER) {
      expect((await apiError(jsm.streams.update('PMIR', { ...cfg, mirror: undefined, subjects: ['pmir'] }))).err_code).toBe(10055);
      return;
    }
    const promoted = await jsm.streams.update('PMIR', { ...cfg, mirror: undefined, subjects: ['pmir'] });
    expect(promoted.config.mirror).toBeUndefined();
    expect(promoted.mirror).toBeUndefined();
    const ack = await js.publish('pmir', 'own');
    expect(ack.seq).toBe(2);
    await js.publish('porig', 'two');
    await new Promise((r) => setTimeout(r, 500));
    expect((await jsm.streams.info('PMIR')).state.messages).toBe(2);
  });
});

describe('a mirror across a kill -9', () => {
  const servers = new RestartableJetStream();
  afterAll(() => servers.cleanup());

  it('resumes after the restart: every origin message once, at its sequence', async () => {
    const dir = servers.newStoreDir('js-mirror-kill-');
    let { server, nc: c } = await servers.start(dir);
    let m = await c.jetstreamManager();
    await m.streams.add({ name: 'KORIG', subjects: ['korig'] });
    await m.streams.add({ name: 'KMIR', mirror: { name: 'KORIG' } });
    const j = c.jetstream();
    for (let i = 1; i <= 200; i++) await j.publish('korig', `m${i}`);
    await until(async () => (await m.streams.info('KMIR')).state.last_seq === 200, 10_000, 'first catch-up', 50);
    await servers.killHard(server);
    ({ server, nc: c } = await servers.start(dir));
    m = await c.jetstreamManager();
    const j2 = c.jetstream();
    for (let i = 201; i <= 300; i++) await j2.publish('korig', `m${i}`);
    const si = await until(
      async () => {
        const s = await m.streams.info('KMIR');
        return s.state.last_seq === 300 ? s : null;
      },
      15_000,
      'catch-up after restart',
      50,
    );
    expect(si.state.messages).toBe(300);
    for (const seq of [1, 200, 201, 300]) {
      const msg = await m.streams.getMessage('KMIR', { seq });
      expect(dec.decode(msg.data)).toBe(`m${seq}`);
    }
    await c.close();
  }, 30_000);
});

