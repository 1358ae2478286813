// One table of publishes through both StreamWriters — the local one (a MemoryStore on this node) and the
// replicated one (three StreamReplicas in the stream-replica harness) — asserting the same PubAcks and errors
// and the same stored messages: the publish rules run once (stream/publish-rules.ts), on each writer's view.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { MemoryStore } from '@flotilla/store';
import { localStreamWriter } from '../src/local/local-stream-writer.js';
import type { BusHandler, MessageBus } from '../src/message-bus.js';
import { Stream, storeLimitsOf, type StreamHost } from '../src/stream/stream.js';
import type { StreamConfig } from '../src/stream/stream-config-types.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { ReplicaCluster, waitFor } from './stream-replica-harness.js';

interface Pub {
  subject?: string;
  data?: string;
  headers?: Array<[string, string]>;
  /** A header block of this many bytes (one long header), for the 64 KiB bound. */
  headerBytes?: number;
  /** Publish without a reply subject. */
  noReply?: boolean;
}

interface Case {
  name: string;
  config: object;
  /** Each batch is delivered in one tick (so the replicated writer sees its own proposals in flight). */
  batches: Pub[][];
  /** Seal the stream before this batch index. */
  sealBefore?: number;
  storageExceeded?: boolean;
  noInterest?: boolean;
  /** Per publish, in order: `ack N`, `dup N`, `err <err_code> <description>` or `none`. */
  replies: string[];
  /** Stored sequences and their data, and the stream's last sequence, afterwards. */
  stored: Array<[number, string]>;
  lastSeq: number;
}

const id = (v: string): [string, string] => ['Nats-Msg-Id', v];

