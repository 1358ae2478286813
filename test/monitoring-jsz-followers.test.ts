// /jsz?consumers=true on every node of a three-node cluster lists an R3 stream's consumers, followers
// included (nats-server's followers report the consumers they replicate; 2.9.10 with sequences 0 there): the same name, config and
// delivered / ack floor sequences on the leader and on both followers once the state has replicated, and
// the stream state's consumer_count. Through the stock `nats` client; E2E_SERVER=nats-server runs it on 2.9.10.
import { describe, it, expect } from 'vitest';
import { AckPolicy } from 'nats';
import { AGAINST_NATS_SERVER, JsCluster, addStream, useJsCluster } from './helpers/js-cluster.js';
import { until } from './helpers/until.js';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'JSZF' }, (c) => (cluster = c));

type Jsz = { account_details?: Array<{ stream_detail?: Array<{ name: string; state: { consumer_count: number }; consumer_detail?: any[] }> }> };
const detailOf = async (node: string): Promise<{ state: { consumer_count: number }; consumer_detail?: any[] } | undefined> => {
  const jsz = (await (await fetch(`http://127.0.0.1:${cluster.node(node).httpPort}/jsz?consumers=true&config=true`)).json()) as Jsz;
  return jsz.account_details?.flatMap((a) => a.stream_detail ?? []).find((s) => s.name === 'JF');
};

describe('/jsz consumers on followers', () => {
  it('lists the consumer with its replicated state on every node', async () => {
    const { jsm, js } = await cluster.client('n1');
    await addStream(jsm, { name: 'JF', subjects: ['jf.>'], num_replicas: 3 });
    await jsm.consumers.add('JF', { durable_name: 'W', ack_policy: AckPolicy.Explicit, filter_subject: 'jf.a' });
    for (let i = 0; i < 6; i++) await js.publish(i % 2 === 0 ? 'jf.a' : 'jf.b', 'x');
    const c = await js.consumers.get('JF', 'W');
    const batch = await c.fetch({ max_messages: 2, expires: 5000 });
    for await (const m of batch) {
      await m.ackAck();
      if (m.info.streamSequence === 3) break;
    }
    for (const node of ['n1', 'n2', 'n3']) {
      const d = await until(async () => {
        const s = await detailOf(node);
        const w = s?.consumer_detail?.find((x) => x.name === 'W');
        // 2.9.10's followers list the consumer but report its sequences as 0 (their copy is not refreshed for
        // /jsz); Flotilla's report the replicated state, as 2.14's consumer info on followers does.
        const replicated = AGAINST_NATS_SERVER || (w?.delivered.stream_seq === 3 && w?.ack_floor.stream_seq === 3);
        return w !== undefined && replicated ? { s: s!, w } : null;
      }, 30_000, `consumer W replicated on ${node}`);
      expect(d.s.state.consumer_count, node).toBe(1);
      expect(d.w.stream_name).toBe('JF');
      expect(d.w.config.durable_name).toBe('W');
      expect(d.w.config.filter_subject).toBe('jf.a');
      if (AGAINST_NATS_SERVER) continue;
      expect(d.w.delivered.consumer_seq, node).toBe(2);
      expect(d.w.ack_floor.consumer_seq, node).toBe(2);
      expect(d.w.num_ack_pending, node).toBe(0);
      // jf.a holds seqs 1, 3, 5: one left after stream seq 3.
      expect(d.w.num_pending, node).toBe(1);
    }
  }, 120_000);
});
