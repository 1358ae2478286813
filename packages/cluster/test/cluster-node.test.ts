// ClusterNodes in one process over real gRPC on loopback: linking, identity checks, duplicates, gossip,
// interest and messages, Raft messages through GrpcRaftTransport, and the fault hook.
import { describe, it, expect, afterEach } from 'vitest';
import { emptyMessage, type Message } from '@flotilla/raft';
import {
  ClusterNode,
  GrpcRaftTransport,
  type ClusterListener,
  type ClusterLogger,
  type InterestFrame,
  type PeerView,
  type RoutedMessageFrame,
} from '@flotilla/cluster';
import { until } from '../../../test/helpers/until.js';

interface LogLine {
  level: string;
  obj: object;
  msg: string;
}

class Recorder implements ClusterListener {
  up: PeerView[] = [];
  down: PeerView[] = [];
  interests: Array<{ peerId: string; update: InterestFrame }> = [];
  messages: Array<{ peerId: string; msg: RoutedMessageFrame }> = [];
  peerUp(p: PeerView): void {
    this.up.push(p);
  }
  peerDown(p: PeerView): void {
    this.down.push(p);
  }
  interest(peerId: string, update: InterestFrame): void {
    this.interests.push({ peerId, update });
  }
  message(peerId: string, msg: RoutedMessageFrame): void {
    this.messages.push({ peerId, msg });
  }
}

const nodes: ClusterNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
});