const CASES: Case[] = [
  { name: 'plain publishes', config: { name: 'S' }, batches: [[{}, {}, {}]], replies: ['ack 1', 'ack 2', 'ack 3'], stored: [[1, 'm0'], [2, 'm1'], [3, 'm2']], lastSeq: 3 },
  {
    name: 'Nats-Msg-Id within one tick and after',
    config: { name: 'S' },
    batches: [[{ headers: [id('a')] }, { headers: [id('a')] }, { headers: [id('b')] }], [{ headers: [id('a')] }]],
    replies: ['ack 1', 'dup 1', 'ack 2', 'dup 1'],
    stored: [[1, 'm0'], [2, 'm2']],
    lastSeq: 2,
  },
  {
    name: 'expected last sequence counts messages in flight',
    config: { name: 'S' },
    batches: [[{}, { headers: [['Nats-Expected-Last-Sequence', '1']] }, { headers: [['Nats-Expected-Last-Sequence', '1']] }]],
    replies: ['ack 1', 'ack 2', 'err 10071 wrong last sequence: 2'],
    stored: [[1, 'm0'], [2, 'm1']],
    lastSeq: 2,
  },
  {
    name: 'expected last subject sequence',
    config: { name: 'S', subjects: ['s.>'] },
    batches: [[{ subject: 's.a' }, { subject: 's.b' }, { subject: 's.a', headers: [['Nats-Expected-Last-Subject-Sequence', '1']] }, { subject: 's.a', headers: [['Nats-Expected-Last-Subject-Sequence', '1']] }]],
    replies: ['ack 1', 'ack 2', 'ack 3', 'err 10071 wrong last sequence: 3'],
    stored: [[1, 'm0'], [2, 'm1'], [3, 'm2']],
    lastSeq: 3,
  },
  {
    name: 'expected last msg id',
    config: { name: 'S' },
    batches: [[{ headers: [id('x')] }, { headers: [['Nats-Expected-Last-Msg-Id', 'x']] }, { headers: [['Nats-Expected-Last-Msg-Id', 'x']] }]],
    replies: ['ack 1', 'ack 2', 'err 10070 wrong last msg ID: '],
    stored: [[1, 'm0'], [2, 'm1']],
    lastSeq: 2,
  },
  {
    name: 'expected stream',
    config: { name: 'S' },
    batches: [[{ headers: [['Nats-Expected-Stream', 'OTHER']] }, { headers: [['Nats-Expected-Stream', 'S']] }]],
    replies: ['err 10060 expected stream does not match', 'ack 1'],
    stored: [[1, 'm1']],
    lastSeq: 1,
  },
  {
    name: 'rollup sub keeps the newest of the subject; an unknown value is dropped silently',
    config: { name: 'S', subjects: ['s.>'], allow_rollup_hdrs: true },
    batches: [[{ subject: 's.a' }, { subject: 's.b' }, { subject: 's.a', headers: [['Nats-Rollup', 'sub']] }, { subject: 's.a', headers: [['Nats-Rollup', 'bogus']] }]],
    replies: ['ack 1', 'ack 2', 'ack 3', 'none'],
    stored: [[2, 'm1'], [3, 'm2']],
    lastSeq: 3,
  },
  {
    name: 'rollup all purges the stream',
    config: { name: 'S', subjects: ['s.>'], allow_rollup_hdrs: true },
    batches: [[{ subject: 's.a' }, { subject: 's.b' }, { subject: 's.c', headers: [['Nats-Rollup', 'all']] }]],
    replies: ['ack 1', 'ack 2', 'ack 3'],
    stored: [[3, 'm2']],
    lastSeq: 3,
  },
  {
    name: 'rollup without allow_rollup_hdrs',
    config: { name: 'S' },
    batches: [[{ headers: [['Nats-Rollup', 'all']] }]],
    replies: ['err 10111 rollup not permitted'],
    stored: [],
    lastSeq: 0,
  },
  {
    name: 'sealed',
    config: { name: 'S' },
    batches: [[{}], [{}, { headers: [id('a')] }]],
    sealBefore: 1,
    replies: ['ack 1', 'err 10109 invalid operation on sealed stream', 'err 10109 invalid operation on sealed stream'],
    stored: [[1, 'm0']],
    lastSeq: 1,
  },
  {
    name: 'max_msg_size, after the header checks (a duplicate still answers as one)',
    config: { name: 'S', max_msg_size: 64 },
    batches: [[{ data: 'a'.repeat(64) }, { data: 'b'.repeat(65) }], [{ data: 'x', headers: [id('big')] }, { data: 'x'.repeat(100), headers: [id('big')] }, { data: 'y'.repeat(100), headers: [id('new')] }]],
    replies: ['ack 1', 'err 10054 message size exceeds maximum allowed', 'ack 2', 'dup 2', 'err 10054 message size exceeds maximum allowed'],
    stored: [[1, 'a'.repeat(64)], [2, 'x']],
    lastSeq: 2,
  },
  {
    name: 'headers above 64 KiB',
    config: { name: 'S' },
    batches: [[{ headerBytes: 70_000 }, {}]],
    replies: ['err 10097 header size exceeds maximum allowed of 64k', 'ack 1'],
    stored: [[1, 'm1']],
    lastSeq: 1,
  },
  {
    name: 'discard new max_msgs refuses without using up a sequence',
    config: { name: 'S', max_msgs: 2, discard: 'new' },
    batches: [[{}, {}, {}, {}]],
    replies: ['ack 1', 'ack 2', 'err 10077 maximum messages exceeded', 'err 10077 maximum messages exceeded'],
    stored: [[1, 'm0'], [2, 'm1']],
    lastSeq: 2,
  },
  {
    name: 'discard new per subject',
    config: { name: 'S', subjects: ['s.>'], max_msgs_per_subject: 1, discard: 'new', discard_new_per_subject: true },
    batches: [[{ subject: 's.a' }, { subject: 's.a' }, { subject: 's.b' }]],
    replies: ['ack 1', 'err 10077 maximum messages per subject exceeded', 'ack 2'],
    stored: [[1, 'm0'], [2, 'm2']],
    lastSeq: 2,
  },
  {
    name: 'server storage exceeded',
    config: { name: 'S' },
    storageExceeded: true,
    batches: [[{}, { headers: [id('a')] }]],
    replies: ['err 10023 insufficient resources', 'err 10023 insufficient resources'],
    stored: [],
    lastSeq: 0,
  },
  {
    name: 'interest retention without interest: the sequence is used, nothing stored, the id remembered',
    config: { name: 'S', retention: 'interest' },
    noInterest: true,
    batches: [[{}, { headers: [id('a')] }], [{ headers: [id('a')] }]],
    replies: ['ack 1', 'ack 2', 'dup 2'],
    stored: [],
    lastSeq: 2,
  },
  {
    name: 'Nats-TTL: stored on an allow_msg_ttl stream, 10165 for an invalid value',
    config: { name: 'S', allow_msg_ttl: true },
    batches: [[{ headers: [['Nats-TTL', '1h']] }, { headers: [['Nats-TTL', 'soon']] }, { headers: [['Nats-TTL', '500ms']] }, { headers: [['Nats-TTL', 'never']] }]],
    replies: ['ack 1', 'err 10165 invalid per-message TTL', 'err 10165 invalid per-message TTL', 'ack 2'],
    stored: [[1, 'm0'], [2, 'm3']],
    lastSeq: 2,
  },
  {
    name: 'Nats-TTL without allow_msg_ttl: 10166',
    config: { name: 'S' },
    batches: [[{ headers: [['Nats-TTL', '1h']] }, {}]],
    replies: ['err 10166 per-message TTL is disabled', 'ack 1'],
    stored: [[1, 'm1']],
    lastSeq: 1,
  },
  {
    name: 'no_ack stores silently',
    config: { name: 'S', no_ack: true },
    batches: [[{}, { headers: [id('a')] }, { headers: [id('a')] }]],
    replies: ['none', 'none', 'none'],
    stored: [[1, 'm0'], [2, 'm1']],
    lastSeq: 2,
  },
];

