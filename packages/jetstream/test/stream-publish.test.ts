import { describe, it, expect } from 'vitest';
import { encodeHeaders } from '@flotilla/protocol';
import { MemoryStore } from '@flotilla/store';
import { checkPublish, readPublishHeaders, type PublishView } from '../src/stream/publish-checks.js';
import { Stream, storeLimitsOf, type StreamHost } from '../src/stream/stream.js';
import { localStreamWriter } from '../src/local/local-stream-writer.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { FakeBus } from './support/fake-bus.js';
import { DedupeWindow } from '../src/stream/dedupe-window.js';

function view(over: Partial<PublishView> = {}): PublishView {
  return {
    name: 'S',
    sealed: false,
    allowRollup: false,
    denyPurge: false,
    lastSeq: () => 10,
    lastSeqForSubject: (s) => (s === 'a' ? 7 : 0),
    lastMsgId: () => 'prev',
    duplicateOf: (id) => (id === 'seen' ? 4 : undefined),
    ...over,
  };
}

const hdr = (entries: Array<[string, string]>) => readPublishHeaders(encodeHeaders({ entries }));

describe('publish checks', () => {
  it.each([
    ['no headers', null, { kind: 'store', msgId: undefined, rollup: undefined }],
    ['expected stream ok', [['Nats-Expected-Stream', 'S']], { kind: 'store' }],
    ['expected stream wrong', [['Nats-Expected-Stream', 'T']], { kind: 'reject', error: { errCode: 10060 } }],
    ['new msg id', [['Nats-Msg-Id', 'new']], { kind: 'store', msgId: 'new' }],
    ['duplicate msg id', [['Nats-Msg-Id', 'seen']], { kind: 'duplicate', seq: 4, msgId: 'seen' }],
    ['last seq ok', [['Nats-Expected-Last-Sequence', '10']], { kind: 'store' }],
    ['last seq wrong', [['Nats-Expected-Last-Sequence', '9']], { kind: 'reject', error: { errCode: 10071, description: 'wrong last sequence: 10' } }],
    ['last subject seq ok', [['Nats-Expected-Last-Subject-Sequence', '7']], { kind: 'store' }],
    ['last subject seq none', [['Nats-Expected-Last-Subject-Sequence', '0']], { kind: 'reject', error: { description: 'wrong last sequence: 7' } }],
    ['last msg id ok', [['Nats-Expected-Last-Msg-Id', 'prev']], { kind: 'store' }],
    ['last msg id wrong', [['Nats-Expected-Last-Msg-Id', 'x']], { kind: 'reject', error: { errCode: 10070, description: 'wrong last msg ID: prev' } }],
    ['rollup not allowed', [['Nats-Rollup', 'sub']], { kind: 'reject', error: { code: 500, errCode: 10111 } }],
    ['unknown rollup dropped', [['Nats-Rollup', 'bogus']], { kind: 'drop' }],
    ['stream check comes before dedupe', [['Nats-Expected-Stream', 'T'], ['Nats-Msg-Id', 'seen']], { kind: 'reject', error: { errCode: 10060 } }],
    ['dedupe comes before sequence checks', [['Nats-Msg-Id', 'seen'], ['Nats-Expected-Last-Sequence', '1']], { kind: 'duplicate', seq: 4, msgId: 'seen' }],
  ] as const)('%s', (_name, entries, expected) => {
    const headers = entries === null ? null : hdr(entries as unknown as Array<[string, string]>);
    expect(checkPublish(headers, 'a', view())).toMatchObject(expected);
  });

  it('rollup when allowed; refused with deny_purge; sealed refuses all', () => {
    expect(checkPublish(hdr([['Nats-Rollup', 'all']]), 'a', view({ allowRollup: true }))).toEqual({ kind: 'store', msgId: undefined, rollup: 'all' });
    expect(checkPublish(hdr([['Nats-Rollup', 'sub']]), 'a', view({ allowRollup: true, denyPurge: true }))).toMatchObject({ kind: 'reject' });
    expect(checkPublish(null, 'a', view({ sealed: true }))).toMatchObject({ kind: 'reject', error: { errCode: 10109 } });
  });

  it('header keys are exact-case', () => {
    expect(hdr([['nats-msg-id', 'x']])).toEqual({});
  });
});

describe('dedupe window', () => {
  it('expires ids older than the window', () => {
    const w = new DedupeWindow(1000);
    w.add('a', 1, 0);
    w.add('b', 2, 600);
    expect(w.find('a', 900)).toBe(1);
    expect(w.find('a', 1100)).toBeUndefined();
    expect(w.find('b', 1100)).toBe(2);
    expect(w.size).toBe(1);
  });
});

