// Per-account JetStream in a cluster, the pure parts: placement load summed over every account's catalogue,
// the publish check over the account's bytes on every node (a message counted once per replica), and the
// usage gossip between nodes over a shared bus (reports kept per known peer only).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccountLimitsCheck, UNLIMITED_ACCOUNT_LIMITS } from '../src/catalogue/account-limits.js';
import { AccountUsageGossip, type StorageUsage } from '../src/cluster/account-usage-gossip.js';
import { SharedPlacementLoad, placeReplicas } from '../src/cluster/meta-placement.js';
import type { BusHandler, BusMessage, MessageBus } from '../src/message-bus.js';
import { subjectMatchesFilter } from '@flotilla/protocol';

afterEach(() => vi.useRealTimers());

describe('placement load over every account', () => {
  it('sums the accounts’ loads, so a second account’s R1 stream goes to another node', () => {
    const shared = new SharedPlacementLoad();
    shared.register('A', () => ({ replicas: new Map([[1, 1]]), leaders: new Map([[1, 1]]) }));
    shared.register('B', () => ({ replicas: new Map([[1, 1], [2, 1]]), leaders: new Map([[2, 1]]) }));
    expect(shared.total()).toEqual({ replicas: new Map([[1, 2], [2, 1]]), leaders: new Map([[1, 1], [2, 1]]) });
    expect(placeReplicas(1, [1, 2, 3], shared.total())).toEqual([3]);
    // Registering an account again replaces its source.
    shared.register('A', () => ({ replicas: new Map(), leaders: new Map() }));
    expect(shared.total().replicas).toEqual(new Map([[1, 1], [2, 1]]));
  });
});

describe('the publish check in a cluster', () => {
  const limits = { ...UNLIMITED_ACCOUNT_LIMITS, max_storage: 10_000 };
  const check = (used: number): AccountLimitsCheck => {
    const c = new AccountLimitsCheck(limits, { values: () => [].values() }, { values: () => [].values() }, true);
    c.clusterUsage = () => ({ memory: 0, storage: used });
    return c;
  };

  it('adds the message once per replica to the bytes on every node', () => {
    // 22 + 5 + 1000 + 8 = 1035 bytes a copy
    expect(check(6_895).publishExceeds('file', 'sub.a', 0, 1000, 3)).toBe(false); // 6895 + 3105 = 10000
    expect(check(6_896).publishExceeds('file', 'sub.a', 0, 1000, 3)).toBe(true);
    expect(check(8_965).publishExceeds('file', 'sub.a', 0, 1000, 1)).toBe(false);
    expect(check(8_966).publishExceeds('file', 'sub.a', 0, 1000, 1)).toBe(true);
    // No memory limit: memory streams are not checked.
    expect(check(1_000_000).publishExceeds('memory', 'sub.a', 0, 1000, 3)).toBe(false);
  });

  it('with tiers: the tier’s bytes on every node against its limit × the replicas; no tier for the replicas refuses', () => {
    const tiers = { R1: { ...UNLIMITED_ACCOUNT_LIMITS, max_storage: 2_000 }, R3: { ...UNLIMITED_ACCOUNT_LIMITS, max_storage: 10_000 } };
    const tiered = (r1: number, r3: number): AccountLimitsCheck => {
      const c = new AccountLimitsCheck(UNLIMITED_ACCOUNT_LIMITS, { values: () => [].values() }, { values: () => [].values() }, true, tiers);
      c.clusterUsage = () => ({ memory: 0, storage: r1 + r3, tiers: { R1: { memory: 0, storage: r1 }, R3: { memory: 0, storage: r3 } } });
      return c;
    };
    // R3: 30000 allowed on every node (10000 per replica); 26895 + 3 × 1035 = 30000
    expect(tiered(1_999, 26_895).publishExceeds('file', 'sub.a', 0, 1000, 3)).toBe(false);
    expect(tiered(0, 26_896).publishExceeds('file', 'sub.a', 0, 1000, 3)).toBe(true);
    // R1 counts only R1's bytes: 965 + 1035 = 2000
    expect(tiered(965, 26_896).publishExceeds('file', 'sub.a', 0, 1000, 1)).toBe(false);
    expect(tiered(966, 0).publishExceeds('file', 'sub.a', 0, 1000, 1)).toBe(true);
    // R5 has no tier (nats-server: NewJSNoLimitsError)
    expect(tiered(0, 0).publishExceeds('file', 'sub.a', 0, 10, 5)).toBe(true);
  });
});