/** One writer under test: publishes, seals, and reads back what it stored. */
interface Subject {
  replies: Map<string, string>;
  publish(subject: string, header: Buffer | null, data: Buffer, reply: string | null): void;
  seal(): Promise<void>;
  stored(): Promise<Array<[number, string]>>;
  lastSeq(): number;
  close(): Promise<void>;
}

function replyText(body: Buffer): string {
  const r = JSON.parse(body.toString()) as { seq: number; duplicate?: boolean; error?: { err_code: number; description: string } };
  if (r.error !== undefined) return `err ${r.error.err_code} ${r.error.description}`;
  return `${r.duplicate === true ? 'dup' : 'ack'} ${r.seq}`;
}

async function storedOf(stream: Stream): Promise<Array<[number, string]>> {
  const st = stream.store.state();
  if (st.messages === 0) return [];
  const msgs = await stream.store.readRange(st.first_seq, st.last_seq - st.first_seq + 1);
  return msgs.map((m) => [m.seq, Buffer.from(m.data).toString()]);
}

function configOf(c: Case): StreamConfig {
  return normaliseStreamConfig(parseStreamConfigRequest({ storage: 'memory', ...c.config }));
}

async function localSubject(c: Case): Promise<Subject> {
  const replies = new Map<string, string>();
  const subs = new Map<string, BusHandler>();
  const bus: MessageBus = {
    subscribe: (subject, handler) => (subs.set(subject, handler), () => subs.delete(subject)),
    publish: (subject, _reply, _header, data) => void replies.set(subject, replyText(Buffer.from(data))),
    hasInterest: () => true,
  };
  const cfg = configOf(c);
  const host: StreamHost = {
    bus,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    domain: undefined,
    streamPurged: () => undefined,
    storageExceeded: () => c.storageExceeded === true,
    hasConsumerInterest: () => c.noInterest !== true,
  };
  const stream = new Stream(host, cfg, '2026-01-01T00:00:00Z', '/nonexistent', new MemoryStore({ limits: storeLimitsOf(cfg) }), localStreamWriter(host));
  await stream.start();
  return {
    replies,
    // Through the subscription, as a client's publish arrives.
    publish: (subject, header, data, reply) => [...subs.values()][0]!({ subject, header, data, reply }),
    seal: () => stream.updateConfig({ ...stream.config, sealed: true }),
    stored: () => storedOf(stream),
    lastSeq: () => stream.lastSeq(),
    close: async () => stream.stop(),
  };
}

