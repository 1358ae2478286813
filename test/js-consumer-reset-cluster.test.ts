// Consumer reset (2.14) on an R3 consumer through the stock @nats-io/jetstream 3.4.0 client: the reset state
// is replicated through the stream's Raft group (2.14 proposes it in the consumer's group), so after a kill -9
// of the leader the new leader delivers from the reset position. nats-server 2.9.10 predates reset: Flotilla
// only; expected values are nats-server 2.14.5's (consumer.go resetStartingSeqLocked, resetLocalStartingSeq).
import { describe, it, expect } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { claimServerVersion } from './helpers/jetstream-v3-server.js';

const dec = new TextDecoder();
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'RESET' }, (c) => (cluster = c));

describe.skipIf(AGAINST_NATS_SERVER)('consumer reset on an R3 consumer', () => {
  it('the reset position survives a kill of the leader', async () => {
    const admin = await cluster.connect('n1');
    const adminJsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(adminJsm, { name: 'RS', subjects: ['rs.>'], num_replicas: 3 });
    const leader = (await cluster.waitForReplicasCurrent(adminJsm, 'RS', 3)).cluster!.leader!;
    const survivor = cluster.nodes.find((n) => n.name !== leader)!;
    const nc: NatsConnection = await connect({ servers: survivor.url, reconnect: false });
    claimServerVersion(nc, '2.14.0');
    try {
      const jsm = await jetstreamManager(nc, { timeout: 10_000 });
      const js = jetstream(nc, { timeout: 10_000 });
      await jsm.consumers.add('RS', { durable_name: 'RW', ack_policy: AckPolicy.Explicit, num_replicas: 3 });
      for (let i = 1; i <= 6; i++) await js.publish('rs.a', `s-${i}`);
      const c = await js.consumers.get('RS', 'RW');
      const fetchAll = async (n: number): Promise<JsMsg[]> => {
        const out: JsMsg[] = [];
        for (let round = 0; round < 5 && out.length < n; round++) {
          for await (const m of await c.fetch({ max_messages: n - out.length, expires: 2000 })) out.push(m);
        }
        return out;
      };
      const first = await fetchAll(6);
      for (const m of first) await m.ackAck();
      const r = (await jsm.consumers.reset('RS', 'RW', 3)) as unknown as { reset_seq: number; delivered: unknown; ack_floor: unknown };
      expect(r.reset_seq).toBe(3);
      expect(r.delivered).toEqual({ consumer_seq: 0, stream_seq: 2 });
      expect(r.ack_floor).toEqual({ consumer_seq: 0, stream_seq: 2 });

      for (let i = 0; i < 50; i++) {
        const info = await jsm.consumers.info('RS', 'RW');
        if ((info.cluster?.replicas ?? []).every((x) => x.current)) break;
        await sleep(100);
      }
      await cluster.kill(leader);
      const survivorJsm = await (await cluster.connect(survivor.name)).jetstreamManager({ checkAPI: false, timeout: 10_000 });
      const newLeader = await cluster.waitForStreamLeader(survivorJsm, 'RS', { not: leader });
      let info = await jsm.consumers.info('RS', 'RW');
      for (let i = 0; i < 50 && info.cluster?.leader !== newLeader; i++) {
        await sleep(100);
        info = await jsm.consumers.info('RS', 'RW');
      }
      expect(info.cluster?.leader).toBe(newLeader);
      expect(info.delivered).toMatchObject({ consumer_seq: 0, stream_seq: 2 });
      expect(info.num_pending).toBe(4);
      const again = await fetchAll(4);
      expect(again.map((m) => dec.decode(m.data))).toEqual(['s-3', 's-4', 's-5', 's-6']);
      expect(again.map((m) => m.info.deliverySequence)).toEqual([1, 2, 3, 4]);
    } finally {
      await nc.close().catch(() => undefined);
      await cluster.restart(leader);
    }
  }, 60_000);
});
