// Fast batch publish (2.14 `allow_batched`, ADR-50 fast ingest) on one node: the stock @nats-io/jetstream v3
// fast-ingest publisher (`startFastIngest`, `add`, `last`, `end`), and raw publishes with `.$FI` reply
// subjects for the flow acks, gaps and errors. Expected values are nats-server 2.14.5's
// (processJetStreamFastBatchMsg in stream.go, fastBatch in jetstream_batching.go, errors.json 10205–10211).
// nats-server 2.9.10 predates fast batches (2.14), so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createInbox, headers, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstreamManager, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { startFastIngest } from '@nats-io/jetstream/internal';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { until } from './helpers/until.js';

const storeDir = mkdtempSync(join(tmpdir(), 'flotilla-fast-'));
let server: FlotillaProcess;
let nc: NatsConnection;
let jsm: JetStreamManager;
const dec = new TextDecoder();

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
  nc = await connect({ servers: server.url, reconnect: false });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'FAST', subjects: ['fast.>'], allow_batched: true } as never);
  await jsm.streams.add({ name: 'SLOW', subjects: ['slow.>'] });
});
afterAll(async () => {
  await nc.close().catch(() => undefined);
  expect(await server.stop()).toBe(0);
  rmSync(storeDir, { recursive: true, force: true });
});

/** A raw fast-batch publisher: its replies (parsed JSON), in arrival order. */
class RawBatch {
  readonly prefix = createInbox();
  readonly replies: Record<string, unknown>[] = [];
  private readonly sub: Subscription;
  constructor(
    readonly id: string,
    readonly flow = 10,
    readonly gap: 'ok' | 'fail' = 'fail',
  ) {
    this.sub = nc.subscribe(`${this.prefix}.>`, { callback: (_e, m) => this.replies.push(JSON.parse(dec.decode(m.data)) as Record<string, unknown>) });
  }
  reply(seq: number, op: number): string {
    return `${this.prefix}.${this.id}.${this.flow}.${this.gap}.${seq}.${op}.$FI`;
  }
  pub(subject: string, seq: number, op: number, body = `m${seq}`): void {
    nc.publish(subject, body, { reply: this.reply(seq, op) });
  }
  async waitFor(n: number): Promise<Record<string, unknown>[]> {
    await nc.flush();
    await until(() => this.replies.length >= n, 20_000, `${n} replies for ${this.id}`);
    return this.replies;
  }
  close(): void {
    this.sub.unsubscribe();
  }
}

const lastSeq = async (name: string): Promise<number> => (await jsm.streams.info(name)).state.last_seq;

