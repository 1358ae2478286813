// Consumer pause on three nodes: an R3 consumer paused through the stock @nats-io/jetstream 3.4.0 client stays
// paused when its leader is killed (the deadline is part of the consumer's config, replicated through the
// stream's Raft group as nats-server keeps it in the consumer assignment), delivers nothing on the new
// leader, and delivers once resumed there. nats-server 2.9.10 predates pause (2.11): Flotilla only; the
// expected values are nats-server 2.14.5's (jetstream_api.go jsConsumerPauseRequest, consumer.go ConsumerInfo).
import { describe, it, expect } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';

const dec = new TextDecoder();
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'PAUSE' }, (c) => (cluster = c));

describe.skipIf(AGAINST_NATS_SERVER)('consumer pause on an R3 consumer', () => {
  it('survives a kill of its leader: still paused on the new leader, delivers once resumed', async () => {
    const admin = await cluster.connect('n1');
    const adminJsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(adminJsm, { name: 'PC', subjects: ['pc.>'], num_replicas: 3 });
    const leader = (await cluster.waitForReplicasCurrent(adminJsm, 'PC', 3)).cluster!.leader!;
    const survivor = ['n1', 'n2', 'n3'].find((n) => n !== leader)!;
    const nc: NatsConnection = await connect({ servers: cluster.node(survivor).url, reconnect: false });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 10_000 });
      const js = jetstream(nc, { timeout: 10_000 });
      const ci = await jsm.consumers.add('PC', { durable_name: 'HELD', ack_policy: AckPolicy.Explicit, num_replicas: 3 });
      expect(ci.config.num_replicas).toBe(3);
      expect(ci.cluster?.replicas?.length).toBe(2);
      for (let i = 1; i <= 5; i++) await js.publish('pc.a', `m-${i}`);
      const deadline = new Date(Date.now() + 120_000);
      const paused = await jsm.consumers.pause('PC', 'HELD', deadline);
      expect(paused.paused).toBe(true);

      // Let the replicas apply the pause before the kill (the info's replicas are current).
      for (let i = 0; i < 50; i++) {
        const info = await jsm.consumers.info('PC', 'HELD');
        if ((info.cluster?.replicas ?? []).every((r) => r.current)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const killedAt = Date.now();
      await cluster.kill(leader);
      const survivorJsm = await (await cluster.connect(survivor)).jetstreamManager({ checkAPI: false, timeout: 10_000 });
      const newLeader = await cluster.waitForStreamLeader(survivorJsm, 'PC', { not: leader });
      console.log(`stream leader ${leader} killed; new leader ${newLeader} after ${Date.now() - killedAt} ms`);

      let info = await jsm.consumers.info('PC', 'HELD');
      for (let i = 0; i < 50 && info.cluster?.leader !== newLeader; i++) {
        await new Promise((r) => setTimeout(r, 100));
        info = await jsm.consumers.info('PC', 'HELD');
      }
      expect(info.cluster?.leader).toBe(newLeader);
      expect(info.paused).toBe(true);
      expect(Date.parse(info.config.pause_until!)).toBe(deadline.getTime());
      expect(info.pause_remaining).toBeGreaterThan(60_000_000_000);
      expect(info.num_pending).toBe(5);

      const consumer = await js.consumers.get('PC', 'HELD');
      const none: string[] = [];
      for await (const m of await consumer.fetch({ max_messages: 5, expires: 1500 })) none.push(dec.decode(m.data));
      expect(none).toEqual([]);
      expect((await jsm.consumers.info('PC', 'HELD')).delivered.stream_seq).toBe(0);

      const resumed = await jsm.consumers.resume('PC', 'HELD');
      expect(resumed.paused).toBe(false);
      const got: string[] = [];
      for (let round = 0; round < 5 && got.length < 5; round++) {
        for await (const m of await consumer.fetch({ max_messages: 5 - got.length, expires: 3000 })) {
          got.push(dec.decode(m.data));
          m.ack();
        }
      }
      expect(got).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
      expect((await jsm.consumers.info('PC', 'HELD')).paused).toBeUndefined();
    } finally {
      await nc.close().catch(() => undefined);
      await cluster.restart(leader);
    }
  }, 60_000);
});
