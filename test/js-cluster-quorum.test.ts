// Quorum loss and return for an R3 stream (issue 6 item 6, seen from a client): with two of three nodes
// killed, nothing published through the survivor is acknowledged; when one comes back, publishing resumes by
// itself; once all are back every replica is identical and holds every acknowledged message exactly once.
import { describe, it, expect } from 'vitest';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { publishRetrying, replicaProblems, type AckRecord } from './helpers/js-cluster-publisher.js';

const enc = new TextEncoder();
const NAMES = ['n1', 'n2', 'n3'];

let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'QUORUM' }, (c) => (cluster = c));

describe('R3 stream without a quorum', () => {
  it('acknowledges nothing while two nodes are down, resumes by itself when one returns, converges', async () => {
    const { jsm, js } = await cluster.client('n1');
    await addStream(jsm, { name: 'QUO', subjects: ['quo.>'], num_replicas: 3 });
    await cluster.waitForReplicasCurrent(jsm, 'QUO', 3);
    const acks: AckRecord[] = [];
    const attempted: string[] = [];
    const publish = async (payload: string): Promise<void> => {
      attempted.push(payload);
      const seq = await publishRetrying(js, 'quo.a', payload, payload, 30_000);
      acks.push({ payload, seq, duplicate: false, atMs: Date.now() });
    };
    for (let i = 0; i < 10; i++) await publish(`before-${i}`);

    await Promise.all([cluster.kill('n2'), cluster.kill('n3')]);
    // Through the survivor: every attempt times out or finds no responders, none is acknowledged.
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const payload = `outage-${i}`;
      attempted.push(payload);
      try {
        const ack = await js.publish('quo.a', enc.encode(payload), { msgID: payload, timeout: 500 });
        outcomes.set(`acked seq ${ack.seq}`, 1);
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'other';
        outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
      }
    }
    console.log(`publishes without a quorum: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    expect([...outcomes.keys()].filter((k) => k.startsWith('acked'))).toEqual([]);

    // One node back: a quorum again, and the same client's retries succeed without any intervention.
    await cluster.restart('n2');
    const restartedAtMs = Date.now();
    await publish('after-0');
    console.log(`first ack ${Date.now() - restartedAtMs} ms after n2 came back`);
    for (let i = 1; i < 10; i++) await publish(`after-${i}`);

    await cluster.restart('n3');
    await cluster.waitForMetaLeader();
    const replicas = await cluster.replicaContents('QUO', NAMES, { timeoutMs: 30_000 });
    expect(replicaProblems(replicas, { acks, attempted })).toEqual([]);
    const content = [...replicas.get('n1')!.content.values()];
    expect(content.filter((p) => p.startsWith('before-') || p.startsWith('after-'))).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `before-${i}`),
      ...Array.from({ length: 10 }, (_, i) => `after-${i}`),
    ]);
  }, 120_000);
});
