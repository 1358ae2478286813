// Accounts across a cluster of three real nodes built from one config, with the stock client: each account
// keeps its own subject space on every node (interest and messages carry their account over the links),
// stream and service imports work when publisher, responder and subscriber sit on different nodes, and
// queue groups of the same name in two accounts are two groups. With E2E_SERVER=nats-server the same cases
// run against a nats-server cluster to show that they are its behaviour.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createInbox, ErrorCode, StringCodec, type NatsConnection, type Subscription } from 'nats';
import { awaitInterest, startNode, stopAll, waitForMesh, type ClusterNodeProcess } from './helpers/cluster-process.js';
import { sleep } from './helpers/flotilla-process.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const sc = StringCodec();
const dir = mkdtempSync(join(tmpdir(), 'flotilla-cluster-accounts-'));
const conns: NatsConnection[] = [];
let nodes: ClusterNodeProcess[] = [];

const CONF = `
authorization { users: [ { user: g, password: g } ] }
accounts {
  A: {
    users: [ { user: a, password: a } ]
    exports: [
      { stream: "public.>" }
      { service: "help.>" }
      { service: "feed", response_type: stream }
      { service: "once" }
      { service: "work" }
    ]
  }
  B: {
    users: [ { user: b, password: b } ]
    imports: [
      { stream: { account: A, subject: "public.>" }, prefix: "fromA" }
      { service: { account: A, subject: "help.billing" }, to: "billing" }
      { service: { account: A, subject: "feed" } }
      { service: { account: A, subject: "once" } }
      { service: { account: A, subject: "work" } }
    ]
  }
  C: {
    users: [ { user: c, password: c } ]
    imports: [ { stream: { account: A, subject: "public.news" } } ]
  }
}`;

const USERS = { a: 'a', b: 'b', c: 'c', g: 'g' } as const;

beforeAll(async () => {
  const conf = join(dir, 'accounts.conf');
  writeFileSync(conf, `${CONF}\n`);
  const natsServer = AGAINST_NATS_SERVER;
  const first = await startNode({ name: 'n1', clusterName: 'acc', extraArgs: ['-c', conf], natsServer });
  nodes = [first];
  const seed = `127.0.0.1:${first.clusterPort}`;
  const rest = await Promise.allSettled(
    ['n2', 'n3'].map((name) => startNode({ name, clusterName: 'acc', routes: [seed], extraArgs: ['-c', conf], natsServer })),
  );
  for (const r of rest) if (r.status === 'fulfilled') nodes.push(r.value);
  const failed = rest.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await waitForMesh(nodes);
}, 60_000);

afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
  await stopAll(nodes);
  rmSync(dir, { recursive: true, force: true });
});

/** A connection to node `n` (1-based) as user `u` (the user's name is its password). */
async function on(n: number, u: keyof typeof USERS): Promise<NatsConnection> {
  const nc = await connect({ servers: nodes[n - 1]!.url, user: u, pass: USERS[u], reconnect: false });
  conns.push(nc);
  return nc;
}

/** What a subscription received within a short wait, without the probes awaitInterest sent. */
async function drain(sub: Subscription, waitMs = 200): Promise<string[]> {
  await sleep(waitMs);
  const got: string[] = [];
  sub.unsubscribe();
  for await (const m of sub) if (!m.subject.startsWith('_probe.')) got.push(`${m.subject}:${sc.decode(m.data)}`);
  return got;
}

describe('accounts across the cluster: isolated subject spaces', () => {
  it('a subscriber on > in B (or $G) on node 2 sees nothing of A published on node 1; each account gets its own', async () => {
    const [a1, b1, g1, a2, b2, g2] = await Promise.all([on(1, 'a'), on(1, 'b'), on(1, 'g'), on(2, 'a'), on(2, 'b'), on(2, 'g')]);
    const inA = a2.subscribe('>');
    const inB = b2.subscribe('>');
    const inG = g2.subscribe('>');
    // Each account's interest on node 2 has reached node 1 (its probe went through node 1 in that account).
    await Promise.all([awaitInterest(a2, [a1]), awaitInterest(b2, [b1]), awaitInterest(g2, [g1])]);
    a1.publish('orders.new', sc.encode('from A'));
    a1.publish('_INBOX.x', sc.encode('inbox of A'));
    b1.publish('orders.new', sc.encode('from B'));
    g1.publish('orders.new', sc.encode('from G'));
    await Promise.all([a1.flush(), b1.flush(), g1.flush()]);
    expect(await drain(inA)).toEqual(['orders.new:from A', '_INBOX.x:inbox of A']);
    expect(await drain(inB, 0)).toEqual(['orders.new:from B']);
    expect(await drain(inG, 0)).toEqual(['orders.new:from G']);
  });

  it('a request in B finds no responder of A on another node: no responders rather than an answer from A', async () => {
    const [a3, a1, b1] = await Promise.all([on(3, 'a'), on(1, 'a'), on(1, 'b')]);
    a3.subscribe('svc.iso', { callback: (_e, m) => m.respond(sc.encode('from A')) });
    await awaitInterest(a3, [a1]);
    const outcome = await b1.request('svc.iso', sc.encode('q'), { timeout: 2000 }).then(
      (m) => `answered: ${sc.decode(m.data)}`,
      (e: { code?: string }) => e.code,
    );
    expect(outcome).toBe(ErrorCode.NoResponders);
  });
});

