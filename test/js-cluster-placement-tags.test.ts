// Placement tags, unique_tag, re-placement by update, scaling and SERVER.REMOVE on a four-node cluster of
// real processes with `server_tags`: n1 [az:1, ssd], n2 [az:2, ssd], n3 [az:3], n4 [az:1, ssd], and
// `jetstream { unique_tag: "az:" }` (no two replicas of a stream in one zone).
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JetStreamManager, StreamInfo } from 'nats';
import { AGAINST_NATS_SERVER, addStream, apiRequest, readStream, useJsCluster, type JsCluster, type JsClusterNode } from './helpers/js-cluster.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(100);
const dir = mkdtempSync(join(tmpdir(), 'flotilla-placement-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TAGS: Record<string, string[]> = { n1: ['az:1', 'ssd'], n2: ['az:2', 'ssd'], n3: ['az:3'], n4: ['az:1', 'ssd'] };
const ZONE: Record<string, string> = { n1: 'az:1', n2: 'az:2', n3: 'az:3', n4: 'az:1' };

let cluster!: JsCluster;
useJsCluster(
  {
    size: 4,
    clusterName: 'TAGS',
    argsOf: (n: JsClusterNode, all: readonly JsClusterNode[], portsDir: string) => {
      const conf = [
        `server_name: ${n.name}`,
        `listen: "127.0.0.1:${n.clientPort}"`,
        `http: "127.0.0.1:${n.httpPort}"`,
        `ports_file_dir: "${portsDir}"`,
        `server_tags: [${TAGS[n.name]!.map((t) => `"${t}"`).join(', ')}]`,
        `jetstream { store_dir: "${n.storeDir}", unique_tag: "az:" }`,
        `cluster { name: TAGS, listen: "127.0.0.1:${n.clusterPort}", routes: [ ${all.map((x) => `"nats://127.0.0.1:${x.clusterPort}"`).join(', ')} ] }`,
        '',
      ].join('\n');
      const file = join(dir, `${n.name}.conf`);
      writeFileSync(file, conf);
      return ['-c', file];
    },
  },
  (c) => (cluster = c),
);

const T = 'io.nats.jetstream.api.v1.';
const peersOf = (info: StreamInfo): string[] => [info.cluster?.leader ?? '', ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter((n) => n !== '').sort();

/** STREAM.INFO, or null when it timed out (while a moved group elects its leader among the newcomers). */
async function infoOrNull(jsm: JetStreamManager, stream: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(stream);
  } catch (err) {
    if ((err as { code?: string }).code === 'TIMEOUT') return null;
    throw err;
  }
}

const peersNow = async (jsm: JetStreamManager, stream: string): Promise<string[] | null> => {
  const info = await infoOrNull(jsm, stream);
  return info === null ? null : peersOf(info);
};

async function placedOn(jsm: JetStreamManager, stream: string, count: number): Promise<string[]> {
  let peers: string[] = [];
  await until(async () => {
    const info = await infoOrNull(jsm, stream);
    if (info === null) return false;
    peers = peersOf(info);
    return info.cluster?.leader !== undefined && peers.length === count && (info.cluster?.replicas ?? []).every((r) => r.current);
  }, 60_000);
  return peers;
}

async function publish(cluster: JsCluster, subject: string, count: number): Promise<void> {
  const { js } = await cluster.client('n1');
  for (let i = 0; i < count; i++) await js.publish(subject, new TextEncoder().encode(`m${i}`));
}

it('create honours placement tags and unique_tag, and says which when nothing fits', async () => {
  const { jsm, nc } = await cluster.client('n1');
  await addStream(jsm, { name: 'SSD2', subjects: ['ssd2'], num_replicas: 2, placement: { tags: ['ssd'] } }, 60_000);
  const ssd = await placedOn(jsm, 'SSD2', 2);
  for (const n of ssd) expect(TAGS[n]).toContain('ssd');
  expect(new Set(ssd.map((n) => ZONE[n])).size).toBe(2);

  // `!tag` (exclusion) came with nats-server 2.10: against 2.9 the node is named by its zone instead.
  await addStream(jsm, { name: 'SPIN', subjects: ['spin'], num_replicas: 1, placement: { tags: AGAINST_NATS_SERVER ? ['az:3'] : ['!ssd'] } });
  expect(await placedOn(jsm, 'SPIN', 1)).toEqual(['n3']);

  // Three ssd nodes but two zones among them.
  const r3 = await nc.request('$JS.API.STREAM.CREATE.SSD3', JSON.stringify({ name: 'SSD3', subjects: ['ssd3'], num_replicas: 3, placement: { tags: ['ssd'] } }), { timeout: 10_000 });
  expect(r3.json()).toEqual({
    type: `${T}stream_create_response`,
    error: { code: 400, err_code: 10005, description: "no suitable peers for placement, server tag not unique, tags not matched ['ssd']" },
  });
  const none = await nc.request('$JS.API.STREAM.CREATE.NVME', JSON.stringify({ name: 'NVME', subjects: ['nvme'], placement: { tags: ['nvme'] } }), { timeout: 10_000 });
  expect(none.json()).toEqual({ type: `${T}stream_create_response`, error: { code: 400, err_code: 10005, description: "no suitable peers for placement, tags not matched ['nvme']" } });
}, 180_000);

it('an update to other tags moves the replica with its messages; replicas scale up across zones and down again', async () => {
  // An update answers once the (moved) group's leader has the new config: longer than a client's default 5 s here.
  const { jsm } = await cluster.client('n1', 30_000);
  await publish(cluster, 'spin', 50);
  const before = await readStream(jsm, 'SPIN');
  expect(before.size).toBe(50);
  const info = await jsm.streams.info('SPIN');
  await jsm.streams.update('SPIN', { ...info.config, placement: { tags: ['az:2'] } });
  await until(async () => (await peersNow(jsm, 'SPIN'))?.join() === 'n2', 60_000);
  expect(await readStream(jsm, 'SPIN')).toEqual(before);

  // R3 needs three zones: n2 stays, n3 and one of n1/n4 join (no placement tags now).
  const moved = await jsm.streams.info('SPIN');
  await jsm.streams.update('SPIN', { ...moved.config, placement: undefined, num_replicas: 3 });
  const r3 = await placedOn(jsm, 'SPIN', 3);
  expect(new Set(r3.map((n) => ZONE[n])).size).toBe(3);
  expect(r3).toContain('n2');
  const scaled = await jsm.streams.info('SPIN');
  await jsm.streams.update('SPIN', { ...scaled.config, num_replicas: 1 });
  expect(await placedOn(jsm, 'SPIN', 1)).toHaveLength(1);
  expect(await readStream(jsm, 'SPIN')).toEqual(before);
}, 240_000);

// nats-server serves SERVER.REMOVE to the system account only.
it.skipIf(AGAINST_NATS_SERVER)('SERVER.REMOVE peers a node out and re-places its replicas on a fitting node', async () => {
  const { jsm, nc } = await cluster.client('n1');
  await publish(cluster, 'ssd2', 40);
  const before = await readStream(jsm, 'SSD2');
  expect(before.size).toBe(40);
  const meta = await cluster.metaLeaderName();
  const peers = await placedOn(jsm, 'SSD2', 2);
  const victim = peers.find((p) => p !== meta)!;
  expect(victim).toBeDefined();

  expect(await nc.request('$JS.API.SERVER.REMOVE', '', { timeout: 10_000 }).then((m) => m.json())).toEqual({
    type: `${T}meta_server_remove_response`,
    error: { code: 400, err_code: 10003, description: 'bad request' },
  });
  expect(await nc.request('$JS.API.SERVER.REMOVE', JSON.stringify({ peer: 'nobody' }), { timeout: 10_000 }).then((m) => m.json())).toEqual({
    type: `${T}meta_server_remove_response`,
    error: { code: 400, err_code: 10044, description: 'server is not a member of the cluster' },
  });
  expect(await apiRequest(nc, '$JS.API.SERVER.REMOVE', { peer: victim }, 20_000)).toEqual({ type: `${T}meta_server_remove_response`, success: true });

  // The other ssd node of another zone takes its place: with n1 or n4 gone, the other one; with n2 gone, none
  // is left in a free zone, so the stream shrinks to its survivor.
  await until(async () => (await peersNow(jsm, 'SSD2'))?.includes(victim) === false, 90_000);
  const after = peersOf(await jsm.streams.info('SSD2'));
  for (const n of after) expect(TAGS[n]).toContain('ssd');
  expect(new Set(after.map((n) => ZONE[n])).size).toBe(after.length);
  expect(await readStream(jsm, 'SSD2')).toEqual(before);
  // Nothing new goes to the removed node (R2 fits whichever zone it took away).
  await addStream(jsm, { name: 'AFTER', subjects: ['after'], num_replicas: 2 });
  expect(await placedOn(jsm, 'AFTER', 2)).not.toContain(victim);
}, 240_000);