async function replicatedSubject(c: Case): Promise<Subject> {
  const cluster = await ReplicaCluster.start({ storage: 'memory', ...c.config });
  cluster.hostHooks.storageExceeded = () => c.storageExceeded === true;
  cluster.hostHooks.hasConsumerInterest = () => c.noInterest !== true;
  const leader = await cluster.waitForLeader();
  const replies = new Map<string, string>();
  cluster.bus.onReply = (subject) => replies.set(subject, replyText(Buffer.from(JSON.stringify(cluster.bus.replies.get(subject)))));
  return {
    replies,
    publish: (subject, header, data, reply) => cluster.bus.deliver({ subject, header, data, reply }),
    seal: async () => {
      cluster.assignment = { ...cluster.assignment, config: { ...cluster.assignment.config, sealed: true } };
      for (const r of cluster.live()) await r.update(cluster.assignment);
    },
    stored: async () => {
      await cluster.waitConverged();
      return storedOf(leader.stream);
    },
    lastSeq: () => leader.stream.lastSeq(),
    close: () => cluster.close(),
  };
}

/** Runs a case's batches; returns the replies in publish order (`none` where none came). */
async function run(c: Case, s: Subject, prefix: string): Promise<string[]> {
  const cfg = configOf(c);
  const subjectOf = (p: Pub): string => p.subject ?? cfg.subjects[0]!;
  const order: string[] = [];
  let n = 0;
  for (let b = 0; b < c.batches.length; b++) {
    if (c.sealBefore === b) await s.seal();
    const batch: string[] = [];
    for (const p of c.batches[b]!) {
      const reply = `${prefix}.${n}`;
      const entries: Array<[string, string]> = [...(p.headers ?? [])];
      if (p.headerBytes !== undefined) entries.push(['X-Pad', 'p'.repeat(p.headerBytes)]);
      const header = entries.length > 0 ? Buffer.from(encodeHeaders({ entries })) : null;
      s.publish(subjectOf(p), header, Buffer.from(p.data ?? `m${n}`), p.noReply === true ? null : reply);
      batch.push(reply);
      n++;
    }
    const expected = c.replies.slice(order.length, order.length + batch.length).filter((r) => r !== 'none').length;
    await waitFor(() => batch.filter((r) => s.replies.has(r)).length >= expected, 5000, `${expected} replies`);
    // Room for a reply that should not come.
    await new Promise((r) => setTimeout(r, 30));
    order.push(...batch);
  }
  return order.map((r) => s.replies.get(r) ?? 'none');
}

describe('StreamWriter parity: the same publishes give the same answers locally and replicated', () => {
  const open: Subject[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const local = await localSubject(c);
      open.push(local);
      const replicated = await replicatedSubject(c);
      open.push(replicated);
      const localReplies = await run(c, local, '_R.L');
      const replicatedReplies = await run(c, replicated, '_R.C');
      expect(localReplies).toEqual(c.replies);
      expect(replicatedReplies).toEqual(c.replies);
      expect(await local.stored()).toEqual(c.stored);
      expect(await replicated.stored()).toEqual(c.stored);
      expect(local.lastSeq()).toBe(c.lastSeq);
      expect(replicated.lastSeq()).toBe(c.lastSeq);
    });
  }
});
