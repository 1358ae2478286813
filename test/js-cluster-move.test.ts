// ACCOUNT.STREAM.MOVE / CANCEL_MOVE on a three-node cluster of real processes: an R2 stream moves a replica
// off one server while a client publishes with acknowledgements; every acknowledged message is there after,
// in order, and the stream answered throughout. nats-server serves these to the system account only, so the
// run is Flotilla's (its global account is `$G`).
import { expect, it } from 'vitest';
import type { JetStreamManager, StreamInfo } from 'nats';
import { AGAINST_NATS_SERVER, addStream, readStream, useJsCluster, type JsCluster } from './helpers/js-cluster.js';
import { AckedPublisher, ackProblems } from './helpers/js-cluster-publisher.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(100);
const T = 'io.nats.jetstream.api.v1.';

let cluster!: JsCluster;
useJsCluster({ size: 3, clusterName: 'MOVE' }, (c) => (cluster = c));

const peersOf = (info: StreamInfo): string[] => [info.cluster?.leader ?? '', ...(info.cluster?.replicas ?? []).map((r) => r.name)].filter((n) => n !== '').sort();

async function settledPeers(jsm: JetStreamManager, stream: string): Promise<string[]> {
  let peers: string[] = [];
  await until(async () => {
    const info = await jsm.streams.info(stream).catch(() => null);
    if (info === null || info.cluster?.leader === undefined) return false;
    peers = peersOf(info);
    return peers.length === info.config.num_replicas && (info.cluster.replicas ?? []).every((r) => r.current);
  }, 90_000);
  return peers;
}

it.skipIf(AGAINST_NATS_SERVER)('a replica moves off a server under acknowledged load and loses nothing', async () => {
  const { jsm, js, nc } = await cluster.client('n1', 30_000);
  await addStream(jsm, { name: 'MOVING', subjects: ['moving.>'], num_replicas: 2 });
  const before = await settledPeers(jsm, 'MOVING');
  const source = before[0]!;
  const target = ['n1', 'n2', 'n3'].find((n) => !before.includes(n))!;

  const ask = async (subject: string, body: object | string): Promise<Record<string, unknown>> =>
    (await nc.request(subject, typeof body === 'string' ? body : JSON.stringify(body), { timeout: 30_000 })).json<Record<string, unknown>>();
  expect(await ask('$JS.API.ACCOUNT.STREAM.MOVE.$G.MOVING', { server: 'nobody' })).toEqual({
    type: `${T}stream_update_response`,
    error: { code: 400, err_code: 10044, description: 'server is not a member of the cluster' },
  });
  expect(await ask('$JS.API.ACCOUNT.STREAM.MOVE.$G.MOVING', { server: target })).toEqual({ type: `${T}stream_update_response`, error: { code: 400, err_code: 10040, description: 'peer not a member' } });
  expect(await ask('$JS.API.ACCOUNT.STREAM.MOVE.OTHER.MOVING', { server: source })).toEqual({ type: `${T}stream_update_response`, error: { code: 503, err_code: 10035, description: 'account not found' } });
  expect(await ask('$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.$G.MOVING', '')).toEqual({ type: `${T}stream_update_response`, error: { code: 400, err_code: 10129, description: 'stream move not in progress' } });

  const publisher = new AckedPublisher(js, { subject: 'moving.x', prefix: 'mv', maxMessages: 3000, paceMs: 2 }).start();
  await publisher.waitForMoreAcks(100, 30_000);
  const moved = await ask('$JS.API.ACCOUNT.STREAM.MOVE.$G.MOVING', { server: source });
  expect(moved['error']).toBeUndefined();
  expect(moved['type']).toBe(`${T}stream_update_response`);
  // Serving while it moves: acknowledgements keep coming.
  await publisher.waitForMoreAcks(100, 60_000);
  await until(async () => {
    const info = await jsm.streams.info('MOVING').catch(() => null);
    return info !== null && !peersOf(info).includes(source) && peersOf(info).includes(target) && (info.cluster?.replicas ?? []).every((r) => r.current);
  }, 120_000);
  await publisher.waitForMoreAcks(50, 60_000);
  await publisher.stop();
  expect(publisher.giveUpError).toBeNull();
  const after = await settledPeers(jsm, 'MOVING');
  expect(after).toEqual([...before.filter((p) => p !== source), target].sort());

  const content = await readStream(jsm, 'MOVING');
  expect(publisher.acks.length).toBeGreaterThanOrEqual(250);
  expect(ackProblems(publisher.acks, content, publisher.attempted)).toEqual([]);
  // The move is complete: nothing to cancel.
  expect(await ask('$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.$G.MOVING', '')).toEqual({ type: `${T}stream_update_response`, error: { code: 400, err_code: 10129, description: 'stream move not in progress' } });
}, 300_000);

it.skipIf(AGAINST_NATS_SERVER)('ACCOUNT.PURGE deletes every stream of the account, another account is untouched', async () => {
  const { jsm, nc } = await cluster.client('n1', 30_000);
  await addStream(jsm, { name: 'PURGE1', subjects: ['purge1'], num_replicas: 3 });
  await addStream(jsm, { name: 'PURGE2', subjects: ['purge2'], num_replicas: 1 });
  const ask = async (subject: string): Promise<Record<string, unknown>> => (await nc.request(subject, '', { timeout: 30_000 })).json<Record<string, unknown>>();
  expect(await ask('$JS.API.ACCOUNT.PURGE.OTHER')).toEqual({ type: `${T}account_purge_response`, initiated: true });
  expect((await jsm.streams.names().next()).length).toBeGreaterThanOrEqual(2);
  expect(await ask('$JS.API.ACCOUNT.PURGE.$G')).toEqual({ type: `${T}account_purge_response`, initiated: true });
  await until(async () => (await jsm.streams.names().next()).length === 0, 30_000);
  expect((await jsm.getAccountInfo()).streams).toBe(0);
}, 120_000);
