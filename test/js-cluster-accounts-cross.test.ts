// Cross-account JetStream across three real nodes with the stock client: account A has JetStream and
// exports its API, acks, a publish subject and a deliver subject; account B (no JetStream) imports them and,
// connected to a node that leads neither A's stream nor holds its only replica, uses A's streams through
// `apiPrefix`: stream info, publishes with PubAcks, a pull consumer's batch with acks, a push consumer. An R3
// stream of A keeps serving B after its leader is stopped. Also against nats-server 2.9.10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, StringCodec, type NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { AccountsCluster, NODE_NAMES, apiSettled, errorOf, fileStream } from './helpers/accounts-cluster.js';
import { ackingSubscriber, crossAccountsBlock, fetchAcked } from './helpers/cross-account-jetstream.js';

const sc = StringCodec();
let cluster: AccountsCluster;

beforeAll(async () => {
  cluster = await AccountsCluster.start('JSCROSS', crossAccountsBlock(['orders.>', 'events.>']));
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

async function leaderOf(nc: NatsConnection, stream: string): Promise<string> {
  for (const deadline = Date.now() + 30_000; ; await sleep(250)) {
    const leader = ((await apiSettled(nc, `$JS.API.STREAM.INFO.${stream}`))['cluster'] as { leader?: string }).leader;
    if (leader !== undefined) return leader;
    if (Date.now() > deadline) throw new Error(`${stream}: no leader`);
  }
}

describe('cross-account JetStream in a cluster, through an import of $JS.API.> with a prefix', () => {
  it('B on a node without A’s R1 stream: info, publish, pull fetch with acks, push delivery', async () => {
    const a = await cluster.login('n1', 'a');
    expect(errorOf(await apiSettled(a, '$JS.API.STREAM.CREATE.ORDERS', fileStream('ORDERS', 1)))).toBeUndefined();
    const home = await leaderOf(a, 'ORDERS');
    const elsewhere = NODE_NAMES.find((n) => n !== home)!;
    const b = await cluster.login(elsewhere, 'b');
    const jsm = await b.jetstreamManager({ apiPrefix: 'JS.A.API' });
    const js = b.jetstream({ apiPrefix: 'JS.A.API' });
    const ack = await js.publish('orders.new', sc.encode('from b'));
    expect([ack.stream, ack.seq]).toEqual(['ORDERS', 1]);
    const info = await jsm.streams.info('ORDERS');
    expect([info.state.messages, info.cluster?.leader]).toEqual([1, home]);

    for (let i = 0; i < 5; i++) await js.publish('orders.pull', sc.encode(`p${i}`));
    await jsm.consumers.add('ORDERS', { durable_name: 'pull', ack_policy: AckPolicy.Explicit, filter_subject: 'orders.pull' });
    const got = await fetchAcked(js, 'ORDERS', 'pull', 5, 3000);
    expect(got).toEqual(['orders.pull:p0', 'orders.pull:p1', 'orders.pull:p2', 'orders.pull:p3', 'orders.pull:p4']);
    await b.flush();
    for (const deadline = Date.now() + 5_000; ; await sleep(100)) {
      const ci = await jsm.consumers.info('ORDERS', 'pull');
      if (ci.num_ack_pending === 0 || Date.now() > deadline) {
        expect([ci.num_ack_pending, ci.ack_floor.stream_seq, ci.num_pending]).toEqual([0, 6, 0]);
        break;
      }
    }

    await jsm.consumers.add('ORDERS', { durable_name: 'push', ack_policy: AckPolicy.Explicit, deliver_subject: 'deliver.b', filter_subject: 'orders.push' });
    const pushed = ackingSubscriber(b, 'deliver.b');
    await b.flush();
    await sleep(500); // the interest reaches the consumer's node
    for (let i = 0; i < 3; i++) await js.publish('orders.push', sc.encode(`q${i}`));
    expect(await pushed.until(3, 10_000)).toEqual(['orders.push:q0', 'orders.push:q1', 'orders.push:q2']);
    pushed.sub.unsubscribe();
  }, 120_000);

  it('an R3 stream of A serves B from a follower’s node, and again after its leader is stopped', async () => {
    const a = await cluster.login('n2', 'a');
    expect(errorOf(await apiSettled(a, '$JS.API.STREAM.CREATE.EVENTS', fileStream('EVENTS', 3)))).toBeUndefined();
    const leader = await leaderOf(a, 'EVENTS');
    const follower = NODE_NAMES.find((n) => n !== leader)!;
    const b = await cluster.login(follower, 'b');
    const js = b.jetstream({ apiPrefix: 'JS.A.API' });
    const jsm = await b.jetstreamManager({ apiPrefix: 'JS.A.API' });
    for (let i = 0; i < 3; i++) expect((await js.publish('events.x', sc.encode(`e${i}`))).seq).toBe(i + 1);
    await cluster.stop(leader);
    // A new leader among the two left; B's requests on the same connection reach it.
    for (const deadline = Date.now() + 60_000; ; await sleep(250)) {
      const now = ((await apiSettled(b, 'JS.A.API.STREAM.INFO.EVENTS'))['cluster'] as { leader?: string }).leader;
      if (now !== undefined && now !== leader) break;
      if (Date.now() > deadline) throw new Error('no new leader');
    }
    expect((await js.publish('events.x', sc.encode('e3'))).seq).toBe(4);
    expect((await jsm.streams.info('EVENTS')).state.messages).toBe(4);
    const m = await jsm.streams.getMessage('EVENTS', { seq: 2 });
    expect([m.subject, sc.decode(m.data)]).toEqual(['events.x', 'e1']);
    await cluster.restart(leader);
  }, 120_000);
});
