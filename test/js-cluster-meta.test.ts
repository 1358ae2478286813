// Clustered JetStream's catalogue with three real processes: the meta group elects a leader, catalogue
// calls made through any node are answered once, placement refuses what the cluster cannot hold,
// META.LEADER.STEPDOWN moves the meta leader, and without a quorum every catalogue call gets 10008 promptly.
import { describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, apiRequest } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { allReplies } from './helpers/api-replies.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

let cluster: JsCluster;
/** Every reply to one request: waits up to `firstMs` for one, then `extraMs` more for any second (there must be none). */

async function metaLeaderFromJsz(): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const name = await cluster.metaLeaderName();
    if (name !== '') return name;
    await sleep(100);
  }
  return '';
}

useJsCluster({ size: 3, clusterName: 'METAC' }, (c) => (cluster = c));

describe('clustered JetStream catalogue', () => {
  it('elects one meta leader that every node reports, and answers INFO once', async () => {
    const leader = await metaLeaderFromJsz();
    expect(['n1', 'n2', 'n3']).toContain(leader);
    const nc = await cluster.connect('n2');
    const replies = await allReplies(nc, '$JS.API.INFO', '');
    expect(replies).toHaveLength(1);
    expect(replies[0]!['type']).toBe('io.nats.jetstream.api.v1.account_info_response');
    expect(replies[0]!['error']).toBeUndefined();
  });

  it('creates an R3 stream through node 1 that node 3 sees, and a publish through node 2 is acknowledged', async () => {
    const nc1 = await cluster.connect('n1');
    const created = await apiRequest(
      nc1,
      '$JS.API.STREAM.CREATE.ORDERS',
      { name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 },
      10_000,
    );
    const cl = created['cluster'] as { name: string; leader: string; replicas: Array<{ name: string }> };
    expect(cl.name).toBe('METAC');
    expect(['n1', 'n2', 'n3']).toContain(cl.leader);
    expect(cl.replicas.map((r) => r.name).sort()).toEqual(['n1', 'n2', 'n3'].filter((n) => n !== cl.leader));
    expect(created['did_create']).toBe(true);
    // `ts` is 2.10+ (StreamInfo.TimeStamp): 2.9.10 has none.
    expect(Object.keys(created).sort()).toEqual(['cluster', 'config', 'created', 'did_create', 'state', ...(AGAINST_NATS_SERVER ? [] : ['ts']), 'type']);

    const nc2 = await cluster.connect('n2');
    const js2 = nc2.jetstream();
    const ack = await js2.publish('orders.new', enc.encode('first'), { timeout: 5_000 });
    expect(ack).toMatchObject({ stream: 'ORDERS', seq: 1 });

    const nc3 = await cluster.connect('n3');
    const names = await allReplies(nc3, '$JS.API.STREAM.NAMES', '');
    expect(names).toHaveLength(1);
    expect(names[0]!['streams']).toEqual(['ORDERS']);
    const info = await allReplies(nc3, '$JS.API.STREAM.INFO.ORDERS', '');
    expect(info).toHaveLength(1);
    expect((info[0]!['state'] as { messages: number }).messages).toBe(1);
    expect((info[0]!['config'] as { num_replicas: number }).num_replicas).toBe(3);
    // LIST from the meta leader carries each stream leader's own state.
    const list = await allReplies(nc3, '$JS.API.STREAM.LIST', '');
    expect(list).toHaveLength(1);
    const listed = list[0]!['streams'] as Array<{ config: { name: string }; state: { messages: number }; cluster: { leader?: string } }>;
    expect(listed.map((x) => [x.config.name, x.state.messages, x.cluster.leader !== undefined])).toEqual([['ORDERS', 1, true]]);
  });

  it('refuses more replicas than nodes (10005) and more than five (10052)', async () => {
    const nc = await cluster.connect('n3');
    const r5 = await allReplies(nc, '$JS.API.STREAM.CREATE.BIG', JSON.stringify({ name: 'BIG', subjects: ['big'], num_replicas: 5 }));
    expect(r5).toHaveLength(1);
    expect(r5[0]!['error']).toEqual({ code: 400, err_code: 10005, description: 'no suitable peers for placement' });
    const r6 = await allReplies(nc, '$JS.API.STREAM.CREATE.HUGE', JSON.stringify({ name: 'HUGE', subjects: ['huge'], num_replicas: 6 }));
    expect(r6[0]!['error']).toEqual({ code: 500, err_code: 10052, description: 'maximum replicas is 5' });
    const unknown = await allReplies(nc, '$JS.API.STREAM.INFO.NOPE', '');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]!['error']).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
  });

  it('STREAM.UPDATE grows an R1 stream to R3 and changes its limits; the messages reach every replica', async () => {
    const nc = await cluster.connect('n2');
    const jsm = await nc.jetstreamManager();
    await apiRequest(nc, '$JS.API.STREAM.CREATE.GROW', { name: 'GROW', subjects: ['grow.>'] }, 10_000);
    const js = nc.jetstream();
    for (let i = 1; i <= 3; i++) await js.publish('grow.x', enc.encode(`g-${i}`), { timeout: 5_000 });
    const one = await jsm.streams.info('GROW');
    expect(one.cluster?.replicas ?? []).toHaveLength(0);
    const updated = await apiRequest(nc, '$JS.API.STREAM.UPDATE.GROW', { ...one.config, num_replicas: 3, max_msgs: 100 }, 10_000);
    expect(updated['type']).toBe('io.nats.jetstream.api.v1.stream_update_response');
    expect(updated['config']).toMatchObject({ num_replicas: 3, max_msgs: 100 });
    const info = await cluster.waitForReplicasCurrent(jsm, 'GROW', 3);
    expect(info.state.messages).toBe(3);
    expect(info.cluster?.replicas?.map((r) => r.name).sort()).toEqual(['n1', 'n2', 'n3'].filter((n) => n !== info.cluster?.leader));
    const tooMany = await allReplies(nc, '$JS.API.STREAM.UPDATE.GROW', JSON.stringify({ ...one.config, num_replicas: 4 }));
    expect(tooMany).toHaveLength(1);
    expect(tooMany[0]!['error']).toEqual({ code: 400, err_code: 10005, description: 'no suitable peers for placement' });
    const deleted = await apiRequest(nc, '$JS.API.STREAM.DELETE.GROW', '', 5_000);
    expect(deleted['success']).toBe(true);
    const names = await apiRequest(nc, '$JS.API.STREAM.NAMES', '', 5_000);
    expect(names['streams']).toEqual(['ORDERS']);
  });

  it('META.LEADER.STEPDOWN hands the meta leadership to another node', async () => {
    const before = await metaLeaderFromJsz();
    const nc = await cluster.connect('n1');
    const res = await apiRequest(nc, '$JS.API.META.LEADER.STEPDOWN', '', 5_000);
    expect(res).toEqual({ type: 'io.nats.jetstream.api.v1.meta_leader_stepdown_response', success: true });
    const deadline = Date.now() + 10_000;
    let after = before;
    while (Date.now() < deadline && (after === before || after === '')) {
      await sleep(100);
      after = await cluster.metaLeaderName();
    }
    expect(after).not.toBe(before);
    expect(['n1', 'n2', 'n3']).toContain(after);
    // The new leader serves the catalogue.
    await cluster.waitForMetaLeader(10_000);
    const names = await apiRequest(nc, '$JS.API.STREAM.NAMES', '', 5_000);
    expect(names['streams']).toEqual(['ORDERS']);
  });

  it('kill -9 of the meta leader: another node takes over the catalogue, and the restarted node rejoins from its log', async () => {
    const leader = await metaLeaderFromJsz();
    const other = ['n1', 'n2', 'n3'].find((n) => n !== leader)!;
    const nc = await cluster.connect(other);
    await cluster.kill(leader);
    const t0 = Date.now();
    let names: Record<string, unknown> | null = null;
    while (Date.now() - t0 < 15_000 && names === null) {
      const replies = await allReplies(nc, '$JS.API.STREAM.NAMES', '', { firstMs: 2_000, extraMs: 0 });
      if (replies[0] !== undefined && replies[0]['error'] === undefined) names = replies[0];
    }
    const takeoverMs = Date.now() - t0;
    console.log(`meta leader ${leader} killed: catalogue answered again after ${takeoverMs} ms`);
    expect(names?.['streams']).toEqual(['ORDERS']);
    // A catalogue change while it is down, which it must learn on its return.
    await apiRequest(nc, '$JS.API.STREAM.CREATE.WHILEDOWN', { name: 'WHILEDOWN', subjects: ['wd'], num_replicas: 2 }, 10_000);
    await cluster.restart(leader);
    await cluster.waitForMetaLeader(20_000);
    const back = await cluster.connect(leader);
    const info = await apiRequest(back, '$JS.API.STREAM.INFO.ORDERS', '', 10_000);
    expect((info['state'] as { messages: number }).messages).toBe(1);
    const after = await allReplies(back, '$JS.API.STREAM.NAMES', '');
    expect(after).toHaveLength(1);
    expect(after[0]!['streams']).toEqual(['ORDERS', 'WHILEDOWN']);
  });

  it('answers 10008 promptly on every catalogue call once two of three nodes are gone', async () => {
    const survivor = 'n3';
    const nc = await cluster.connect(survivor);
    await cluster.kill('n1');
    await cluster.kill('n2');
    const deadline = Date.now() + 15_000;
    let answer: Record<string, unknown> | null = null;
    while (Date.now() < deadline) {
      const t0 = Date.now();
      const replies = await allReplies(nc, '$JS.API.INFO', '', { firstMs: 2_000, extraMs: 0 });
      if (replies.length === 1 && replies[0]!['error'] !== undefined) {
        answer = replies[0]!;
        // 250 ms by design; generous for a loaded CI machine.
        expect(Date.now() - t0).toBeLessThan(2_000);
        break;
      }
    }
    expect(answer?.['error']).toEqual({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
    const t0 = Date.now();
    const create = await nc.request('$JS.API.STREAM.CREATE.LATE', enc.encode(JSON.stringify({ name: 'LATE', subjects: ['late'] })), { timeout: 2_000 });
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect((JSON.parse(dec.decode(create.data)) as { error: { err_code: number } }).error.err_code).toBe(10008);
    // The R3 stream's surviving member answers STREAM.INFO with its own view: no leader, the others offline.
    let cl: { leader?: string; replicas?: Array<{ name: string; offline?: boolean; current: boolean }> } | undefined;
    const infoDeadline = Date.now() + 10_000;
    while (Date.now() < infoDeadline) {
      const replies = await allReplies(nc, '$JS.API.STREAM.INFO.ORDERS', '', { firstMs: 2_000, extraMs: 0 });
      cl = replies[0]?.['cluster'] as typeof cl;
      if (cl !== undefined && cl.leader === undefined) break;
    }
    expect(cl?.leader).toBeUndefined();
    expect(cl?.replicas?.map((r) => [r.name, r.offline === true]).sort()).toEqual([['n1', true], ['n2', true], ['n3', false]]);
    // Its other calls get 10008 rather than silence.
    const purge = await allReplies(nc, '$JS.API.STREAM.PURGE.ORDERS', '', { firstMs: 2_000, extraMs: 0 });
    expect(purge[0]?.['error']).toEqual({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
  });
});
