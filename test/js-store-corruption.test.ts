// Bits flipped in a stopped server's segment files. Single node: the restarted server loses exactly the
// damaged record, keeps every record after a damaged frame header, logs the damage and counts it in /jsz and
// /metrics. One replica of three: the damaged follower is repaired from the others, so after its restart every
// replica holds the same messages with no hole.
import { afterAll, describe, expect, it } from 'vitest';
import { StorageType, type JetStreamManager } from 'nats';
import { RestartableJetStream } from './helpers/jetstream-server.js';
import { AGAINST_NATS_SERVER, JsCluster, addStream, useJsCluster, type StreamContent } from './helpers/js-cluster.js';
import { publishRetrying } from './helpers/js-cluster-publisher.js';
import { FRAME_HEADER_BYTES, flipBit, framesOf, segmentFiles } from './helpers/segment-damage.js';

const payloadOf = (i: number): string => `payload-${i}-${(i * 2654435761) >>> 0}`.padEnd(80, '.');

describe.skipIf(AGAINST_NATS_SERVER)('single node: damaged stream store files', () => {
  const servers = new RestartableJetStream();
  afterAll(() => servers.cleanup());

  it('loses only the damaged record, logs it and counts it in /jsz and /metrics', async () => {
    const storeDir = servers.newStoreDir('flotilla-corrupt-e2e-');
    const first = await servers.start(storeDir);
    const jsm = await first.nc.jetstreamManager();
    const js = first.nc.jetstream();
    await jsm.streams.add({ name: 'DMG', subjects: ['dmg.>'], storage: StorageType.File });
    for (let i = 1; i <= 200; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => js.publish(`dmg.${(i + k) % 3}`, payloadOf(i + k))));
    }
    await first.nc.close();
    await first.server.stop();

    const [segment] = segmentFiles(storeDir);
    expect(segment).toBeDefined();
    const frames = framesOf(segment!);
    expect(frames.length).toBeGreaterThanOrEqual(3);
    const victim = frames[1]!.records[Math.floor(frames[1]!.records.length / 2)]!;
    flipBit(segment!, victim.dataAt + 3, 4); // one payload bit
    flipBit(segment!, frames[2]!.pos + 6, 1); // one frame-header bit: nothing behind it may be lost

    const second = await servers.start(storeDir);
    const jsm2 = await second.nc.jetstreamManager();
    const info = await jsm2.streams.info('DMG');
    expect(info.state.messages).toBe(199);
    expect(info.state.last_seq).toBe(200);
    const miss = await jsm2.streams.getMessage('DMG', { seq: victim.seq }).then(
      () => null,
      (e: { api_error?: unknown }) => e.api_error,
    );
    expect(miss).toMatchObject({ code: 404, err_code: 10037 });
    for (let seq = 1; seq <= 200; seq++) {
      if (seq === victim.seq) continue;
      const m = await jsm2.streams.getMessage('DMG', { seq });
      expect(m.string()).toBe(payloadOf(seq));
    }
    const jsz = (await (await fetch(`http://127.0.0.1:${second.server.httpPort}/jsz`)).json()) as { store_damage: { regions: number; bytes: number } };
    expect(jsz.store_damage.regions).toBe(2);
    const metrics = await (await fetch(`http://127.0.0.1:${second.server.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^flotilla_store_damaged_runs_total\{[^}]*\} 2$/m);
    const log = second.server.output();
    expect(log).toContain('stream store damage');
    expect(log).toContain(segment!);
    expect(log).toContain(`"afterSeq":${victim.seq - 1}`);
    expect(log).toContain(`"beforeSeq":${victim.seq + 1}`);
    await second.nc.close();
  });
});

const STREAM = 'DAMAGED';
const SMALL = 'DAMAGEDSMALL';
const previousSnapshotEnv = process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'];
process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'] = '40';
afterAll(() => {
  if (previousSnapshotEnv === undefined) delete process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'];
  else process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'] = previousSnapshotEnv;
});

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'DAMAGE' }, (c) => (cluster = c));

async function expectIdentical(jsm: JetStreamManager, stream: string, expected: StreamContent): Promise<void> {
  await cluster.waitForReplicasCurrent(jsm, stream, 3, 30_000);
  const contents = await cluster.replicaContents(stream, ['n1', 'n2', 'n3']);
  const want = [...expected].sort((a, b) => a[0] - b[0]);
  for (const [name, { content, state }] of contents) {
    expect({ name, messages: state.messages, last: state.last_seq }).toEqual({ name, messages: expected.size, last: expected.size });
    expect({ name, content: [...content] }).toEqual({ name, content: want });
  }
}

describe.skipIf(AGAINST_NATS_SERVER)('one replica of three with damaged stream store files', () => {
  it('is repaired from the other replicas: every replica ends with the same messages, no hole', async () => {
    const { jsm, js } = await cluster.client('n1');
    // DAMAGED's Raft log compacts (snapshot every 40 entries): repaired by the leader's complete image.
    // DAMAGEDSMALL stays below one snapshot: repaired by replaying its own Raft log into an emptied store.
    await addStream(jsm, { name: STREAM, subjects: ['damaged.>'], num_replicas: 3, storage: StorageType.File });
    await addStream(jsm, { name: SMALL, subjects: ['small.>'], num_replicas: 3, storage: StorageType.File });
    const expected: StreamContent = new Map();
    const small: StreamContent = new Map();
    for (let i = 0; i < 150; i++) expected.set(await publishRetrying(js, `damaged.${i % 5}`, payloadOf(i), `d-${i}`), payloadOf(i));
    for (let i = 0; i < 20; i++) small.set(await publishRetrying(js, `small.${i % 5}`, payloadOf(i), `s-${i}`), payloadOf(i));
    const leader = (await cluster.waitForReplicasCurrent(jsm, STREAM, 3)).cluster!.leader!;
    await cluster.waitForReplicasCurrent(jsm, SMALL, 3);
    const victim = cluster.nodes.map((n) => n.name).find((n) => n !== leader && n !== 'n1')!;
    await cluster.terminate(victim);

    for (const [stream, part] of [
      [STREAM, `S-${STREAM}-`],
      [SMALL, `S-${SMALL}-`],
    ] as const) {
      const files = segmentFiles(cluster.node(victim).storeDir, part);
      expect({ stream, files: files.length }).toEqual({ stream, files: 1 });
      const frames = framesOf(files[0]!);
      expect(frames.length).toBeGreaterThanOrEqual(2);
      const mid = frames[Math.floor(frames.length / 2)]!;
      flipBit(files[0]!, mid.records[0]!.dataAt, 2); // a payload
      const last = frames[frames.length - 1]!;
      if (last !== mid) flipBit(files[0]!, last.pos + 9, 0); // a frame header (its first sequence)
      expect(mid.pos + FRAME_HEADER_BYTES).toBe(mid.records[0]!.at);
    }

    await cluster.restart(victim);
    // Replication goes on.
    for (let i = 150; i < 170; i++) expected.set(await publishRetrying(js, `damaged.${i % 5}`, payloadOf(i), `d-${i}`), payloadOf(i));
    await expectIdentical(jsm, STREAM, expected);
    await expectIdentical(jsm, SMALL, small);
    const log = cluster.node(victim).output();
    expect(log).toContain('stream store damage');
    expect(log).toContain('stream store damaged; fetching the complete image from the leader');
    expect(log).toContain('stream store damaged; rebuilding it from the Raft log');
  }, 240_000);
});