/** One bus all nodes share, as the system account's routed subject space. */
class SharedBus {
  private readonly subs: Array<{ subject: string; handler: BusHandler }> = [];
  readonly published: string[] = [];
  bus(): MessageBus {
    return {
      subscribe: (subject, handler) => {
        const s = { subject, handler };
        this.subs.push(s);
        return () => this.subs.splice(this.subs.indexOf(s), 1);
      },
      publish: (subject, reply, header, data) => {
        this.published.push(subject);
        const msg: BusMessage = { subject, reply, header: header === null ? null : Buffer.from(header), data: Buffer.from(data) };
        for (const s of [...this.subs]) if (subjectMatchesFilter(subject, s.subject)) s.handler(msg);
      },
      hasInterest: () => true,
      hasClientInterest: () => true,
    };
  }
}

describe('usage gossip', () => {
  it('each node’s total is its own bytes plus the peers’ last reports; changes go out within 250 ms', () => {
    vi.useFakeTimers();
    const net = new SharedBus();
    const local: Record<string, StorageUsage> = { n1: { memory: 0, storage: 100 }, n2: { memory: 5, storage: 200 } };
    const peers = new Set(['n1', 'n2']);
    const node = (name: string) =>
      new AccountUsageGossip({ bus: net.bus(), account: 'L', selfName: name, local: () => local[name]!, isPeer: (p) => peers.has(p) });
    const g1 = node('n1');
    const g2 = node('n2');
    g1.start();
    g2.start();
    // n2 started after n1's first report: it hears n1 at n1's next periodic one.
    expect(g1.total()).toEqual({ memory: 5, storage: 300 });
    expect(g2.total()).toEqual({ memory: 5, storage: 200 });
    vi.advanceTimersByTime(1_500);
    expect(g2.total()).toEqual({ memory: 5, storage: 300 });
    local['n2'] = { memory: 5, storage: 900 };
    expect(g1.total().storage).toBe(300); // not reported yet
    vi.advanceTimersByTime(250);
    expect(g1.total().storage).toBe(1000);
    // A report from a node that is not a peer (or malformed) is not kept.
    const stranger = net.bus();
    stranger.publish('$JSC.ARU.L.n9', null, null, Buffer.from('{"memory":0,"storage":5000}'));
    stranger.publish('$JSC.ARU.L.n2', null, null, Buffer.from('{"memory":-1}'));
    expect(g1.total().storage).toBe(1000);
    // Every 1.5 s a report goes out even when nothing changed.
    const before = net.published.length;
    vi.advanceTimersByTime(1_500);
    expect(net.published.length - before).toBe(2);
    g1.stop();
    g2.stop();
  });

  it('carries per-tier bytes, summed per tier over the nodes', () => {
    vi.useFakeTimers();
    const net = new SharedBus();
    const local: Record<string, StorageUsage> = {
      n1: { memory: 0, storage: 300, tiers: { R1: { memory: 0, storage: 100 }, R3: { memory: 0, storage: 200 } } },
      n2: { memory: 7, storage: 200, tiers: { R3: { memory: 7, storage: 200 } } },
    };
    const node = (name: string) => new AccountUsageGossip({ bus: net.bus(), account: 'T', selfName: name, local: () => local[name]!, isPeer: () => true });
    const g1 = node('n1');
    const g2 = node('n2');
    g1.start();
    g2.start();
    expect(g1.total()).toEqual({ memory: 7, storage: 500, tiers: { R1: { memory: 0, storage: 100 }, R3: { memory: 7, storage: 400 } } });
    // a tier whose bytes changed is reported even when the totals did not
    local['n2'] = { memory: 7, storage: 200, tiers: { R1: { memory: 0, storage: 50 }, R3: { memory: 7, storage: 150 } } };
    vi.advanceTimersByTime(250);
    expect(g1.total().tiers).toEqual({ R1: { memory: 0, storage: 150 }, R3: { memory: 7, storage: 350 } });
    g1.stop();
    g2.stop();
  });
});