describe('accounts across the cluster: stream imports', () => {
  it('A publishes on node 1; B on nodes 2 and 3 gets public.> under its prefix, C on node 3 its subject, each once', async () => {
    const [a1, b1, c1, b2, b3, c3] = await Promise.all([on(1, 'a'), on(1, 'b'), on(1, 'c'), on(2, 'b'), on(3, 'b'), on(3, 'c')]);
    const inB2 = b2.subscribe('>');
    const inB3 = b3.subscribe('>');
    const inC3 = c3.subscribe('>');
    await Promise.all([awaitInterest(b2, [b1]), awaitInterest(b3, [b1]), awaitInterest(c3, [c1])]);
    a1.publish('public.news', sc.encode('n'));
    a1.publish('public.weather.today', sc.encode('w'));
    a1.publish('unexported', sc.encode('u'));
    await a1.flush();
    const expected = ['fromA.public.news:n', 'fromA.public.weather.today:w'];
    expect((await drain(inB2)).sort()).toEqual(expected);
    expect((await drain(inB3, 0)).sort()).toEqual(expected);
    expect(await drain(inC3, 0)).toEqual(['public.news:n']);
  });

  it('what B publishes on node 2 under the imported names never reaches A on node 1', async () => {
    const [a1, a2, b2] = await Promise.all([on(1, 'a'), on(2, 'a'), on(2, 'b')]);
    const inA = a1.subscribe('>');
    await awaitInterest(a1, [a2]);
    b2.publish('public.news', sc.encode('from B'));
    b2.publish('fromA.public.news', sc.encode('from B'));
    await b2.flush();
    expect(await drain(inA)).toEqual([]);
  });
});

describe('accounts across the cluster: service imports', () => {
  it('a request in B on node 1 reaches the responder of A on node 3 under the exported name; the reply crosses back', async () => {
    const [a1, a3, b1] = await Promise.all([on(1, 'a'), on(3, 'a'), on(1, 'b')]);
    const seenReplies: string[] = [];
    a3.subscribe('help.>', {
      callback: (_e, m) => {
        seenReplies.push(m.reply ?? '');
        m.respond(sc.encode(`${m.subject} answered ${sc.decode(m.data)}`));
      },
    });
    await awaitInterest(a3, [a1]);
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) answers.push(sc.decode((await b1.request('billing', sc.encode(`q${i}`), { timeout: 5000 })).data));
    expect(answers).toEqual(['help.billing answered q0', 'help.billing answered q1', 'help.billing answered q2']);
    // The responder never sees the requester's inbox, only a reply subject of its own account.
    expect(seenReplies).toHaveLength(3);
    for (const r of seenReplies) expect(r.startsWith('_R_.')).toBe(true);
  });

  it('a stream response type: every answer of the responder on node 2 reaches the requester on node 3', async () => {
    const [a2, a3, b3] = await Promise.all([on(2, 'a'), on(3, 'a'), on(3, 'b')]);
    a2.subscribe('feed', {
      callback: (_e, m) => {
        for (let i = 1; i <= 3; i++) m.respond(sc.encode(`part ${i}`));
      },
    });
    await awaitInterest(a2, [a3]);
    const inbox = createInbox();
    const replies = b3.subscribe(inbox);
    await b3.flush();
    b3.publish('feed', sc.encode('go'), { reply: inbox });
    await b3.flush();
    expect(await drain(replies, 500)).toEqual([`${inbox}:part 1`, `${inbox}:part 2`, `${inbox}:part 3`]);
  });
});

describe('accounts across the cluster: service imports, continued', () => {
  it('a singleton service answers once, even when the responder on another node answers twice', async () => {
    const [a1, a2, b1] = await Promise.all([on(1, 'a'), on(2, 'a'), on(1, 'b')]);
    a2.subscribe('once', {
      callback: (_e, m) => {
        m.respond(sc.encode('first'));
        m.respond(sc.encode('second'));
      },
    });
    await awaitInterest(a2, [a1]);
    const inbox = createInbox();
    const replies = b1.subscribe(inbox);
    await b1.flush();
    b1.publish('once', sc.encode('q'), { reply: inbox });
    await b1.flush();
    expect(await drain(replies, 500)).toEqual([`${inbox}:first`]);
  });

  it('responders of A in one queue group on nodes 2 and 3 answer each request of B on node 1 once', async () => {
    const [a1, a2, a3, b1] = await Promise.all([on(1, 'a'), on(2, 'a'), on(3, 'a'), on(1, 'b')]);
    const servedBy = { n2: 0, n3: 0 };
    for (const [nc, node] of [[a2, 'n2'], [a3, 'n3']] as const) {
      nc.subscribe('work', {
        queue: 'svc',
        callback: (_e, m) => {
          servedBy[node]++;
          m.respond(sc.encode(`${node}:${sc.decode(m.data)}`));
        },
      });
    }
    await Promise.all([awaitInterest(a2, [a1]), awaitInterest(a3, [a1])]);
    const count = 60;
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => b1.request('work', sc.encode(String(i)), { timeout: 5000 }).then((m) => sc.decode(m.data))),
    );
    expect(answers.map((a) => Number(a.split(':')[1]))).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(servedBy.n2 + servedBy.n3).toBe(count);
    // 60 draws between two nodes: a share below 10 is more than 5 standard deviations away.
    expect(servedBy.n2).toBeGreaterThanOrEqual(10);
    expect(servedBy.n3).toBeGreaterThanOrEqual(10);
  });
});

