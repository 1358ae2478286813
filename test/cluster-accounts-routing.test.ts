// Accounts in the server's cluster glue, in one process: two nodes' routers per account joined by
// ClusterRouting over real gRPC, and an AccountRoute over a stand-in node for what goes on which link.
import { describe, it, expect, afterEach } from 'vitest';
import type { ClusterNode, Frame, PeerView } from '@flotilla/cluster';
import { MessageRouter } from '../packages/server/src/message-router.js';
import { Subscription, type SubscriptionOwner } from '../packages/server/src/subscription.js';
import { ClusterRouting } from '../packages/server/src/cluster/cluster-routing.js';
import { AccountRoute } from '../packages/server/src/cluster/account-route.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(5);
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

class Inbox implements SubscriptionOwner {
  got: string[] = [];
  constructor(readonly cid: number) {}
  deliverMessage(_sub: Subscription, subject: string, _reply: string | null, headerBytes: number, message: Buffer): void {
    this.got.push(`${subject}:${message.subarray(Math.max(0, headerBytes)).toString()}`);
  }
}

interface Side {
  global: MessageRouter;
  a: MessageRouter;
  routing: ClusterRouting;
}

const routings: ClusterRouting[] = [];
afterEach(async () => {
  await Promise.all(routings.splice(0).map((r) => r.stop()));
});

async function side(name: string, routes: string[], accounts: string[]): Promise<Side & { extra: Map<string, MessageRouter> }> {
  const global = new MessageRouter();
  const extra = new Map(accounts.map((n) => [n, new MessageRouter()] as const));
  const routing = new ClusterRouting(
    global,
    {
      clusterName: 'acc-glue',
      serverName: name,
      serverId: `ID${name}`,
      clientUrl: '127.0.0.1:1',
      listen: { host: '127.0.0.1', port: -1 },
      routes,
      faultsEnabled: false,
      accounts: [...extra].map(([n, router]) => ({ name: n, router })),
    },
    quiet,
  );
  await routing.start();
  routings.push(routing);
  return { global, a: extra.get('A') ?? new MessageRouter(), routing, extra };
}

async function pair(accountsOfY: string[] = ['A']): Promise<[Side, Side]> {
  const x = await side('X', [], ['A']);
  const y = await side('Y', [x.routing.node.clusterUrl], accountsOfY);
  await until(() => x.routing.node.peers().length === 1 && y.routing.node.peers().length === 1);
  return [x, y];
}

const pub = (r: MessageRouter, subject: string, body: string): number => r.publish(subject, null, -1, Buffer.from(body), 999, true);

describe('ClusterRouting with accounts', () => {
  it("a subscription in A is interest in A only: the global account's message on the subject stays home", async () => {
    const [x, y] = await pair();
    const inA = new Inbox(1);
    const inG = new Inbox(2);
    y.a.subscribe(new Subscription(inA, 'orders.*', null, 'a'));
    await until(() => x.a.hasInterest('orders.new'));
    expect(x.global.hasInterest('orders.new')).toBe(false);
    expect(pub(x.global, 'orders.new', 'g')).toBe(0);
    expect(pub(x.a, 'orders.new', 'a')).toBe(1);
    await until(() => inA.got.length === 1);
    y.global.subscribe(new Subscription(inG, 'orders.*', null, 'g'));
    await until(() => x.global.hasInterest('orders.new'));
    pub(x.global, 'orders.new', 'g2');
    await until(() => inG.got.length === 1);
    expect(inA.got).toEqual(['orders.new:a']);
    expect(inG.got).toEqual(['orders.new:g2']);
    expect(x.routing.routez()).toMatchObject({ routed_msgs_out: 2, routes: [{ remote_name: 'Y', interest: 2 }] });
    expect(y.routing.routez()).toMatchObject({ routed_msgs_in: 2, local_interest: 2 });
  });

  it("a full interest sync in one account leaves the global account's interest from that peer as it was", async () => {
    const [x, y] = await pair();
    y.global.subscribe(new Subscription(new Inbox(1), 'keep', null, 'g'));
    await until(() => x.global.hasInterest('keep'));
    y.routing.node.send(x.routing.node.serverId, { interest: { full: true, entries: [], account: 'A' } });
    y.a.subscribe(new Subscription(new Inbox(2), 'after', null, 'a'));
    await until(() => x.a.hasInterest('after'));
    expect(x.global.hasInterest('keep')).toBe(true);
  });

  it('frames naming an account this node does not have are dropped, never delivered in another account', async () => {
    const [x, y] = await pair(['A']);
    const inG = new Inbox(1);
    x.global.subscribe(new Subscription(inG, 'z.>', null, 'g'));
    await until(() => y.global.hasInterest('z.x'));
    const toX = (frame: Frame) => y.routing.node.send(x.routing.node.serverId, frame);
    toX({ interest: { full: false, entries: [{ subject: 'z.>', queue: '', count: 1, clients: 1 }], account: 'Z' } });
    toX({ msg: { subject: 'z.x', reply: '', message: Buffer.from('wrong'), headerBytes: -1, queues: [], route: '', account: 'Z' } });
    pub(y.global, 'z.x', 'right');
    await until(() => inG.got.length === 1);
    expect(inG.got).toEqual(['z.x:right']);
    expect(x.routing.unknownAccountDrops).toBe(2);
    expect(x.routing.routez()).toMatchObject({ routes: [{ interest: 0 }] });
  });
});

