import { describe, expect, it } from 'vitest';
import {
  EntryOp,
  decodeStreamEntry,
  encodeBatchEntry,
  encodeConsumerEntry,
  encodeDeleteEntry,
  encodeMsgEntry,
  encodePurgeEntry,
} from '../src/cluster/stream-entry-codec.js';
import { clusterBlockOf, peerIdOf } from '../src/cluster/stream-replica-cluster-info.js';
import { decodeReplicaSnapshot, encodeReplicaSnapshot } from '../src/cluster/stream-replica-snapshot.js';
import type { ReplicatedMsg } from '../src/stream/stream.js';

describe('stream entry codec', () => {
  it('round-trips a message entry with every optional part', () => {
    const msg: ReplicatedMsg = {
      seq: 2 ** 40 + 7,
      timestampNs: 1_795_000_000_123_456_789n,
      subject: 'orders.ü.new',
      header: Buffer.from('NATS/1.0\r\nNats-Msg-Id: a1\r\n\r\n'),
      data: Buffer.from('payload'),
      msgId: 'a1',
      rollup: 'sub',
      noInterest: false,
    };
    const e = decodeStreamEntry(encodeMsgEntry(msg));
    expect(e.op).toBe(EntryOp.Msg);
    if (e.op !== EntryOp.Msg) return;
    expect({ ...e.msg, header: e.msg.header?.toString(), data: e.msg.data.toString() }).toEqual({
      ...msg,
      header: msg.header!.toString(),
      data: 'payload',
    });
  });

  it('round-trips an atomic batch entry: its messages in order, a truncated one refused', () => {
    const msgs: ReplicatedMsg[] = [1, 2, 3].map((i) => ({
      seq: 10 + i,
      timestampNs: BigInt(1000 + i),
      subject: `b.${i}`,
      header: Buffer.from(`NATS/1.0\r\nNats-Batch-Id: x\r\nNats-Batch-Sequence: ${i}\r\n\r\n`),
      data: Buffer.from(`m${i}`),
      msgId: i === 2 ? 'id2' : undefined,
      rollup: undefined,
      noInterest: i === 3,
    }));
    const encoded = encodeBatchEntry(msgs.map((m) => encodeMsgEntry(m)));
    const e = decodeStreamEntry(encoded);
    expect(e.op).toBe(EntryOp.Batch);
    if (e.op !== EntryOp.Batch) return;
    expect(e.msgs.map((m) => ({ ...m, header: m.header?.toString(), data: m.data.toString() }))).toEqual(
      msgs.map((m) => ({ ...m, header: m.header!.toString(), data: m.data.toString() })),
    );
    expect(() => decodeStreamEntry(encoded.subarray(0, encoded.length - 3))).toThrow(RangeError);
  });

  it('round-trips a bare message (no header, id or rollup; interest skip) with an empty payload', () => {
    const msg: ReplicatedMsg = { seq: 1, timestampNs: 5n, subject: 's', header: null, data: Buffer.alloc(0), msgId: undefined, rollup: undefined, noInterest: true };
    const e = decodeStreamEntry(encodeMsgEntry(msg));
    expect(e).toEqual({ op: EntryOp.Msg, msg: { ...msg, data: Buffer.alloc(0) } });
  });

  it('round-trips purge, delete and consumer entries', () => {
    expect(decodeStreamEntry(encodePurgeEntry({ bound: 99 }))).toEqual({ op: EntryOp.Purge, purge: { bound: 99 } });
    expect(decodeStreamEntry(encodePurgeEntry({ bound: 5, filter: 'a.>', seq: 3 }))).toEqual({
      op: EntryOp.Purge,
      purge: { bound: 5, filter: 'a.>', seq: 3 },
    });
    expect(decodeStreamEntry(encodePurgeEntry({ bound: 5, keep: 2, filter: '' }))).toEqual({ op: EntryOp.Purge, purge: { bound: 5, keep: 2, filter: '' } });
    expect(decodeStreamEntry(encodeDeleteEntry(42, true))).toEqual({ op: EntryOp.Delete, seq: 42, erase: true });
    const c = decodeStreamEntry(encodeConsumerEntry(Buffer.from('state')));
    expect(c.op === EntryOp.Consumer && c.payload.toString()).toBe('state');
  });

  it('refuses an unknown op and a truncated message', () => {
    expect(() => decodeStreamEntry(Buffer.from([9, 0]))).toThrow(RangeError);
    const whole = encodeMsgEntry({ seq: 1, timestampNs: 1n, subject: 's', header: null, data: Buffer.from('abcdef'), msgId: undefined, rollup: undefined, noInterest: false });
    expect(() => decodeStreamEntry(whole.subarray(0, whole.length - 2))).toThrow(RangeError);
  });
});