describe('fast batch publish (one node)', () => {
  it('allow_batched is kept in the config; mirrors may not use it', async () => {
    expect((await jsm.streams.info('FAST')).config).toMatchObject({ allow_batched: true });
    expect((await jsm.streams.info('SLOW')).config).not.toHaveProperty('allow_batched');
    const failure = await jsm.streams.add({ name: 'MIR', mirror: { name: 'FAST' }, allow_batched: true } as never).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JetStreamApiError);
    expect((failure as JetStreamApiError).code).toBe(10209);
    expect((failure as JetStreamApiError).message).toBe('stream mirrors can not also use batch publishing');
  });

  it('the stock fast-ingest publisher stores 2000 messages, flow-controlled, and gets the commit PubAck', async () => {
    const before = await lastSeq('FAST');
    const fi = await startFastIngest(nc, 'fast.a', 'm1', { ackInterval: 50 });
    let acked = 0;
    for (let i = 2; i < 2000; i++) acked = Math.max(acked, (await fi.add(`fast.${i % 3}`, `m${i}`)).ackSeq);
    const ack = await fi.last('fast.z', 'm2000');
    expect(ack).toMatchObject({ stream: 'FAST', seq: before + 2000, batch: fi.batch, count: 2000 });
    expect(acked).toBeGreaterThan(0);
    expect(await lastSeq('FAST')).toBe(before + 2000);
    expect((await jsm.streams.getMessage('FAST', { seq: before + 1 })).string()).toBe('m1');
    expect((await jsm.streams.getMessage('FAST', { seq: before + 2000 })).string()).toBe('m2000');
  });

  it('flow acks every N durable messages, and end() (eob) commits what was sent', async () => {
    const before = await lastSeq('FAST');
    const b = new RawBatch('flow1', 4);
    b.pub('fast.f', 1, 0);
    for (let s = 2; s <= 9; s++) b.pub('fast.f', s, 1);
    b.pub('fast.f', 10, 3, '');
    const replies = await b.waitFor(4);
    expect(replies).toEqual([
      { type: 'ack', seq: 0, msgs: 4 },
      { type: 'ack', seq: 4, msgs: 4 },
      { type: 'ack', seq: 8, msgs: 4 },
      { stream: 'FAST', seq: before + 9, batch: 'flow1', count: 9 },
    ]);
    expect(await lastSeq('FAST')).toBe(before + 9);
    b.close();
  });

  it('gap mode fail: a missing sequence is reported and ends the batch with what it had', async () => {
    const before = await lastSeq('FAST');
    const b = new RawBatch('gapfail', 100);
    b.pub('fast.g', 1, 0);
    b.pub('fast.g', 2, 1);
    b.pub('fast.g', 4, 1);
    const replies = await b.waitFor(3);
    expect(replies).toEqual([
      { type: 'ack', seq: 0, msgs: 100 },
      { type: 'gap', last_seq: 3, seq: 4 },
      { stream: 'FAST', seq: before + 2, batch: 'gapfail', count: 2 },
    ]);
    // The batch is over: its next message is unknown.
    b.pub('fast.g', 5, 1);
    expect((await b.waitFor(4))[3]).toEqual({ error: { code: 400, err_code: 10208, description: 'batch publish ID unknown' }, stream: 'FAST', seq: 0 });
    expect(await lastSeq('FAST')).toBe(before + 2);
    b.close();
  });

  it('gap mode ok: the gap is reported and the batch goes on; a ping reports where it is', async () => {
    const before = await lastSeq('FAST');
    const b = new RawBatch('gapok', 100, 'ok');
    b.pub('fast.o', 1, 0);
    b.pub('fast.o', 3, 1);
    await b.waitFor(2);
    b.pub('fast.o', 3, 4, '');
    await b.waitFor(3);
    b.pub('fast.o', 4, 2);
    const replies = await b.waitFor(4);
    expect(replies).toEqual([
      { type: 'ack', seq: 0, msgs: 100 },
      { type: 'gap', last_seq: 2, seq: 3 },
      { type: 'ack', seq: 0, msgs: 100 },
      { stream: 'FAST', seq: before + 3, batch: 'gapok', count: 4 },
    ]);
    expect(await lastSeq('FAST')).toBe(before + 3);
    b.close();
  });

  it('a refused message is an err message; in gap mode fail the batch then commits', async () => {
    const before = await lastSeq('FAST');
    const b = new RawBatch('errs', 100);
    b.pub('fast.e', 1, 0);
    const h = headers();
    h.set('Nats-Expected-Last-Sequence', '1');
    nc.publish('fast.e', 'bad', { reply: b.reply(2, 1), headers: h });
    const replies = await b.waitFor(3);
    expect(replies).toEqual([
      { type: 'ack', seq: 0, msgs: 100 },
      { type: 'err', seq: 2, error: { code: 400, err_code: 10071, description: `wrong last sequence: ${before + 1}` } },
      { stream: 'FAST', seq: before + 1, batch: 'errs', count: 1 },
    ]);
    b.close();
  });

  it('a duplicate Nats-Msg-Id inside the batch is skipped silently; the commit counts it', async () => {
    const before = await lastSeq('FAST');
    const b = new RawBatch('dups', 100);
    const h = headers();
    h.set('Nats-Msg-Id', 'fast-dup-1');
    nc.publish('fast.d', 'one', { reply: b.reply(1, 0), headers: h });
    nc.publish('fast.d', 'again', { reply: b.reply(2, 1), headers: h });
    b.pub('fast.d', 3, 2);
    const replies = await b.waitFor(2);
    expect(replies).toEqual([
      { type: 'ack', seq: 0, msgs: 100 },
      { stream: 'FAST', seq: before + 2, batch: 'dups', count: 3 },
    ]);
    expect((await jsm.streams.getMessage('FAST', { seq: before + 1 })).string()).toBe('one');
    expect((await jsm.streams.getMessage('FAST', { seq: before + 2 })).string()).toBe('m3');
    // A batch of one message, committed at once, that is a duplicate: answered as a plain duplicate publish,
    // with batch and count (a non-committing first message that is a duplicate is skipped as any other).
    const c = new RawBatch('dupfirst', 100);
    nc.publish('fast.d', 'once more', { reply: c.reply(1, 2), headers: h });
    expect(await c.waitFor(1)).toEqual([{ stream: 'FAST', seq: before + 1, duplicate: true, batch: 'dupfirst', count: 1 }]);
    c.pub('fast.d', 2, 1);
    expect((await c.waitFor(2))[1]).toMatchObject({ error: { err_code: 10208 } });
    expect(await lastSeq('FAST')).toBe(before + 2);
    b.close();
    c.close();
  });

  it('the refusals, each by 2.14 error code', async () => {
    const answer = async (subject: string, reply: string): Promise<unknown> => {
      const inbox = reply.slice(0, reply.indexOf('.', 7));
      const sub = nc.subscribe(`${inbox}.>`, { max: 1 });
      nc.publish(subject, 'x', { reply });
      for await (const m of sub) return JSON.parse(dec.decode(m.data));
      return undefined;
    };
    const inbox = (): string => createInbox();
    const err = (code: number, err_code: number, description: string, stream: string) => ({ error: { code, err_code, description }, stream, seq: 0 });
    expect(await answer('slow.x', `${inbox()}.b1.10.fail.1.0.$FI`)).toEqual(err(400, 10205, 'batch publish is disabled', 'SLOW'));
    expect(await answer('fast.x', `${inbox()}.b1.10.maybe.1.0.$FI`)).toEqual(err(400, 10206, 'batch publish pattern is invalid', 'FAST'));
    expect(await answer('fast.x', `${inbox()}.b1.10.fail.2.0.$FI`)).toEqual(err(400, 10206, 'batch publish pattern is invalid', 'FAST'));
    expect(await answer('fast.x', `${inbox()}.${'i'.repeat(65)}.10.fail.1.0.$FI`)).toEqual(err(400, 10207, 'batch publish ID is invalid', 'FAST'));
    expect(await answer('fast.x', `${inbox()}.nobatch.10.fail.5.1.$FI`)).toEqual(err(400, 10208, 'batch publish ID unknown', 'FAST'));
  });

  it('a second batch in flight starts at one ack per message; the 1001st in flight on a stream is refused', async () => {
    const prefix = createInbox();
    const replies: Array<{ subject: string; body: Record<string, unknown> }> = [];
    const sub = nc.subscribe(`${prefix}.>`, { callback: (_e, m) => replies.push({ subject: m.subject, body: JSON.parse(dec.decode(m.data)) as Record<string, unknown> }) });
    for (let i = 0; i < 1000; i++) nc.publish('fast.many', 'x', { reply: `${prefix}.many${i}.50.fail.1.0.$FI` });
    await nc.flush();
    const starts = (): typeof replies => replies.filter((r) => r.body['seq'] === 0);
    await until(() => starts().length >= 1000, 30_000, '1000 start acks');
    expect(starts()[0]).toEqual({ subject: `${prefix}.many0.50.fail.1.0.$FI`, body: { type: 'ack', seq: 0, msgs: 50 } });
    expect(starts()[1]).toEqual({ subject: `${prefix}.many1.50.fail.1.0.$FI`, body: { type: 'ack', seq: 0, msgs: 1 } });
    // ... and so acks its stored first message at once (2.14's checkFlowControl with an interval of 1).
    await until(() => replies.some((r) => r.subject.startsWith(`${prefix}.many1.`) && r.body['seq'] === 1), 20_000, 'many1 flow ack');
    nc.publish('fast.many', 'x', { reply: `${prefix}.many1000.50.fail.1.0.$FI` });
    const refusal = await until(() => replies.find((r) => r.subject.startsWith(`${prefix}.many1000.`)), 20_000, 'the refusal');
    expect(refusal.body).toEqual({ error: { code: 429, err_code: 10211, description: 'batch publish too many inflight' }, stream: 'FAST', seq: 0 });
    sub.unsubscribe();
  });
});
