// Interest tables: local counts announced to peers, and the per-peer remote table that plans forwarding.
import { describe, it, expect } from 'vitest';
import { Backoff, FaultRules, LocalInterest, RemoteInterestTable, raftNodeIdFor } from '@flotilla/cluster';

describe('LocalInterest', () => {
  it('counts subscriptions per (subject, queue) and announces 0 when the last goes', () => {
    const li = new LocalInterest();
    expect(li.add('a.*', null, true)).toEqual({ subject: 'a.*', queue: '', count: 1, clients: 1 });
    expect(li.add('a.*', null, true)).toEqual({ subject: 'a.*', queue: '', count: 2, clients: 2 });
    expect(li.add('a.*', 'q', true)).toEqual({ subject: 'a.*', queue: 'q', count: 1, clients: 1 });
    expect(li.snapshot()).toHaveLength(2);
    expect(li.remove('a.*', null, true)).toEqual({ subject: 'a.*', queue: '', count: 1, clients: 1 });
    expect(li.remove('a.*', null, true)).toEqual({ subject: 'a.*', queue: '', count: 0, clients: 0 });
    expect(li.remove('a.*', null, true)).toBeNull();
    expect(li.snapshot()).toEqual([{ subject: 'a.*', queue: 'q', count: 1, clients: 1 }]);
  });

  it("counts clients' subscriptions apart from internal ones on the same subject", () => {
    const li = new LocalInterest();
    // A stream's capture (internal) first, then a client on the same subject, then the client goes.
    expect(li.add('orders.>', null, false)).toEqual({ subject: 'orders.>', queue: '', count: 1, clients: 0 });
    expect(li.add('orders.>', null, true)).toEqual({ subject: 'orders.>', queue: '', count: 2, clients: 1 });
    expect(li.remove('orders.>', null, true)).toEqual({ subject: 'orders.>', queue: '', count: 1, clients: 0 });
    expect(li.snapshot()).toEqual([{ subject: 'orders.>', queue: '', count: 1, clients: 0 }]);
    expect(li.remove('orders.>', null, false)).toEqual({ subject: 'orders.>', queue: '', count: 0, clients: 0 });
  });
});

