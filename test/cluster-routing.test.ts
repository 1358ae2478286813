// The server's cluster glue in one process: two MessageRouters joined by ClusterRouting over real gRPC.
import { describe, it, expect, afterEach } from 'vitest';
import { MessageRouter } from '../packages/server/src/message-router.js';
import { Subscription, type SubscriptionOwner } from '../packages/server/src/subscription.js';
import { ClusterRouting } from '../packages/server/src/cluster/cluster-routing.js';
import { untilEvery } from './helpers/until.js';

/** Polls every 5 ms, as this file was written with. */
const until = untilEvery(5);

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

class Inbox implements SubscriptionOwner {
  got: Array<{ subject: string; sid: string; reply: string | null; body: string }> = [];
  constructor(
    readonly cid: number,
    readonly clusterVisible?: boolean,
  ) {}
  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    this.got.push({ subject, sid: sub.sid, reply, body: message.subarray(Math.max(0, headerBytes)).toString() });
  }
}

const routings: ClusterRouting[] = [];
afterEach(async () => {
  await Promise.all(routings.splice(0).map((r) => r.stop()));
});

async function pair(): Promise<{ ra: MessageRouter; rb: MessageRouter; ca: ClusterRouting; cb: ClusterRouting }> {
  const ra = new MessageRouter();
  const rb = new MessageRouter();
  const ca = new ClusterRouting(ra, { clusterName: 'glue', serverName: 'A', serverId: 'IDA', clientUrl: '127.0.0.1:1', listen: { host: '127.0.0.1', port: -1 }, routes: [], faultsEnabled: false }, quiet);
  await ca.start();
  routings.push(ca);
  const cb = new ClusterRouting(rb, { clusterName: 'glue', serverName: 'B', serverId: 'IDB', clientUrl: '127.0.0.1:2', listen: { host: '127.0.0.1', port: -1 }, routes: [ca.node.clusterUrl], faultsEnabled: false }, quiet);
  await cb.start();
  routings.push(cb);
  await until(() => ca.node.peers().length === 1 && cb.node.peers().length === 1);
  return { ra, rb, ca, cb };
}

const pub = (r: MessageRouter, subject: string, body: string, reply: string | null = null): number =>
  r.publish(subject, reply, -1, Buffer.from(body), 999, true);

describe('ClusterRouting', () => {
  it('propagates interest with counts and removes it on the last unsubscribe', async () => {
    const { ra, rb, ca } = await pair();
    const inbox = new Inbox(7);
    const s1 = new Subscription(inbox, 'orders.*', null, '1');
    const s2 = new Subscription(inbox, 'orders.*', null, '2');
    rb.subscribe(s1);
    rb.subscribe(s2);
    await until(() => ra.hasInterest('orders.new'));
    expect(ca.routez()['routes']).toMatchObject([{ remote_name: 'B', interest: 1 }]);
    expect(pub(ra, 'orders.new', 'x')).toBe(1); // one peer, whatever the number of its subscriptions
    await until(() => inbox.got.length === 2);
    expect(inbox.got.map((g) => g.sid).sort()).toEqual(['1', '2']);
    rb.unsubscribe(s1);
    await new Promise((r) => setTimeout(r, 50));
    expect(ra.hasInterest('orders.new')).toBe(true);
    rb.unsubscribe(s2);
    await until(() => !ra.hasInterest('orders.new'));
    expect(pub(ra, 'orders.new', 'y')).toBe(0);
  });

  it('keeps internal subscriptions local unless their owner opts in', async () => {
    const { ra, rb } = await pair();
    const internal = new Inbox(0);
    const visible = new Inbox(0, true);
    rb.subscribe(new Subscription(internal, 'svc.internal', null, 'i'));
    rb.subscribe(new Subscription(visible, 'svc.visible', null, 'v'));
    await until(() => ra.hasInterest('svc.visible'));
    expect(ra.hasInterest('svc.internal')).toBe(false);
    expect(pub(ra, 'svc.internal', 'x')).toBe(0);
    pub(ra, 'svc.visible', 'y');
    await until(() => visible.got.length === 1);
    expect(internal.got).toHaveLength(0);
  });

  // 2000 random draws between two members: a count's standard deviation is 22, the bounds (±20%) 9.
  it('draws a queue member among local and remote members alike; the routed message names the group', async () => {
    const { ra, rb } = await pair();
    const remote = new Inbox(5);
    const local = new Inbox(6);
    const alsoPlainOnB = new Inbox(8);
    rb.subscribe(new Subscription(remote, 'jobs', 'workers', 'q'));
    rb.subscribe(new Subscription(alsoPlainOnB, 'jobs', null, 'p'));
    await until(() => ra.hasInterest('jobs'));
    for (let i = 0; i < 10; i++) pub(ra, 'jobs', `r${i}`);
    await until(() => remote.got.length === 10 && alsoPlainOnB.got.length === 10);
    ra.subscribe(new Subscription(local, 'jobs', 'workers', 'l'));
    const count = 2000;
    for (let i = 0; i < count; i++) pub(ra, 'jobs', `l${i}`);
    await until(() => alsoPlainOnB.got.length === 10 + count && local.got.length + remote.got.length === 10 + count);
    await new Promise((r) => setTimeout(r, 50));
    const bodies = [...local.got, ...remote.got.slice(10)].map((g) => g.body);
    expect(new Set(bodies).size).toBe(count); // each once, on one node or the other
    expect(bodies).toHaveLength(count);
    expect(local.got.length).toBeGreaterThanOrEqual(800);
    expect(local.got.length).toBeLessThanOrEqual(1200);
  });

  it('publishTo delivers to the subscribers of the route, here and on peers, with the stored subject', async () => {
    const { ra, rb } = await pair();
    const local = new Inbox(11);
    const remote = new Inbox(12);
    ra.subscribe(new Subscription(local, '_INBOX.pull.a', null, 'la'));
    rb.subscribe(new Subscription(remote, '_INBOX.pull.b', null, 'rb'));
    await until(() => ra.hasInterest('_INBOX.pull.b'));
    expect(ra.publishTo('_INBOX.pull.a', 'orders.new', '$JS.ACK.1', -1, Buffer.from('one'))).toBe(1);
    expect(ra.publishTo('_INBOX.pull.b', 'orders.old', '$JS.ACK.2', -1, Buffer.from('two'))).toBe(1);
    await until(() => remote.got.length === 1);
    expect(local.got).toEqual([{ subject: 'orders.new', sid: 'la', reply: '$JS.ACK.1', body: 'one' }]);
    expect(remote.got).toEqual([{ subject: 'orders.old', sid: 'rb', reply: '$JS.ACK.2', body: 'two' }]);
  });

  it('never forwards a routed message again', async () => {
    const { ra, rb, ca, cb } = await pair();
    const onA = new Inbox(3);
    const onB = new Inbox(4);
    ra.subscribe(new Subscription(onA, 'echo.>', null, 'a'));
    rb.subscribe(new Subscription(onB, 'echo.>', null, 'b'));
    await until(() => ra.hasInterest('echo.x') && rb.sublist.hasInterest('echo.x') && cb.hasRemoteInterest('echo.x'));
    pub(ra, 'echo.x', 'once');
    await until(() => onB.got.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(onA.got).toHaveLength(1);
    expect(onB.got).toHaveLength(1);
    expect(ca.routedOut).toBe(1);
    expect(cb.routedIn).toBe(1);
    expect(cb.routedOut).toBe(0);
  });
});
