// $JS.API.INFO counts a replicated stream's bytes on every replica, as nats-server does (each server reports
// its own store): an R3 stream's bytes three times, an R1 stream's once, wherever the stream lives (issue 24
// item 4). The default (untiered) account shows no `tiers` and unlimited limits, as nats-server.
import { describe, expect, it } from 'vitest';
import { JsCluster, useJsCluster, addStream, apiRequest } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'USAGE' }, (c) => (cluster = c));

describe('account usage in a cluster', () => {
  it('storage and memory count every replica: 3 × an R3 stream + 1 × an R1 stream', async () => {
    const { nc, jsm, js } = await cluster.client('n1');
    await addStream(jsm, { name: 'FILE3', subjects: ['f3.>'], num_replicas: 3 });
    await addStream(jsm, { name: 'FILE1', subjects: ['f1.>'], num_replicas: 1 });
    await addStream(jsm, { name: 'MEM3', subjects: ['m3.>'], num_replicas: 3, storage: 'memory' as never });
    const body = new Uint8Array(1000);
    for (let i = 0; i < 20; i++) {
      await js.publish('f3.a', body);
      await js.publish('f1.a', body);
      await js.publish('m3.a', body);
    }
    await jsm.consumers.add('FILE3', { durable_name: 'C', ack_policy: 'explicit' as never });
    const bytes = async (name: string) => (await jsm.streams.info(name)).state.bytes;
    const [f3, f1, m3] = [await bytes('FILE3'), await bytes('FILE1'), await bytes('MEM3')];
    expect(f3).toBeGreaterThan(20_000);
    const want = { storage: 3 * f3 + f1, memory: 3 * m3, streams: 3, consumers: 1 };
    // nats-server gossips usage every 1.5 s: poll (Flotilla answers at once).
    let got: Record<string, unknown> = {};
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(300)) {
      got = await apiRequest(nc, '$JS.API.INFO', '', 3_000);
      if (got['storage'] === want.storage && got['memory'] === want.memory) break;
    }
    expect({ storage: got['storage'], memory: got['memory'], streams: got['streams'], consumers: got['consumers'] }).toEqual(want);
    expect(got['tiers']).toBeUndefined();
    expect((got['limits'] as Record<string, unknown>)['max_storage']).toBe(-1);
    // Through another node (the same meta leader answers): the same figures.
    const nc3 = await cluster.connect('n3');
    const again = await apiRequest(nc3, '$JS.API.INFO', '', 3_000);
    expect({ storage: again['storage'], memory: again['memory'] }).toEqual({ storage: want.storage, memory: want.memory });
  }, 60_000);
});