describe('ClusterRouting.addAccount', () => {
  it('an account made after the links came up is routed: its earlier and later subscriptions reach the peer', async () => {
    const [x, y] = await pair();
    const lateOnX = new MessageRouter();
    const lateOnY = new MessageRouter();
    const before = new Inbox(1);
    const after = new Inbox(2);
    lateOnY.subscribe(new Subscription(before, 'late.before', null, 'b'));
    x.routing.addAccount('LATE', lateOnX);
    y.routing.addAccount('LATE', lateOnY);
    lateOnY.subscribe(new Subscription(after, 'late.after', null, 'a'));
    await until(() => lateOnX.hasInterest('late.before') && lateOnX.hasInterest('late.after'));
    expect(x.a.hasInterest('late.before')).toBe(false);
    pub(lateOnX, 'late.before', '1');
    pub(lateOnX, 'late.after', '2');
    await until(() => before.got.length === 1 && after.got.length === 1);
    expect([...before.got, ...after.got]).toEqual(['late.before:1', 'late.after:2']);
  });
});

describe('AccountRoute', () => {
  function standIn(peers: PeerView[]): { node: ClusterNode; sent: Array<[string, Frame]> } {
    const sent: Array<[string, Frame]> = [];
    const node = { peers: () => peers, send: (id: string, frame: Frame) => (sent.push([id, frame]), true) } as unknown as ClusterNode;
    return { node, sent };
  }
  const peer = (serverId: string, accounts: boolean): PeerView => ({ serverId, serverName: serverId, clientUrl: '', clusterUrl: '', raftNodeId: 1, outbound: false, accounts });

  it("a named account's interest goes only to peers that read account names; the global account's to every peer", () => {
    const { node, sent } = standIn([peer('old', false), peer('new', true)]);
    const counter = { routedOut: 0 };
    const named = new AccountRoute(new MessageRouter(), node, 'A', counter);
    const global = new AccountRoute(new MessageRouter(), node, undefined, counter);
    named.attach();
    global.attach();
    named.router.subscribe(new Subscription(new Inbox(1), 'a.>', 'q', '1'));
    global.router.subscribe(new Subscription(new Inbox(2), 'g.>', null, '2'));
    named.syncTo(peer('old', false));
    named.syncTo(peer('new', true));
    expect(sent).toEqual([
      ['new', { interest: { full: false, entries: [{ subject: 'a.>', queue: 'q', count: 1, clients: 1 }], account: 'A' } }],
      ['old', { interest: { full: false, entries: [{ subject: 'g.>', queue: '', count: 1, clients: 1 }] } }],
      ['new', { interest: { full: false, entries: [{ subject: 'g.>', queue: '', count: 1, clients: 1 }] } }],
      ['new', { interest: { full: true, entries: [{ subject: 'a.>', queue: 'q', count: 1, clients: 1 }], account: 'A' } }],
    ]);
  });

  it("forwards a named account's message with its name, the global account's without the key", () => {
    const { node, sent } = standIn([peer('p', true)]);
    const counter = { routedOut: 0 };
    const named = new AccountRoute(new MessageRouter(), node, 'A', counter);
    const global = new AccountRoute(new MessageRouter(), node, undefined, counter);
    named.attach();
    global.attach();
    const interest = { full: false, entries: [{ subject: 's', queue: '', count: 1, clients: 1 }] };
    named.remoteInterest.apply('p', interest);
    global.remoteInterest.apply('p', interest);
    expect(named.router.publish('s', null, -1, Buffer.from('n'), 0, true)).toBe(1);
    expect(global.router.publish('s', null, -1, Buffer.from('g'), 0, true)).toBe(1);
    const msgs = sent.flatMap(([to, f]) => ('msg' in f ? [{ to, ...f.msg, message: f.msg.message.toString() }] : []));
    expect(msgs).toEqual([
      { to: 'p', subject: 's', reply: '', message: 'n', headerBytes: -1, queues: [], route: '', account: 'A' },
      { to: 'p', subject: 's', reply: '', message: 'g', headerBytes: -1, queues: [], route: '' },
    ]);
    expect(Object.keys((sent[1]![1] as { msg: object }).msg)).not.toContain('account');
    expect(counter.routedOut).toBe(2);
  });
});
