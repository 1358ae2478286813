// STREAM.PEER.REMOVE on a three-node JetStream cluster of real processes: a non-member is refused, a
// follower of an R2 stream is removed, the free node takes its place and catches up.
// E2E_SERVER=nats-server checks the same expectations against nats-server.
import { describe, it, expect } from 'vitest';
import type { JetStreamManager, NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream, apiRequest } from './helpers/js-cluster.js';
import { publishRetrying } from './helpers/js-cluster-publisher.js';

let cluster: JsCluster;
const NAMES = ['n1', 'n2', 'n3'];

useJsCluster({ size: 3, clusterName: 'PEERS' }, (c) => (cluster = c));

async function jsmVia(name: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await cluster.connect(name);
  return { nc, jsm: await nc.jetstreamManager({ checkAPI: false, timeout: 10_000 }) };
}

describe('stream peer removal', () => {
  it('STREAM.PEER.REMOVE of a follower: answered with success, the peer leaves the group, a free node takes its place', async () => {
    const { nc, jsm } = await jsmVia('n2');
    // R2 on three nodes leaves one node free for re-placement.
    await addStream(jsm, { name: 'PAIR', subjects: ['pair.>'], num_replicas: 2 });
    const js = nc.jetstream();
    for (let i = 1; i <= 10; i++) await publishRetrying(js, 'pair.a', `p-${i}`, `p-${i}`);
    const info = await cluster.waitForReplicasCurrent(jsm, 'PAIR', 2);
    const leader = info.cluster!.leader!;
    const follower = info.cluster!.replicas![0]!.name;
    const free = NAMES.find((n) => n !== leader && n !== follower)!;

    const notMember = await apiRequest(nc, '$JS.API.STREAM.PEER.REMOVE.PAIR', { peer: free }).catch((e: Error & { api?: unknown }) => e);
    expect((notMember as { api?: unknown }).api).toMatchObject({ code: 400, err_code: 10040 });

    const removed = await apiRequest(nc, '$JS.API.STREAM.PEER.REMOVE.PAIR', { peer: follower }, 5000);
    expect(removed).toMatchObject({ type: 'io.nats.jetstream.api.v1.stream_remove_peer_response', success: true });
    // The group becomes {leader, free} and the new member catches up.
    const deadline = Date.now() + 20_000;
    let members: string[] = [];
    for (;;) {
      const i = await jsm.streams.info('PAIR').catch(() => null);
      const c = i?.cluster;
      members = c?.leader ? [c.leader, ...(c.replicas ?? []).map((r) => r.name)].sort() : [];
      if (members.join() === [leader, free].sort().join() && (c?.replicas ?? []).every((r) => r.current && !r.lag)) break;
      if (Date.now() > deadline) throw new Error(`group of PAIR never became ${leader},${free}: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(members).not.toContain(follower);
    const contents = await cluster.replicaContents('PAIR', [leader, free]);
    const expected = new Map(Array.from({ length: 10 }, (_, i) => [i + 1, `p-${i + 1}`] as const));
    for (const [name, { content }] of contents) expect([name, content]).toEqual([name, expected]);
  }, 60_000);

});
