// The router's queue-member choice: each group draws on its own, the publisher (echo off) is skipped without
// doubling anyone's share, and a peer's members take part in the draw. Counts are over DRAWS random draws:
// a member's count has a standard deviation under 28, and the bounds (±20% of its share) are 7 or more.
import { describe, expect, it } from 'vitest';
import { MessageRouter, type ClusterRoute } from '../src/message-router.js';
import { Subscription, type SubscriptionOwner } from '../src/subscription.js';
import { randomBelow } from '../src/random-below.js';

const DRAWS = 3000;

class Counter implements SubscriptionOwner {
  got = 0;
  constructor(
    readonly cid: number,
    readonly clusterVisible?: boolean,
  ) {}
  deliverMessage(): void {
    this.got++;
  }
}

function expectShare(got: number, share: number): void {
  expect(got).toBeGreaterThanOrEqual(Math.floor(share * 0.8));
  expect(got).toBeLessThanOrEqual(Math.ceil(share * 1.2));
}

function members(router: MessageRouter, subject: string, queue: string, cids: readonly number[]): Counter[] {
  return cids.map((cid, i) => {
    const owner = new Counter(cid);
    router.subscribe(new Subscription(owner, subject, queue, `${queue}${i}`));
    return owner;
  });
}

const body = Buffer.from('x');

/** A cluster with `weights[queue]` members on peers; records the groups each forward left to peers. */
class PeersStandIn implements ClusterRoute {
  leftToPeers = new Map<string, number>();
  constructor(private readonly weights: Record<string, number>) {}
  subscribed(): void {}
  unsubscribed(): void {}
  hasRemoteInterest(): boolean {
    return true;
  }
  hasRemoteClientInterest(): boolean {
    return true;
  }
  remoteQueueWeight(_subject: string, queue: string): number {
    return this.weights[queue] ?? 0;
  }
  forward(_s: string, _r: string | null, _h: number, _m: Buffer, served: readonly string[]): number {
    let sent = 0;
    for (const q of Object.keys(this.weights)) {
      if (served.includes(q)) continue;
      this.leftToPeers.set(q, (this.leftToPeers.get(q) ?? 0) + 1);
      sent = 1;
    }
    return sent;
  }
}

describe('MessageRouter queue groups', () => {
  it('gives every group each message once and spreads each over its own members, whatever the other groups', () => {
    const router = new MessageRouter();
    const groups = [members(router, 'w', 'three', [1, 2, 3]), members(router, 'w', 'two', [4, 5]), members(router, 'w', 'one', [6])];
    for (let i = 0; i < DRAWS; i++) expect(router.publish('w', null, -1, body, 99, true)).toBe(3);
    for (const g of groups) {
      expect(g.reduce((n, m) => n + m.got, 0)).toBe(DRAWS);
      for (const m of g) expectShare(m.got, DRAWS / g.length);
    }
  });

  it('skips the publisher with echo off and shares its part evenly among the others', () => {
    const router = new MessageRouter();
    const [self, b, c] = members(router, 'e', 'g', [7, 8, 9]);
    for (let i = 0; i < DRAWS; i++) expect(router.publish('e', null, -1, body, 7, false)).toBe(1);
    expect(self!.got).toBe(0);
    expectShare(b!.got, DRAWS / 2);
    expectShare(c!.got, DRAWS / 2);
    const [alone] = members(router, 'e2', 'solo', [7]);
    expect(router.publish('e2', null, -1, body, 7, false)).toBe(0);
    expect(alone!.got).toBe(0);
  });

  it("counts a peer's members in the draw: one local member of three takes a third", () => {
    const router = new MessageRouter();
    const peers = new PeersStandIn({ g: 2, elsewhere: 1 });
    router.cluster = peers;
    const [local] = members(router, 'c', 'g', [1]);
    for (let i = 0; i < DRAWS; i++) router.publish('c', null, -1, body, 99, true);
    expectShare(local!.got, DRAWS / 3);
    expect(peers.leftToPeers.get('g')).toBe(DRAWS - local!.got);
    expect(peers.leftToPeers.get('elsewhere')).toBe(DRAWS); // no member here: always a peer's
  });

  it("shares an echo-off publisher's part among the other members here and on peers alike", () => {
    const router = new MessageRouter();
    const peers = new PeersStandIn({ g: 1 });
    router.cluster = peers;
    const [self, other] = members(router, 'c', 'g', [1, 2]);
    for (let i = 0; i < DRAWS; i++) router.publish('c', null, -1, body, 1, false);
    expect(self!.got).toBe(0);
    expectShare(other!.got, DRAWS / 2);
    expect(peers.leftToPeers.get('g')).toBe(DRAWS - other!.got);
  });

  it('draws integers in range, uniformly', () => {
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 5 * DRAWS; i++) counts[randomBelow(5)]!++;
    expect(counts.reduce((a, b) => a + b, 0)).toBe(5 * DRAWS);
    for (const c of counts) expectShare(c, DRAWS);
    for (let i = 0; i < 1000; i++) expect(randomBelow(1)).toBe(0);
  });

  it('serves a routed message from local members the cluster sees, evenly', () => {
    const router = new MessageRouter();
    const internal = new Counter(0);
    router.subscribe(new Subscription(internal, 'r', 'g', 'i'));
    const [a, b] = members(router, 'r', 'g', [1, 2]);
    for (let i = 0; i < DRAWS; i++) expect(router.deliverRouted('r', null, -1, body, ['g'])).toBe(1);
    expect(internal.got).toBe(0);
    expectShare(a!.got, DRAWS / 2);
    expectShare(b!.got, DRAWS / 2);
    expect(router.deliverRouted('r', null, -1, body, ['other'])).toBe(0);
  });
});