describe('accounts across the cluster: queue groups', () => {
  it('a queue group of one name in A and in B, members on nodes 2 and 3: each account serves its own messages once', async () => {
    const [a1, b1, a2, a3, b2, b3] = await Promise.all([on(1, 'a'), on(1, 'b'), on(2, 'a'), on(3, 'a'), on(2, 'b'), on(3, 'b')]);
    const got = { a2: [] as string[], a3: [] as string[], b2: [] as string[], b3: [] as string[] };
    const member = (nc: NatsConnection, into: string[]) => nc.subscribe('jobs', { queue: 'workers', callback: (_e, m) => into.push(sc.decode(m.data)) });
    member(a2, got.a2);
    member(a3, got.a3);
    member(b2, got.b2);
    member(b3, got.b3);
    await Promise.all([awaitInterest(a2, [a1]), awaitInterest(a3, [a1]), awaitInterest(b2, [b1]), awaitInterest(b3, [b1])]);
    const countA = 200;
    for (let i = 0; i < countA; i++) a1.publish('jobs', sc.encode(`a${i}`));
    await a1.flush();
    const deadline = Date.now() + 5000;
    while (got.a2.length + got.a3.length < countA && Date.now() < deadline) await sleep(20);
    await sleep(100);
    const servedA = [...got.a2, ...got.a3];
    expect(servedA).toHaveLength(countA);
    expect(new Set(servedA).size).toBe(countA);
    // 200 draws between two nodes: a share below 50 is 7 standard deviations away.
    expect(got.a2.length).toBeGreaterThanOrEqual(50);
    expect(got.a3.length).toBeGreaterThanOrEqual(50);
    expect(got.b2.length + got.b3.length).toBe(0);

    const countB = 100;
    for (let i = 0; i < countB; i++) b1.publish('jobs', sc.encode(`b${i}`));
    await b1.flush();
    while (got.b2.length + got.b3.length < countB && Date.now() < deadline + 5000) await sleep(20);
    await sleep(100);
    const servedB = [...got.b2, ...got.b3];
    expect(servedB).toHaveLength(countB);
    expect(new Set(servedB).size).toBe(countB);
    expect(servedA).toHaveLength(countA);
    expect(got.a2.length + got.a3.length).toBe(countA);
  });
});

describe('accounts across the cluster: a node that comes back', () => {
  it("gets every account's interest in the sync when its link comes up, each in its own account", async () => {
    const [a1, b1] = await Promise.all([on(1, 'a'), on(1, 'b')]);
    const got = { a: [] as string[], b: [] as string[] };
    a1.subscribe('back.>', { callback: (_e, m) => got.a.push(sc.decode(m.data)) });
    b1.subscribe('back.>', { callback: (_e, m) => got.b.push(sc.decode(m.data)) });
    await Promise.all([a1.flush(), b1.flush()]);
    await nodes[2]!.stop();
    const seed = `127.0.0.1:${nodes[0]!.clusterPort}`;
    nodes[2] = await startNode({ name: 'n3', clusterName: 'acc', routes: [seed], extraArgs: ['-c', join(dir, 'accounts.conf')], natsServer: AGAINST_NATS_SERVER });
    await waitForMesh(nodes);
    // No subscription changed since the link came up: node 3 knows them from the sync alone.
    const [a3, b3] = await Promise.all([on(3, 'a'), on(3, 'b')]);
    const deadline = Date.now() + 5000;
    while ((got.a.length === 0 || got.b.length === 0) && Date.now() < deadline) {
      a3.publish('back.x', sc.encode('A'));
      b3.publish('back.x', sc.encode('B'));
      await Promise.all([a3.flush(), b3.flush()]);
      await sleep(50);
    }
    await sleep(100);
    expect(got.a.length).toBeGreaterThan(0);
    expect(got.b.length).toBeGreaterThan(0);
    expect(new Set(got.a)).toEqual(new Set(['A']));
    expect(new Set(got.b)).toEqual(new Set(['B']));
  });
});
