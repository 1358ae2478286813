// The chaos checker's judgement on hand-made replica reads: it must see losses, duplicates, moved
// sequences, divergent replicas and consumer state, and nothing on a clean run. Plus the seeded schedule
// and the failover-window arithmetic.
import { describe, it, expect } from 'vitest';
// @ts-expect-error plain ESM JS without types
import { judge } from '../scripts/chaos/verdict.js';
// @ts-expect-error plain ESM JS without types
import { buildSchedule } from '../scripts/chaos/fault-schedule.js';
// @ts-expect-error plain ESM JS without types
import { noAckWindowMs, failoverWindows } from '../scripts/chaos/failover-windows.js';
// @ts-expect-error plain ESM JS without types
import { ackSubjectInfo } from '../scripts/chaos/pull-consumer.js';

type Read = { ok: true; firstSeq: number; lastSeq: number; messages: Map<number, string> };
const read = (ids: string[]): Read => ({ ok: true, firstSeq: 1, lastSeq: ids.length, messages: new Map(ids.map((id, i) => [i + 1, id])) });
const consumer = (delivered: number) => ({ ok: true, delivered, ackFloor: delivered, numAckPending: 0, numPending: 0, numRedelivered: 0 });

function stream(replicaIds: Record<string, string[]>, acked: Array<[string, number]>, received = acked.map(([id]) => id)) {
  return {
    name: 'S',
    acks: new Map(acked),
    publisherViolations: [],
    replicas: Object.entries(replicaIds).map(([name, ids]) => ({ name, read: read(ids) })),
    received: new Map(received.map((id, i) => [id, i + 1])),
    consumerStates: Object.keys(replicaIds).map((name) => ({ name, state: consumer(acked.length) })),
  };
}

describe('chaos verdict', () => {
  it('passes identical replicas holding every acked id once, in publish order', () => {
    const ids = ['S.p0.0', 'S.p1.0', 'S.p0.1', 'S.p1.1'];
    const v = judge([stream({ n1: ids, n2: ids, n3: ids }, ids.map((id, i) => [id, i + 1]))]);
    expect(v.violations.total).toBe(0);
    expect(v.perStream.S.lastSeq).toEqual({ n1: 4, n2: 4, n3: 4 });
  });

  it('reports an acked id missing on one replica as lost and the replicas as divergent', () => {
    const ids = ['S.p0.0', 'S.p0.1', 'S.p0.2'];
    const v = judge([stream({ n1: ids, n2: ids.slice(0, 2), n3: ids }, ids.map((id, i) => [id, i + 1]))]);
    expect(v.violations.byType.lost).toBe(1);
    expect(v.violations.examples.lost[0]).toMatchObject({ replica: 'n2', id: 'S.p0.2', ackedSeq: 3 });
    expect(v.violations.byType['replica-divergence']).toBe(1);
    expect(v.violations.byType['replica-bounds-differ']).toBe(1);
    expect(v.perStream.S.lostEverywhere).toBe(0); // n1 and n3 still hold it
  });

  it('reports a duplicate, a moved sequence, broken order and an undelivered ack', () => {
    const ids = ['S.p0.1', 'S.p0.0', 'S.p0.1'];
    const s = stream({ n1: ids }, [['S.p0.0', 1], ['S.p0.1', 1]], ['S.p0.0']);
    const v = judge([s]);
    expect(v.violations.byType.duplicate).toBe(1);
    expect(v.violations.byType['seq-mismatch']).toBe(1); // S.p0.0 acked at 1, stored at 2
    expect(v.violations.byType.order).toBe(1); // p0.0 stored after p0.1
    expect(v.violations.byType['not-delivered']).toBe(1);
  });

  it('reports consumer state that differs between replicas and replicas it could not read', () => {
    const ids = ['S.p0.0'];
    const s = stream({ n1: ids, n2: ids }, [['S.p0.0', 1]]);
    s.consumerStates[1]!.state = { ...consumer(1), ackFloor: 0, numAckPending: 1 };
    s.replicas.push({ name: 'n3', read: { ok: false, reason: 'no leader' } as unknown as Read });
    const v = judge([s]);
    expect(v.violations.byType['consumer-state-divergence']).toBe(1);
    expect(v.violations.byType['replica-unverified']).toBe(1);
  });

  it('reports a stream nobody answers for after the repairs, and its acked ids as undelivered', () => {
    const s = { ...stream({}, [['S.p0.0', 1]], []), unavailable: 'STREAM.INFO S did not succeed' };
    const v = judge([s]);
    expect(v.violations.byType).toEqual({ 'stream-unavailable': 1, 'not-delivered': 1 });
    expect(v.perStream.S.lostEverywhere).toBeNull();
  });
});

describe('chaos schedule and windows', () => {
  it('one seed gives one schedule; another seed another', () => {
    const o = { kinds: ['kill-stream-leader', 'pause-random', 'kill-random'], durationMs: 120_000 };
    const a = buildSchedule({ seed: 42, ...o });
    expect(buildSchedule({ seed: 42, ...o })).toEqual(a);
    expect(buildSchedule({ seed: 43, ...o })).not.toEqual(a);
    expect(a.length).toBeGreaterThan(5);
    expect(a.every((f: { atMs: number }) => f.atMs >= 3_000 && f.atMs < 117_000)).toBe(true);
  });

  it('a window is the longest stretch without an ack after the fault, tail included', () => {
    expect(noAckWindowMs([100, 200, 1_700, 1_710], 150, 2_000)).toBe(1_500);
    expect(noAckWindowMs([100], 150, 2_000)).toBe(1_850);
    const w = failoverWindows([{ index: 0, kind: 'kill-stream-leader', target: 'n1', stream: 'S', startMs: 1_000 }], new Map([['S', [900, 1_010, 2_500, 2_510]]]), 2_600);
    expect(w.streamLeaderFaults).toEqual({ count: 1, maxMs: 1_490, p50Ms: 1_490, p99Ms: 1_490 });
    // a random kill that landed on the leader counts as a leader fault; one that missed does not
    const faults = [
      { index: 0, kind: 'kill-random', target: 'n2', stream: null, leaderOf: ['S'], startMs: 1_000 },
      { index: 1, kind: 'kill-random', target: 'n3', stream: null, leaderOf: [], startMs: 3_000 },
    ];
    const r = failoverWindows(faults, new Map([['S', [900, 2_000, 3_100, 3_200]]]), 3_300);
    expect(r.streamLeaderFaults.maxMs).toBe(1_000);
    expect(r.otherFaults).toEqual({ count: 1, maxMs: 100, p50Ms: 100, p99Ms: 100 });
  });

  it('reads delivery count and stream sequence from both ack subject layouts', () => {
    expect(ackSubjectInfo('$JS.ACK.S.c.2.17.9.1700000000.0')).toEqual({ delivered: 2, streamSeq: 17 });
    expect(ackSubjectInfo('$JS.ACK.dom.hash.S.c.3.18.10.1700000000.0.tok')).toEqual({ delivered: 3, streamSeq: 18 });
  });
});
