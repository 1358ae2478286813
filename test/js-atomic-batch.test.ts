// Atomic batch publish (ADR-50) on one node: the stock @nats-io/jetstream v3 `startBatch` / `add` / `commit`
// calls, and raw publishes with the batch headers (through the stock client's request) for the errors. Every
// expected value is nats-server 2.14.5's: processJetStreamAtomicBatchMsg (stream.go), the batch checks of
// checkMsgHeadersPreClusteredProposal (jetstream_batching.go) and errors.json (10174–10201, 10210).
// nats-server 2.9.10 predates atomic batches (2.12), so this runs against Flotilla only.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

const storeDir = mkdtempSync(join(tmpdir(), 'flotilla-atomic-'));
let server: FlotillaProcess;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const dec = new TextDecoder();

async function start(): Promise<void> {
  server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
  nc = await connect({ servers: server.url, reconnect: false });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
}

beforeAll(async () => {
  await start();
  await jsm.streams.add({ name: 'ATOM', subjects: ['atom.>'], allow_atomic: true });
  await jsm.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
});
afterAll(async () => {
  await nc.close().catch(() => undefined);
  expect(await server.stop()).toBe(0);
  rmSync(storeDir, { recursive: true, force: true });
});

/** A raw batch message: the reply's body (empty for a staged message, else the PubAck JSON). */
async function raw(subject: string, id: string, seq: number | undefined, extra: Record<string, string> = {}, body = 'x'): Promise<string> {
  const h = headers();
  h.set('Nats-Batch-Id', id);
  if (seq !== undefined) h.set('Nats-Batch-Sequence', String(seq));
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  const r = await nc.request(subject, body, { headers: h, timeout: 10_000 });
  return dec.decode(r.data);
}

const errOf = (reply: string): { code: number; err_code: number; description: string } => (JSON.parse(reply) as { error: never }).error;

