// Cross-account JetStream on one node with the stock client: account A has JetStream and exports its API,
// its acks, a publish subject and a deliver subject; account B (no JetStream of its own) imports the API
// under a prefix and uses A's streams through the client's `apiPrefix`: stream info, publishes with their
// PubAcks, pull consumers (batches come back through the reply mapping) with acks, and a push consumer
// whose deliver subject B imports. With E2E_SERVER=nats-server the same runs against nats-server.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AckPolicy, connect, StringCodec, type NatsConnection } from 'nats';
import { connect as connectV3 } from '@nats-io/transport-node';
import { jetstream as jetstreamV3, jetstreamManager as jetstreamManagerV3 } from '@nats-io/jetstream';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { ackingSubscriber, crossAccountsBlock, fetchAcked } from './helpers/cross-account-jetstream.js';

const sc = StringCodec();
const { conns, dir, serverWith } = useConfServers('js-cross', { expectCleanExit: true });
let server: FlotillaProcess;
let a: NatsConnection;
let b: NatsConnection;

beforeAll(async () => {
  server = await serverWith(`jetstream { store_dir: "${join(dir, 'store')}" }\n${crossAccountsBlock(['orders.>'])}`);
  a = await connect({ servers: server.url, reconnect: false, user: 'a', pass: 'a' });
  b = await connect({ servers: server.url, reconnect: false, user: 'b', pass: 'b' });
  conns.push(a, b);
  const jsm = await a.jetstreamManager();
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
});

describe('cross-account JetStream through an import of $JS.API.> with a prefix', () => {
  it('B reads A’s stream and publishes into it with the stock client’s apiPrefix', async () => {
    const jsm = await b.jetstreamManager({ apiPrefix: 'JS.A.API' });
    const js = b.jetstream({ apiPrefix: 'JS.A.API' });
    const ack = await js.publish('orders.new', sc.encode('from b'));
    expect([ack.stream, ack.seq]).toEqual(['ORDERS', 1]);
    await a.jetstream().publish('orders.new', sc.encode('from a'));
    const info = await jsm.streams.info('ORDERS');
    expect(info.state.messages).toBe(2);
    expect((await jsm.streams.names().next()).includes('ORDERS')).toBe(true);
    // B's own $JS.API is not A's: B has no JetStream.
    const own = await b.request('$JS.API.INFO', sc.encode(''), { timeout: 2000 });
    expect(JSON.parse(sc.decode(own.data)).error.err_code).toBe(10039);
  });

  it('a pull consumer of A’s stream, fetched from B: the whole batch comes back, and B’s acks reach A', async () => {
    const jsmA = await a.jetstreamManager();
    for (let i = 0; i < 5; i++) await a.jetstream().publish('orders.pull', sc.encode(`p${i}`));
    await jsmA.consumers.add('ORDERS', { durable_name: 'pull', ack_policy: AckPolicy.Explicit, filter_subject: 'orders.pull' });
    const js = b.jetstream({ apiPrefix: 'JS.A.API' });
    const got = await fetchAcked(js, 'ORDERS', 'pull', 5, 2000);
    expect(got).toEqual(['orders.pull:p0', 'orders.pull:p1', 'orders.pull:p2', 'orders.pull:p3', 'orders.pull:p4']);
    await b.flush();
    await sleep(200);
    const ci = await jsmA.consumers.info('ORDERS', 'pull');
    expect([ci.num_ack_pending, ci.ack_floor.stream_seq, ci.num_pending]).toEqual([0, 7, 0]);
  });

  it('a push consumer of A delivers to a subject B imports; B sees the stored subject and acks', async () => {
    const jsmA = await a.jetstreamManager();
    await jsmA.consumers.add('ORDERS', {
      durable_name: 'push',
      ack_policy: AckPolicy.Explicit,
      deliver_subject: 'deliver.b',
      filter_subject: 'orders.push',
    });
    const pushed = ackingSubscriber(b, 'deliver.b');
    await b.flush();
    for (let i = 0; i < 3; i++) await a.jetstream().publish('orders.push', sc.encode(`q${i}`));
    expect(await pushed.until(3, 5000)).toEqual(['orders.push:q0', 'orders.push:q1', 'orders.push:q2']);
    await sleep(200);
    const ci = await jsmA.consumers.info('ORDERS', 'push');
    expect([ci.num_ack_pending, ci.delivered.consumer_seq]).toEqual([0, 3]);
    pushed.sub.unsubscribe();
  });

  it('the modular 3.x client in B: publish, consumers.get and fetch with acks through the prefix', async () => {
    const nc = await connectV3({ servers: server.url, reconnect: false, user: 'b', pass: 'b' });
    try {
      const js = jetstreamV3(nc, { apiPrefix: 'JS.A.API' });
      const jsm = await jetstreamManagerV3(nc, { apiPrefix: 'JS.A.API' });
      for (let i = 0; i < 3; i++) expect((await js.publish('orders.v3', sc.encode(`v${i}`))).stream).toBe('ORDERS');
      await jsm.consumers.add('ORDERS', { durable_name: 'v3', ack_policy: AckPolicy.Explicit, filter_subject: 'orders.v3' });
      const c = await js.consumers.get('ORDERS', 'v3');
      const got: string[] = [];
      for await (const m of await c.fetch({ max_messages: 3, expires: 2000 })) {
        got.push(`${m.subject}:${sc.decode(m.data)}`);
        m.ack();
      }
      expect(got).toEqual(['orders.v3:v0', 'orders.v3:v1', 'orders.v3:v2']);
      await nc.flush();
      await sleep(200);
      expect((await jsm.consumers.info('ORDERS', 'v3')).num_ack_pending).toBe(0);
    } finally {
      await nc.close();
    }
  });
});