describe('RemoteInterestTable', () => {
  const none = () => false;

  it('sends a message once to each peer with matching interest, whatever the number of matching subjects', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'a.*', queue: '', count: 1, clients: 1 }, { subject: 'a.>', queue: '', count: 3, clients: 3 }] });
    t.apply('p2', { full: true, entries: [{ subject: 'b', queue: '', count: 1, clients: 1 }] });
    const plan = t.plan('a.x', none)!;
    expect(plan).toEqual([['p1', []]]);
    expect(t.plan('c', none)).toBeNull();
    expect(t.plan('b', none)).toEqual([['p2', []]]);
  });

  it('applies deltas and full syncs, and forgets a peer', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: false, entries: [{ subject: 'x', queue: '', count: 1, clients: 1 }] });
    t.apply('p1', { full: false, entries: [{ subject: 'y', queue: '', count: 1, clients: 1 }] });
    expect(t.entriesOf('p1')).toBe(2);
    t.apply('p1', { full: false, entries: [{ subject: 'x', queue: '', count: 0, clients: 0 }] });
    expect(t.plan('x', none)).toBeNull();
    t.apply('p1', { full: true, entries: [{ subject: 'z', queue: '', count: 1, clients: 1 }] });
    expect(t.plan('y', none)).toBeNull();
    expect(t.plan('z', none)).not.toBeNull();
    t.removePeer('p1');
    expect(t.plan('z', none)).toBeNull();
    expect(t.entriesOf('p1')).toBe(0);
  });

  // 4000 random draws: a count's standard deviation is under 32, the bounds (±20% of the share) 6 or more.
  it('picks one peer per queue group at random, weighted by member counts, and none when served locally', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'w', queue: 'g', count: 1, clients: 1 }] });
    t.apply('p2', { full: true, entries: [{ subject: 'w', queue: 'g', count: 3, clients: 3 }] });
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const plan = t.plan('w', none)!;
      expect(plan).toHaveLength(1);
      const [[peer, queues]] = plan;
      expect(queues).toEqual(['g']);
      counts.set(peer!, (counts.get(peer!) ?? 0) + 1);
    }
    expect(counts.get('p1')).toBeGreaterThanOrEqual(800);
    expect(counts.get('p1')).toBeLessThanOrEqual(1200);
    expect(counts.get('p1')! + counts.get('p2')!).toBe(4000);
    expect(t.plan('w', (q) => q === 'g')).toBeNull();
  });

  it('draws a peer for each queue group on its own when groups share a subject', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'w', queue: 'a', count: 1, clients: 1 }, { subject: 'w', queue: 'b', count: 1, clients: 1 }] });
    t.apply('p2', { full: true, entries: [{ subject: 'w', queue: 'a', count: 1, clients: 1 }, { subject: 'w', queue: 'b', count: 1, clients: 1 }] });
    const toP1 = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) {
      for (const [peer, queues] of t.plan('w', none)!) if (peer === 'p1') for (const q of queues) toP1[q as 'a' | 'b']++;
    }
    for (const n of Object.values(toP1)) {
      expect(n).toBeGreaterThanOrEqual(1600);
      expect(n).toBeLessThanOrEqual(2400);
    }
  });

  it("reports a queue group's members on all peers for a subject", () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'w.*', queue: 'g', count: 2, clients: 2 }, { subject: 'w.x', queue: '', count: 1, clients: 1 }] });
    t.apply('p2', { full: true, entries: [{ subject: 'w.x', queue: 'g', count: 3, clients: 3 }, { subject: 'w.x', queue: 'h', count: 1, clients: 1 }] });
    expect(t.queueWeight('w.x', 'g')).toBe(5);
    expect(t.queueWeight('w.y', 'g')).toBe(2);
    expect(t.queueWeight('w.x', 'h')).toBe(1);
    expect(t.queueWeight('w.x', 'none')).toBe(0);
    expect(t.queueWeight('v', 'g')).toBe(0);
  });

  it('combines plain interest and queue duties for the same peer into one send', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'm.>', queue: '', count: 1, clients: 1 }, { subject: 'm.*', queue: 'g1', count: 1, clients: 1 }, { subject: 'm.x', queue: 'g2', count: 1, clients: 1 }] });
    const plan = t.plan('m.x', none)!;
    expect(plan).toHaveLength(1);
    expect(plan[0]![0]).toBe('p1');
    expect([...plan[0]![1]].sort()).toEqual(['g1', 'g2']);
  });

  it('tells client interest from internal interest, which still plans forwarding', () => {
    const t = new RemoteInterestTable();
    // p1 holds a stream capturing xb.> (internal only); p2 a client's queue member on xq.
    t.apply('p1', { full: true, entries: [{ subject: 'xb.>', queue: '', count: 1, clients: 0 }] });
    t.apply('p2', { full: true, entries: [{ subject: 'xq', queue: 'g', count: 1, clients: 1 }] });
    expect(t.hasClientInterest('xb.in')).toBe(false);
    expect(t.plan('xb.in', none)).toEqual([['p1', []]]);
    expect(t.hasClientInterest('xq')).toBe(true);
    // A client subscribes on p1 (delta), then leaves again: the capture keeps routing throughout.
    t.apply('p1', { full: false, entries: [{ subject: 'xb.in', queue: '', count: 1, clients: 1 }] });
    expect(t.hasClientInterest('xb.in')).toBe(true);
    expect(t.hasClientInterest('xb.other')).toBe(false);
    t.apply('p1', { full: false, entries: [{ subject: 'xb.in', queue: '', count: 0, clients: 0 }] });
    expect(t.hasClientInterest('xb.in')).toBe(false);
    // The same entry going from internal-only to client-backed and back, by count update.
    t.apply('p1', { full: false, entries: [{ subject: 'xb.>', queue: '', count: 2, clients: 1 }] });
    expect(t.hasClientInterest('xb.in')).toBe(true);
    t.apply('p1', { full: false, entries: [{ subject: 'xb.>', queue: '', count: 1, clients: 0 }] });
    expect(t.hasClientInterest('xb.in')).toBe(false);
    expect(t.plan('xb.in', none)).toEqual([['p1', []]]);
    // A full sync replaces it; clients above count are capped, so no entry claims more clients than members.
    t.apply('p1', { full: true, entries: [{ subject: 'xb.>', queue: '', count: 1, clients: 5 }] });
    expect(t.sublist.match('xb.in').plain[0]!.clients).toBe(1);
    t.removePeer('p1');
    expect(t.hasClientInterest('xb.in')).toBe(false);
  });

  it('skips an invalid subject from a peer without breaking the rest', () => {
    const t = new RemoteInterestTable();
    t.apply('p1', { full: true, entries: [{ subject: 'bad..subject', queue: '', count: 1, clients: 1 }, { subject: 'ok', queue: '', count: 1, clients: 1 }] });
    expect(t.entriesOf('p1')).toBe(1);
    expect(t.plan('ok', none)).not.toBeNull();
  });
});

describe('Backoff', () => {
  it('doubles from the floor to the ceiling with +-20% jitter, and resets', () => {
    const b = new Backoff(50, 2000, () => 0.5);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(() => b.nextDelayMs())).toEqual([50, 100, 200, 400, 800, 1600, 2000, 2000]);
    b.reset();
    expect(b.nextDelayMs()).toBe(50);
    const low = new Backoff(100, 1000, () => 0);
    expect(low.nextDelayMs()).toBe(80);
    const high = new Backoff(100, 1000, () => 0.999999);
    expect(high.nextDelayMs()).toBe(120);
  });
});

describe('FaultRules', () => {
  it('drops at the configured rate and reports its state', () => {
    let r = 0;
    const seq = [0.1, 0.6, 0.3, 0.9];
    const f = new FaultRules(() => seq[r++ % seq.length]!);
    f.dropRate.set('n2', 0.5);
    f.delayMs.set('n3', 100);
    f.partitioned.add('n4');
    expect([1, 2, 3, 4].map(() => f.shouldDrop('n2'))).toEqual([true, false, true, false]);
    expect(f.shouldDrop('n3')).toBe(false);
    expect(f.delayFor('n3')).toBe(100);
    expect(f.isPartitioned('n4')).toBe(true);
    expect(f.state()).toEqual({ partitioned: ['n4'], dropRate: { n2: 0.5 }, delayMs: { n3: 100 } });
    f.clear();
    expect(f.state()).toEqual({ partitioned: [], dropRate: {}, delayMs: {} });
  });
});

describe('raftNodeIdFor', () => {
  it('is stable, positive and 31-bit', () => {
    const ids = ['n1', 'n2', 'n3', 'server-a', ''].map(raftNodeIdFor);
    expect(ids).toEqual(['n1', 'n2', 'n3', 'server-a', ''].map(raftNodeIdFor));
    for (const id of ids) {
      expect(id).toBeGreaterThan(0);
      expect(id).toBeLessThan(2 ** 31);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