describe('stream replica snapshot and cluster block', () => {
  it('round-trips the snapshot header, consumer state and store bytes', () => {
    const data = encodeReplicaSnapshot(1234, Buffer.from('consumers'), [Buffer.from('ab'), Buffer.from('cd')]);
    const snap = decodeReplicaSnapshot(data);
    expect(snap.lastSeq).toBe(1234);
    expect(Buffer.from(snap.consumers).toString()).toBe('consumers');
    expect(Buffer.from(snap.storeBytes!).toString()).toBe('abcd');
    expect(() => decodeReplicaSnapshot(Buffer.from([1, 0]))).toThrow(RangeError);
  });

  it('tells a stand-in (no store image) from a complete image with an empty store', () => {
    expect(decodeReplicaSnapshot(encodeReplicaSnapshot(7, Buffer.alloc(0), null)).storeBytes).toBeNull();
    expect(decodeReplicaSnapshot(encodeReplicaSnapshot(7, Buffer.alloc(0), [])).storeBytes).toEqual(Buffer.alloc(0));
  });

  it('hashes server names to nats-server peer ids', () => {
    expect(['n1', 'n2', 'n3'].map(peerIdOf)).toEqual(['fjFyEjc1', '44jzkV9D', 'BXScrY9i']);
  });

  it('builds the leader view, and the follower view of a group with a leader', () => {
    const names = new Map([1, 2, 3].map((id) => [id, { name: `n${id}`, raftNodeId: id, serverId: `S${id}`, active: id !== 3 }]));
    const replicas = [
      { raftNodeId: 3, name: 'n3', current: false, offline: true, activeAgoMs: 1500.5, lag: 4 },
      { raftNodeId: 2, name: 'n2', current: true, offline: false, activeAgoMs: 1.25, lag: 0 },
    ];
    const base = { group: 'g', kind: 'stream' as const, role: 'leader' as const, term: 2, commit: 9, applied: 9, leaderChanges: 1 };
    expect(clusterBlockOf('C1', 1, { ...base, leader: 1, replicas }, names)).toEqual({
      name: 'C1',
      raft_group: 'g',
      leader: 'n1',
      replicas: [
        { name: 'n2', current: true, active: 1_250_000, peer: '44jzkV9D' },
        { name: 'n3', current: false, offline: true, active: 1_500_500_000, lag: 4, peer: 'BXScrY9i' },
      ],
    });
    // Node 2's view while node 1 leads: the leader is not listed, node 2 is.
    const follower = clusterBlockOf('C1', 2, { ...base, role: 'follower', leader: 1, replicas: [
      { raftNodeId: 1, name: 'n1', current: true, offline: false, activeAgoMs: 10, lag: 0 },
      { raftNodeId: 3, name: 'n3', current: false, offline: true, activeAgoMs: 5000, lag: 0 },
    ] }, names) as { leader: string; replicas: Array<{ name: string }> };
    expect(follower.leader).toBe('n1');
    expect(follower.replicas.map((r) => r.name)).toEqual(['n2', 'n3']);
  });
});
