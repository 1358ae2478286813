// The Batch codec over cluster.proto, and Raft messages through it field for field.
import { describe, it, expect } from 'vitest';
import { emptyMessage, type Message } from '@flotilla/raft';
import {
  decodeBatch,
  decodeBatchReference,
  encodeBatch,
  encodeBatchReference,
  raftFromWire,
  raftToWire,
  toNumber,
  type Frame,
} from '@flotilla/cluster';

describe('Batch codec', () => {
  it('round-trips every frame kind in one batch, in order', () => {
    const frames: Frame[] = [
      {
        hello: {
          clusterName: 'c',
          serverName: 'n1',
          serverId: 'ID1',
          clientUrl: '127.0.0.1:4222',
          clusterUrl: '127.0.0.1:6222',
          raftNodeId: 77,
          version: 1,
          nonce: new Uint8Array([1, 2, 3, 255]),
          auth: true,
        },
      },
      { interest: { full: true, entries: [{ subject: 'a.*', queue: '', count: 2, clients: 1 }, { subject: 'b', queue: 'q', count: 1, clients: 0 }] } },
      { msg: { subject: 'a.b', reply: '_INBOX.x', message: Buffer.from('hdrbody'), headerBytes: 3, queues: ['q1', 'q2'], route: '' } },
      { msg: { subject: 'empty', reply: '', message: new Uint8Array(0), headerBytes: -1, queues: [], route: '' } },
      { peers: { peers: [{ serverId: 'ID2', serverName: 'n2', clusterUrl: 'h:1', clientUrl: 'h:2' }] } },
      { refuse: { code: 'duplicate', reason: 'already linked' } },
      { ping: { sentMs: 1_795_000_000_123 } },
      { auth: { proof: new Uint8Array([9, 8, 7]) } },
    ];
    const decoded = decodeBatch(encodeBatch(frames));
    expect(decoded).toHaveLength(frames.length);
    const hello = decoded[0] as { hello: { nonce: Uint8Array } };
    expect(Buffer.from(hello.hello.nonce)).toEqual(Buffer.from([1, 2, 3, 255]));
    expect({ hello: { ...hello.hello, nonce: new Uint8Array(hello.hello.nonce) } }).toEqual(frames[0]);
    expect(decoded[1]).toEqual(frames[1]);
    const msg = decoded[2] as { msg: { message: Uint8Array } & Record<string, unknown> };
    expect(Buffer.from(msg.msg.message).toString()).toBe('hdrbody');
    expect(msg.msg).toMatchObject({ subject: 'a.b', reply: '_INBOX.x', headerBytes: 3, queues: ['q1', 'q2'], route: '' });
    const empty = decoded[3] as { msg: { message: Uint8Array; headerBytes: number; reply: string } };
    expect(empty.msg.message).toBeInstanceOf(Uint8Array);
    expect(empty.msg.message.length).toBe(0);
    expect(empty.msg.headerBytes).toBe(-1);
    expect(empty.msg.reply).toBe('');
    expect(decoded[4]).toEqual(frames[4]);
    expect(decoded[5]).toEqual(frames[5]);
    expect(decoded[6]).toEqual({ ping: { sentMs: 1_795_000_000_123 } });
    expect(Buffer.from((decoded[7] as { auth: { proof: Uint8Array } }).auth.proof)).toEqual(Buffer.from([9, 8, 7]));
  });

  it('encodes 1,000 routed messages in one buffer with about 20 bytes of framing each', () => {
    const one: Frame = { msg: { subject: 'bench.x', reply: '', message: Buffer.alloc(128, 7), headerBytes: -1, queues: [], route: '' } };
    const frames = Array.from({ length: 1000 }, () => one);
    const bytes = encodeBatch(frames);
    expect(bytes.length).toBeLessThanOrEqual(1000 * (128 + 20));
    expect(bytes.length).toBeGreaterThan(1000 * 128);
    expect(decodeBatch(bytes)).toHaveLength(1000);
  });

  it('writes exactly the bytes protobufjs writes for cluster.proto, and reads what it writes', () => {
    const frames: Frame[] = [
      { msg: { subject: 'ü.subject', reply: '_INBOX.é', message: Buffer.from('hdr\r\n\r\nbody'), headerBytes: 7, queues: ['q1', 'q-ä'], route: '' } },
      { ping: { sentMs: 5 } },
      { msg: { subject: 's', reply: '', message: Buffer.alloc(300, 1), headerBytes: -1, queues: [], route: '' } },
      { msg: { subject: 's', reply: '', message: new Uint8Array(0), headerBytes: 0, queues: [], route: '' } },
      { interest: { full: false, entries: [{ subject: 's', queue: '', count: 0, clients: 0 }] } },
      { msg: { subject: 'big', reply: '', message: Buffer.alloc(70_000, 2), headerBytes: -123456, queues: [], route: '' } },
      { msg: { subject: 'orders.new', reply: '$JS.ACK.x', message: Buffer.from('m'), headerBytes: -1, queues: [], route: '_INBOX.pull.1' } },
    ];
    const ours = encodeBatch(frames);
    const reference = encodeBatchReference(frames);
    expect(ours.equals(reference)).toBe(true);
    const norm = (fs: Frame[]) =>
      fs.map((f) => ('msg' in f ? { msg: { ...f.msg, message: Buffer.from(f.msg.message).toString('hex') } } : f));
    expect(norm(decodeBatch(reference))).toEqual(norm(decodeBatchReference(ours)));
    expect(norm(decodeBatch(ours))).toEqual(norm(frames));
  });

  it('decodes runs of repeated and alternating subjects correctly', () => {
    const subjects = ['a.b', 'a.b', 'a.c', 'a.b', 'x', 'x', 'ü', 'a.b', 'a.bb', 'a.b'];
    const frames: Frame[] = subjects.map((subject) => ({ msg: { subject, reply: '', message: Buffer.from(subject), headerBytes: -1, queues: [], route: '' } }));
    const back = decodeBatch(encodeBatch(frames)).map((f) => (f as { msg: { subject: string } }).msg.subject);
    expect(back).toEqual(subjects);
    expect(decodeBatch(encodeBatch(frames)).map((f) => (f as { msg: { subject: string } }).msg.subject)).toEqual(subjects);
  });

  it('rejects a truncated batch instead of returning half a message', () => {
    const bytes = encodeBatch([{ msg: { subject: 'a', reply: '', message: Buffer.alloc(50), headerBytes: -1, queues: [], route: '' } }]);
    expect(() => decodeBatch(bytes.subarray(0, bytes.length - 10))).toThrow(RangeError);
  });

  it('reads 64-bit numbers as plain numbers', () => {
    expect(toNumber(5)).toBe(5);
    expect(toNumber({ low: 1, high: 1 })).toBe(4294967297);
    expect(toNumber({ low: -1, high: 0 })).toBe(4294967295);
    expect(toNumber(undefined)).toBe(0);
  });
});

