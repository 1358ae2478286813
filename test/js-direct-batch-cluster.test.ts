// DIRECT.GET batches on an R3 stream: every node's clients get the whole batch and multi_last answer from
// the replica that answers (Flotilla: the stream leader). nats-server 2.9.10 has no
// batch direct get (2.10 added it): expected values are nats-server v2.14.5's, and against 2.9.10
// (E2E_SERVER=nats-server) every replica's single-message answer to a batch request is checked instead.
import { describe, it, expect } from 'vitest';
import { connect as connectV3, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { publishRetrying } from './helpers/js-cluster-publisher.js';
import { directReplies } from './helpers/direct-batch-replies.js';

let cluster: JsCluster;
const NAMES = ['n1', 'n2', 'n3'];
const COUNT = 600;

useJsCluster({ size: 3, clusterName: 'DGET' }, (c) => (cluster = c));

async function v3(name: string): Promise<NatsConnection> {
  const nc = await connectV3({ servers: cluster.node(name).url, reconnect: false });
  // The client gates batch direct gets on a 2.11 server: Flotilla's own INFO (2.11.0) turns them on.
  return nc;
}

async function all(it: AsyncIterable<StoredMsg>): Promise<StoredMsg[]> {
  const out: StoredMsg[] = [];
  for await (const m of it) out.push(m);
  return out;
}

describe('DIRECT.GET batches on R3', () => {
  it('every node serves getBatch and getLastMessagesFor', async () => {
    const { jsm, js } = await cluster.client('n1');
    await addStream(jsm, { name: 'DB', subjects: ['db.>'], num_replicas: 3, allow_direct: true });
    for (let i = 1; i <= COUNT; i++) await publishRetrying(js, `db.${i % 3}`, `v${i}`, `db-${i}`);
    await cluster.waitForReplicasCurrent(jsm, 'DB', 3);

    const expectBatch = async (name: string): Promise<void> => {
      const nc = await v3(name);
      if (AGAINST_NATS_SERVER) {
        const one = await directReplies(nc, '$JS.API.DIRECT.GET.DB', { seq: 1, batch: COUNT }, { single: true });
        expect(one.map((x) => [x.data, x.headers['Nats-Num-Pending']])).toEqual([['v1', undefined]]);
        return nc.close();
      }
      // checkAPI off: the killed node may have led the meta group too, and a direct get needs no meta leader.
      const jsm3 = await jetstreamManager(nc, { checkAPI: false, timeout: 10_000 });
      const msgs = await all(await jsm3.direct.getBatch('DB', { seq: 1, batch: COUNT }));
      expect({ name, n: msgs.length, first: msgs[0]?.seq, last: msgs[COUNT - 1]?.seq }).toEqual({ name, n: COUNT, first: 1, last: COUNT });
      expect(msgs.every((m, i) => m.string() === `v${i + 1}` && m.pending === COUNT - 1 - i)).toBe(true);
      const last = await all(await jsm3.direct.getLastMessagesFor('DB', { multi_last: ['db.*'] }));
      expect(last.map((m) => [m.subject, m.seq])).toEqual([['db.1', COUNT - 2], ['db.2', COUNT - 1], ['db.0', COUNT]]);
      const eob = await directReplies(nc, '$JS.API.DIRECT.GET.DB', { seq: COUNT - 1, batch: 5 });
      expect(eob.map((x) => x.code)).toEqual([0, 0, 204]);
      expect(eob[2]!.headers).toMatchObject({ 'Nats-Num-Pending': '0', 'Nats-Last-Sequence': `${COUNT}` });
      await nc.close();
    };
    // Through every node's clients. (Flotilla answers direct gets from the stream leader only: followers commit
    // lazily, stream-replica.ts; nats-server's followers answer too, with the leader down.)
    for (const name of NAMES) await expectBatch(name);
  });
});