describe('atomic batch publish (one node)', () => {
  it('allow_atomic is kept in the config; mirrors may not use it', async () => {
    expect((await jsm.streams.info('ATOM')).config.allow_atomic).toBe(true);
    expect((await jsm.streams.info('PLAIN')).config.allow_atomic).toBeUndefined();
    const failure = await jsm.streams.add({ name: 'MIR', mirror: { name: 'ATOM' }, allow_atomic: true }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JetStreamApiError);
    expect((failure as JetStreamApiError).code).toBe(10198);
    expect((failure as JetStreamApiError).message).toBe('stream mirrors can not also use atomic publishing');
  });

  it('the stock client commits a batch of 100 whole: one ack with batch and count, nothing visible before', async () => {
    const before = (await jsm.streams.info('ATOM')).state.last_seq;
    const b = await js.startBatch('atom.a', 'm0');
    for (let i = 1; i < 99; i++) b.add(`atom.${i % 2 === 0 ? 'a' : 'b'}`, `m${i}`);
    await b.add('atom.b', 'm99-1', { ack: true });
    // Staged only: the stream holds none of them yet.
    expect((await jsm.streams.info('ATOM')).state.last_seq).toBe(before);
    const ack = await b.commit('atom.a', 'm-last');
    expect(ack).toMatchObject({ stream: 'ATOM', seq: before + 101, batch: b.id, count: 101 });
    const info = await jsm.streams.info('ATOM');
    expect(info.state.last_seq).toBe(before + 101);
    const first = await jsm.streams.getMessage('ATOM', { seq: before + 1 });
    expect(first.string()).toBe('m0');
    expect(first.header.get('Nats-Batch-Id')).toBe(b.id);
    const last = await jsm.streams.getMessage('ATOM', { seq: before + 101 });
    expect(last.string()).toBe('m-last');
    expect(last.header.get('Nats-Batch-Commit')).toBe('1');
  });

  it('a commit by eob stores the messages before it and marks the last with the commit header', async () => {
    const before = (await jsm.streams.info('ATOM')).state.last_seq;
    expect(await raw('atom.e', 'eob-1', 1)).toBe('');
    expect(await raw('atom.e', 'eob-1', 2)).toBe('');
    const ack = JSON.parse(await raw('atom.e', 'eob-1', 3, { 'Nats-Batch-Commit': 'eob' }, '')) as Record<string, unknown>;
    expect(ack).toEqual({ stream: 'ATOM', seq: before + 2, batch: 'eob-1', count: 2 });
    expect((await jsm.streams.getMessage('ATOM', { seq: before + 2 })).header.get('Nats-Batch-Commit')).toBe('1');
  });

  it('the batch errors, each abandoning the batch so nothing of it is stored', async () => {
    const before = (await jsm.streams.info('ATOM')).state.last_seq;
    expect(errOf(await raw('plain.x', 'p', 1))).toEqual({ code: 400, err_code: 10174, description: 'atomic publish is disabled' });
    expect(errOf(await raw('atom.x', 'n', undefined))).toEqual({ code: 400, err_code: 10175, description: 'atomic publish sequence is missing' });
    expect(errOf(await raw('atom.x', 'i'.repeat(65), 1))).toEqual({ code: 400, err_code: 10179, description: 'atomic publish batch ID is invalid' });
    expect(errOf(await raw('atom.x', 'unknown', 2))).toEqual({ code: 400, err_code: 10176, description: 'atomic publish batch is incomplete' });
    expect(errOf(await raw('atom.x', 'big', 1001))).toEqual({ code: 400, err_code: 10199, description: 'atomic publish batch is too large: 1000' });
    // A gap abandons the batch: its commit then finds no batch.
    expect(await raw('atom.x', 'gap', 1)).toBe('');
    expect(errOf(await raw('atom.x', 'gap', 3))).toMatchObject({ err_code: 10176 });
    expect(errOf(await raw('atom.x', 'gap', 2, { 'Nats-Batch-Commit': '1' }))).toMatchObject({ err_code: 10176 });
    // An unknown commit value.
    expect(await raw('atom.x', 'bad-commit', 1)).toBe('');
    expect(errOf(await raw('atom.x', 'bad-commit', 2, { 'Nats-Batch-Commit': 'yes' }))).toEqual({
      code: 400,
      err_code: 10200,
      description: 'atomic publish batch commit is invalid',
    });
    // Expected-last-msg-id is not supported inside a batch.
    expect(await raw('atom.x', 'lmi', 1, { 'Nats-Expected-Last-Msg-Id': 'a' })).toBe('');
    expect(errOf(await raw('atom.x', 'lmi', 2, { 'Nats-Batch-Commit': '1' }))).toEqual({
      code: 400,
      err_code: 10177,
      description: 'atomic publish unsupported header used: Nats-Expected-Last-Msg-Id',
    });
    // A duplicate Nats-Msg-Id inside the batch.
    expect(await raw('atom.x', 'dup', 1, { 'Nats-Msg-Id': 'same' })).toBe('');
    expect(errOf(await raw('atom.x', 'dup', 2, { 'Nats-Msg-Id': 'same', 'Nats-Batch-Commit': '1' }))).toEqual({
      code: 400,
      err_code: 10201,
      description: 'atomic publish batch contains duplicate message id',
    });
    // A required API level above the server's abandons the batch (Flotilla's level is below 1).
    expect(await raw('atom.x', 'lvl', 1)).toBe('');
    expect(errOf(await raw('atom.x', 'lvl', 2, { 'Nats-Required-Api-Level': '99' }))).toEqual({
      code: 412,
      err_code: 10185,
      description: 'JetStream minimum api level required',
    });
    expect(errOf(await raw('atom.x', 'lvl', 3, { 'Nats-Batch-Commit': '1' }))).toMatchObject({ err_code: 10176 });
    expect((await jsm.streams.info('ATOM')).state.last_seq).toBe(before);
  });

  it('persist_mode async may not be combined with atomic batches', async () => {
    const failure = await jsm.streams.add({ name: 'AA', subjects: ['aa'], allow_atomic: true, persist_mode: 'async' as never }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JetStreamApiError);
    expect((failure as JetStreamApiError).message).toBe('async persist mode is not supported with atomic batch publish');
  });

  it('expected-* checks are evaluated against the batch', async () => {
    const before = (await jsm.streams.info('ATOM')).state.last_seq;
    // The first message may expect the stream's last sequence; a later one may not expect any.
    expect(await raw('atom.exp', 'exp-1', 1, { 'Nats-Expected-Last-Sequence': String(before) })).toBe('');
    expect(errOf(await raw('atom.exp', 'exp-1', 2, { 'Nats-Expected-Last-Sequence': String(before + 1), 'Nats-Batch-Commit': '1' }))).toEqual({
      code: 400,
      err_code: 10164,
      description: 'wrong last sequence',
    });
    // A wrong expectation on the first message refuses the batch with the actual sequence.
    expect(await raw('atom.exp', 'exp-2', 1, { 'Nats-Expected-Last-Sequence': String(before + 5) })).toBe('');
    expect(errOf(await raw('atom.exp', 'exp-2', 2, { 'Nats-Batch-Commit': '1' }))).toEqual({
      code: 400,
      err_code: 10071,
      description: `wrong last sequence: ${before}`,
    });
    // A subject the batch already wrote cannot be expected on.
    expect(await raw('atom.exp', 'exp-3', 1)).toBe('');
    expect(errOf(await raw('atom.exp', 'exp-3', 2, { 'Nats-Expected-Last-Subject-Sequence': '0', 'Nats-Batch-Commit': '1' }))).toMatchObject({
      err_code: 10164,
    });
    expect((await jsm.streams.info('ATOM')).state.last_seq).toBe(before);
    // Right expectations commit.
    expect(await raw('atom.exp', 'exp-4', 1, { 'Nats-Expected-Last-Sequence': String(before) })).toBe('');
    const ack = JSON.parse(await raw('atom.exp2', 'exp-4', 2, { 'Nats-Expected-Last-Subject-Sequence': '0', 'Nats-Batch-Commit': '1' })) as {
      seq: number;
      count: number;
    };
    expect(ack).toMatchObject({ seq: before + 2, count: 2 });
  });

  it('at most 50 batches are staged per stream', async () => {
    for (let i = 0; i < 50; i++) expect(await raw('atom.many', `many-${i}`, 1)).toBe('');
    expect(errOf(await raw('atom.many', 'many-50', 1))).toEqual({ code: 429, err_code: 10210, description: 'atomic publish too many inflight' });
    // Committing one frees its place.
    expect(JSON.parse(await raw('atom.many', 'many-0', 2, { 'Nats-Batch-Commit': '1' }))).toMatchObject({ count: 2 });
    expect(await raw('atom.many', 'many-50', 1)).toBe('');
    for (let i = 1; i <= 50; i++) expect(errOf(await raw('atom.many', `many-${i}`, 2, { 'Nats-Batch-Commit': 'maybe' }))).toMatchObject({ err_code: 10200 });
  });
});