let idCounter = 0;
function makeNode(
  name: string,
  opts: { cluster?: string; routes?: string[]; faults?: boolean; listen?: boolean; serverId?: string } = {},
): { node: ClusterNode; rec: Recorder; logs: LogLine[] } {
  const logs: LogLine[] = [];
  const log = (level: string) => (obj: object, msg: string) => logs.push({ level, obj, msg });
  const logger: ClusterLogger = { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
  const node = new ClusterNode({
    clusterName: opts.cluster ?? 'unit',
    serverName: name,
    serverId: opts.serverId ?? `ID${String(++idCounter).padStart(4, '0')}${name}`,
    clientUrl: `127.0.0.1:${4000 + idCounter}`,
    ...(opts.listen === false ? {} : { listen: { host: '127.0.0.1', port: -1 } }),
    routes: opts.routes ?? [],
    faultsEnabled: opts.faults ?? false,
    log: logger,
    pingIntervalMs: 200,
    staleAfterMs: 2000,
  });
  const rec = new Recorder();
  node.listener = rec;
  nodes.push(node);
  return { node, rec, logs };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ClusterNode', () => {
  it('links two nodes, exchanges identity, and keeps the link up', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
    expect(a.node.peers()[0]).toMatchObject({ serverName: 'b', outbound: false, clusterUrl: b.node.clusterUrl });
    expect(b.node.peers()[0]).toMatchObject({ serverName: 'a', outbound: true, raftNodeId: a.node.raftNodeId });
    await sleep(1500); // several ping intervals: the link must survive idle time
    expect(a.node.peers()).toHaveLength(1);
    expect(b.node.peers()).toHaveLength(1);
    expect(a.rec.down).toHaveLength(0);
  });

  it('carries interest and routed messages in order, many per batch', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => b.node.peers().length === 1);
    const aId = b.node.peers()[0]!.serverId;
    b.node.send(aId, { interest: { full: true, entries: [{ subject: 'x.>', queue: '', count: 1, clients: 1 }] } });
    for (let i = 0; i < 1000; i++) {
      b.node.send(aId, { msg: { subject: 'x.y', reply: '', message: Buffer.from(String(i)), headerBytes: -1, queues: [], route: '' } });
    }
    await until(() => a.rec.messages.length === 1000);
    expect(a.rec.interests[0]!.update.entries).toEqual([{ subject: 'x.>', queue: '', count: 1, clients: 1 }]);
    expect(a.rec.messages.map((m) => Buffer.from(m.msg.message).toString())).toEqual(Array.from({ length: 1000 }, (_, i) => String(i)));
  });

  it('refuses a node with a different cluster name and logs it on both sides', async () => {
    const a = makeNode('a', { cluster: 'blue' });
    await a.node.start();
    const b = makeNode('b', { cluster: 'green', routes: [a.node.clusterUrl] });
    await b.node.start();
    // Each end checks the other's Hello, so both refuse and log it.
    await until(() => a.logs.some((l) => l.level === 'error' && l.msg === 'refusing route: cluster name mismatch'));
    await until(() => b.logs.some((l) => l.level === 'error' && /cluster name mismatch|refused by peer/.test(l.msg)));
    await new Promise((r) => setTimeout(r, 300));
    expect(a.node.peers()).toHaveLength(0);
    expect(b.node.peers()).toHaveLength(0);
    expect(a.rec.up).toHaveLength(0);
  });

  it('refuses a second node with a server name already in the cluster', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => a.node.peers().length === 1);
    const imposter = makeNode('b', { routes: [a.node.clusterUrl] });
    await imposter.node.start();
    await until(() => a.logs.some((l) => l.level === 'error' && l.msg === 'refusing route: another node already uses this server name'));
    await sleep(200);
    expect(a.node.peers().map((p) => p.serverId)).toEqual([b.node.serverId]);
    expect(imposter.node.peers()).toHaveLength(0);
  });

  it('adopts the cluster name of a peer when it has none', async () => {
    const a = makeNode('a', { cluster: 'named' });
    await a.node.start();
    const b = makeNode('b', { cluster: '', routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => b.node.peers().length === 1);
    expect(b.node.clusterName).toBe('named');
  });

  it('resolves two nodes dialing each other to one link, the same on both ends, that stays', async () => {
    const a = makeNode('a', { serverId: 'AAAA' });
    const b = makeNode('b', { serverId: 'BBBB' });
    await a.node.start();
    await b.node.start();
    a.node.addRoute(b.node.clusterUrl, true);
    b.node.addRoute(a.node.clusterUrl, true);
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
    await sleep(1500);
    expect(a.node.peers()).toHaveLength(1);
    expect(b.node.peers()).toHaveLength(1);
    // The link dialed by the smaller server id wins.
    expect(a.node.peers()[0]!.outbound).toBe(true);
    expect(b.node.peers()[0]!.outbound).toBe(false);
  });

  it('ignores a route to itself', async () => {
    const a = makeNode('a');
    await a.node.start();
    a.node.addRoute(a.node.clusterUrl, true);
    await sleep(300);
    expect(a.node.peers()).toHaveLength(0);
  });

  it('completes the mesh from gossip when every node only knows the first', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    const c = makeNode('c', { routes: [a.node.clusterUrl] });
    await Promise.all([b.node.start(), c.node.start()]);
    await until(() => [a, b, c].every((n) => n.node.peers().length === 2));
    await sleep(1000);
    expect([a, b, c].map((n) => n.node.peers().length)).toEqual([2, 2, 2]);
  });

  it('reconnects after the peer restarts', async () => {
    const a = makeNode('a');
    await a.node.start();
    const url = a.node.clusterUrl;
    const port = Number(url.split(':')[1]);
    const b = makeNode('b', { routes: [url] });
    await b.node.start();
    await until(() => b.node.peers().length === 1);
    await a.node.stop();
    await until(() => b.node.peers().length === 0);
    const a2 = new ClusterNode({
      clusterName: 'unit',
      serverName: 'a',
      serverId: 'ID-a-restarted',
      clientUrl: '127.0.0.1:1',
      listen: { host: '127.0.0.1', port },
      routes: [],
      log: { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined },
    });
    nodes.push(a2);
    await a2.start();
    await until(() => b.node.peers().length === 1 && b.node.peers()[0]!.serverId === 'ID-a-restarted', 8000);
  });

  it('carries Raft messages of several groups through GrpcRaftTransport', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
    const ta = new GrpcRaftTransport(a.node);
    const tb = new GrpcRaftTransport(b.node);
    const got: Message[] = [];
    tb.listen('g1', b.node.raftNodeId, (m) => got.push(m));
    tb.listen('g2', b.node.raftNodeId, (m) => got.push(m));
    const m1: Message = {
      ...emptyMessage('g1', 'append', a.node.raftNodeId, b.node.raftNodeId, 3),
      logTerm: 2,
      index: 10,
      commit: 9,
      entries: [{ index: 11, term: 3, type: 0, data: new Uint8Array([1, 2, 3]) }],
    };
    const m2: Message = { ...emptyMessage('g2', 'heartbeat', a.node.raftNodeId, b.node.raftNodeId, 7), context: 42 };
    const m3 = emptyMessage('g3', 'vote', a.node.raftNodeId, b.node.raftNodeId, 1); // nobody listens
    ta.send([m1, m2, m3]);
    await until(() => got.length === 2);
    await until(() => tb.undeliverable === 1);
    expect(got[0]).toMatchObject({ group: 'g1', type: 'append', term: 3, logTerm: 2, index: 10, commit: 9 });
    expect(Array.from(got[0]!.entries[0]!.data)).toEqual([1, 2, 3]);
    expect(got[1]).toMatchObject({ group: 'g2', type: 'heartbeat', context: 42 });
    // Unknown node id: dropped and counted.
    ta.send([emptyMessage('g1', 'vote', a.node.raftNodeId, 999_999, 1)]);
    expect(ta.unsent).toBe(1);
  });

  it('fault hook: partition cuts the link and refuses it until heal', async () => {
    const a = makeNode('a', { faults: true });
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl], faults: true });
    await b.node.start();
    await until(() => a.node.peers().length === 1);
    a.node.partition(['b']);
    await until(() => a.node.peers().length === 0 && b.node.peers().length === 0);
    await sleep(500);
    expect(a.node.peers()).toHaveLength(0);
    a.node.heal();
    await until(() => a.node.peers().length === 1 && b.node.peers().length === 1);
  });

  it('fault hook: delays every batch to a peer, keeping order', async () => {
    const a = makeNode('a');
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl], faults: true });
    await b.node.start();
    await until(() => b.node.peers().length === 1);
    b.node.faults.delayMs.set('a', 300);
    const aId = b.node.peers()[0]!.serverId;
    const sentAt = Date.now();
    for (let i = 0; i < 5; i++) {
      b.node.send(aId, { msg: { subject: 'd', reply: '', message: Buffer.from(String(i)), headerBytes: -1, queues: [], route: '' } });
      await sleep(5);
    }
    await until(() => a.rec.messages.length === 5);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(300);
    expect(a.rec.messages.map((m) => Buffer.from(m.msg.message).toString())).toEqual(['0', '1', '2', '3', '4']);
  });

  it('fault hook: drops routed frames at the configured rate only when enabled', async () => {
    const a = makeNode('a', { faults: true });
    await a.node.start();
    const b = makeNode('b', { routes: [a.node.clusterUrl] });
    await b.node.start();
    await until(() => b.node.peers().length === 1);
    a.node.faults.dropRate.set('b', 1);
    const aId = b.node.peers()[0]!.serverId;
    for (let i = 0; i < 50; i++) b.node.send(aId, { msg: { subject: 's', reply: '', message: Buffer.from('x'), headerBytes: -1, queues: [], route: '' } });
    await sleep(200);
    expect(a.rec.messages).toHaveLength(0);
    a.node.faults.dropRate.clear();
    b.node.send(aId, { msg: { subject: 's', reply: '', message: Buffer.from('y'), headerBytes: -1, queues: [], route: '' } });
    await until(() => a.rec.messages.length === 1);
    // Rules on a node started without faults are never consulted.
    b.node.faults.dropRate.set('a', 1);
    b.node.partition(['a']);
    expect(b.node.peers()).toHaveLength(1);
  });
});