describe('Raft messages on the wire', () => {
  it('round-trips an append with entries, and a snapshot chunk with its metadata', () => {
    const append: Message = {
      ...emptyMessage('stream-ORDERS', 'append', 3, 9, 12),
      logTerm: 11,
      index: 2 ** 40,
      commit: 2 ** 40 - 5,
      entries: [
        { index: 2 ** 40 + 1, term: 12, type: 0, data: new Uint8Array([9, 8, 7]) },
        { index: 2 ** 40 + 2, term: 12, type: 1, data: new Uint8Array(0) },
      ],
    };
    const snap: Message = {
      ...emptyMessage('meta', 'snapshotChunk', 1, 2, 4),
      snapshotMeta: { index: 100, term: 3, config: { voters: [1, 2, 3], learners: [4] } },
      offset: 65536,
      data: new Uint8Array([1, 2]),
      done: true,
    };
    const resp: Message = { ...emptyMessage('g', 'appendResp', 9, 3, 12), reject: true, hintIndex: 7, hintTerm: 5, index: 8 };
    const vote: Message = { ...emptyMessage('g', 'vote', 2, 1, 6), force: true };
    const hb: Message = { ...emptyMessage('g', 'heartbeatResp', 2, 1, 6), context: 1234 };
    const frames: Frame[] = [append, snap, resp, vote, hb].map((m) => ({ raft: raftToWire(m) }));
    const back = decodeBatch(encodeBatch(frames)).map((f) => raftFromWire((f as { raft: Parameters<typeof raftFromWire>[0] }).raft)!);
    const norm = (m: Message) => ({
      ...m,
      data: Array.from(m.data),
      entries: m.entries.map((e) => ({ ...e, data: Array.from(e.data) })),
    });
    expect(back.map(norm)).toEqual([append, snap, resp, vote, hb].map(norm));
  });

  it('covers every message type, and drops an unknown one', () => {
    const types = ['preVote', 'preVoteResp', 'vote', 'voteResp', 'append', 'appendResp', 'heartbeat', 'heartbeatResp', 'snapshotChunk', 'snapshotChunkResp', 'timeoutNow'] as const;
    for (const t of types) expect(raftFromWire(raftToWire(emptyMessage('g', t, 1, 2, 3)))!.type).toBe(t);
    expect(raftFromWire({ ...raftToWire(emptyMessage('g', 'vote', 1, 2, 3)), type: 99 })).toBeNull();
  });
});