async function makeStream(body: object, domain?: string): Promise<{ bus: FakeBus; stream: Stream; purged: number[] }> {
  const bus = new FakeBus();
  const purged: number[] = [];
  const cfg = normaliseStreamConfig(parseStreamConfigRequest(body));
  const host: StreamHost = {
    bus,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    domain,
    streamPurged: () => purged.push(1),
    storageExceeded: () => false,
    hasConsumerInterest: () => true,
  };
  const stream = new Stream(host, cfg, '2026-01-01T00:00:00Z', '/nonexistent', new MemoryStore({ limits: storeLimitsOf(cfg) }), localStreamWriter(host));
  await stream.start();
  return { bus, stream, purged };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('Stream', () => {
  it('acks in sequence order and notifies onStored after each append', async () => {
    const { bus, stream } = await makeStream({ name: 'S', subjects: ['s.>'] });
    const stored: number[] = [];
    stream.onStored((seq) => stored.push(seq));
    for (let i = 0; i < 5; i++) bus.deliver('s.x', `m${i}`, `r${i}`);
    await settle();
    expect(bus.publishedText().map((s) => s.data)).toEqual([1, 2, 3, 4, 5].map((n) => `{"stream":"S", "seq":${n}}`));
    expect(bus.publishedText().map((s) => s.subject)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(stored).toEqual([1, 2, 3, 4, 5]);
  });

  it('adds the domain to PubAcks', async () => {
    const { bus } = await makeStream({ name: 'S' }, 'hub');
    bus.deliver('S', 'x', 'r');
    await settle();
    expect(bus.publishedText()[0]!.data).toBe('{"stream":"S", "domain":"hub", "seq":1}');
  });

  it('de-duplicates within one tick and answers the duplicate with the original sequence', async () => {
    const { bus, stream } = await makeStream({ name: 'S' });
    const h = encodeHeaders({ entries: [['Nats-Msg-Id', 'one']] });
    bus.deliver('S', 'a', 'r1', h);
    bus.deliver('S', 'a', 'r2', h);
    await settle();
    expect(bus.publishedText().map((s) => s.data).sort()).toEqual(['{"stream":"S", "seq":1,"duplicate": true}', '{"stream":"S", "seq":1}']);
    expect(stream.store.state().messages).toBe(1);
    expect(stream.lastMsgId()).toBe('one');
  });

  it('replies with the store error on discard new and with nothing on no_ack', async () => {
    const { bus } = await makeStream({ name: 'S', max_msgs: 1, discard: 'new' });
    bus.deliver('S', 'a', 'r1');
    bus.deliver('S', 'b', 'r2');
    await settle();
    expect(bus.publishedText().find((m) => m.subject === 'r2')!.data).toBe('{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"S","seq":0}');
    const quiet = await makeStream({ name: 'Q', no_ack: true });
    quiet.bus.deliver('Q', 'a', 'r');
    await settle();
    expect(quiet.bus.publishedText()).toEqual([]);
    expect(quiet.stream.store.state().messages).toBe(1);
  });

  it('rollup sub keeps only the newest message of the subject and tells the host', async () => {
    const { bus, stream, purged } = await makeStream({ name: 'S', subjects: ['s.>'], allow_rollup_hdrs: true });
    bus.deliver('s.a', '1', null);
    bus.deliver('s.b', '2', null);
    bus.deliver('s.a', '3', 'r', encodeHeaders({ entries: [['Nats-Rollup', 'sub']] }));
    await settle();
    expect(bus.publishedText().at(-1)!.data).toBe('{"stream":"S", "seq":3}');
    expect([...stream.store.subjectCounts().entries()].sort()).toEqual([['s.a', 1], ['s.b', 1]]);
    expect(purged.length).toBe(1);
  });

  it('keeps acks and onStored in sequence order across plain, id-carrying and rollup messages', async () => {
    const { bus, stream } = await makeStream({ name: 'S', subjects: ['s.>'], allow_rollup_hdrs: true });
    const stored: number[] = [];
    stream.onStored((seq) => stored.push(seq));
    bus.deliver('s.a', '1', 'r1');
    bus.deliver('s.a', '2', 'r2', encodeHeaders({ entries: [['Nats-Rollup', 'sub']] }));
    bus.deliver('s.b', '3', 'r3', encodeHeaders({ entries: [['Nats-Msg-Id', 'x']] }));
    bus.deliver('s.c', '4', 'r4');
    await settle();
    expect(bus.publishedText().map((m) => m.subject)).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(stored).toEqual([1, 2, 3, 4]);
  });

  it('apply(purge) and apply(delete) change the store and tell the host', async () => {
    const { bus, stream, purged } = await makeStream({ name: 'S' });
    for (let i = 0; i < 4; i++) bus.deliver('S', String(i), null);
    await settle();
    expect(await stream.apply({ op: 'delete', seq: 2, erase: true })).toBe(true);
    expect(await stream.apply({ op: 'purge', keep: 1 })).toBe(2);
    expect(stream.store.state()).toMatchObject({ messages: 1, first_seq: 4 });
    expect(purged.length).toBe(2);
  });

  it('unsubscribes on stop and resubscribes changed subjects on update', async () => {
    const { bus, stream } = await makeStream({ name: 'S', subjects: ['a'] });
    await stream.updateConfig(normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', subjects: ['b'] })));
    expect(bus.subjects()).toEqual(['b']);
    stream.stop();
    expect(bus.subjects().length).toBe(0);
  });
});
