// A replica whose stream store lost its files while its Raft log (compacted under a stand-in snapshot) survived:
// after a restart it must hold every message again — copied from the leader's complete image — instead of
// replaying only the entries after its snapshot and reporting itself current with the rest missing.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageType } from 'nats';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream, type StreamContent } from './helpers/js-cluster.js';
import { publishRetrying } from './helpers/js-cluster-publisher.js';

const STREAM = 'BEHIND';
/** Each awaited publish is about one Raft entry: 300 of them compact the log several times at 40. */
const SNAPSHOT_ENTRIES = '40';

// Read by every node process at start (and restart): stream groups snapshot after this many entries.
const previousSnapshotEnv = process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'];
process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'] = SNAPSHOT_ENTRIES;
afterAll(() => {
  if (previousSnapshotEnv === undefined) delete process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'];
  else process.env['FLOTILLA_TEST_STREAM_SNAPSHOT_ENTRIES'] = previousSnapshotEnv;
});

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'BEHIND' }, (c) => (cluster = c));

/** The stream's message-store directory under a node's store directory (`…/streams/<group>/messages`). */
function messagesDirOf(root: string, stream: string): string | null {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(root, entry.name);
    const named = entry.name === stream || entry.name.startsWith(`S-${stream}-`);
    if (named && root.endsWith('streams') && existsSync(join(path, 'messages'))) return join(path, 'messages');
    const found = messagesDirOf(path, stream);
    if (found) return found;
  }
  return null;
}

describe.skipIf(AGAINST_NATS_SERVER)('replica whose stream store is behind its own Raft snapshot', () => {
  it('gets every message back from the leader after its message files were deleted', async () => {
    const { nc, jsm, js } = await cluster.client('n1');
    await addStream(jsm, { name: STREAM, subjects: ['behind.>'], num_replicas: 3, storage: StorageType.File });
    const expected: StreamContent = new Map();
    const publish = async (i: number): Promise<void> => {
      const payload = `msg-${i}-${(i * 2654435761) >>> 0}`;
      // The restarted replica's term bump costs one leader election: a publish then may meet no leader (503).
      expected.set(await publishRetrying(js, `behind.${i % 7}`, payload, `m-${i}`), payload);
    };
    for (let i = 0; i < 300; i++) await publish(i);
    const leader = (await cluster.waitForReplicasCurrent(jsm, STREAM, 3)).cluster!.leader!;
    // A follower that does not serve n1's connection.
    const victim = cluster.nodes.map((n) => n.name).find((n) => n !== leader && n !== 'n1')!;
    await cluster.terminate(victim);
    const messages = messagesDirOf(cluster.node(victim).storeDir, STREAM);
    expect(messages).not.toBeNull();
    expect(readdirSync(messages!).length).toBeGreaterThan(0);
    rmSync(messages!, { recursive: true, force: true });
    // Nothing is published while it is down: the leader would compact past it and send it a complete image
    // anyway, which is not the case under test (its Raft log is complete, only its store is not).

    await cluster.restart(victim);
    await cluster.waitForReplicasCurrent(jsm, STREAM, 3, 30_000);
    // Replication goes on: these reach it through the log.
    for (let i = 300; i < 340; i++) await publish(i);
    await cluster.waitForReplicasCurrent(jsm, STREAM, 3, 30_000);
    expect(cluster.node(victim).output()).toContain('stream store behind its Raft snapshot; discarding the Raft log');
    expect(cluster.node(victim).output()).not.toContain('replicated stream sequence gap filled');

    // Every replica read while it leads, sequence by sequence.
    const contents = await cluster.replicaContents(STREAM, ['n1', 'n2', 'n3']);
    expect(expected.size).toBe(340);
    for (const [name, { content, state }] of contents) {
      expect({ name, messages: state.messages, first: state.first_seq, last: state.last_seq }).toEqual({ name, messages: 340, first: 1, last: 340 });
      expect({ name, content: [...content] }).toEqual({ name, content: [...expected].sort((a, b) => a[0] - b[0]) });
    }
    // Publishing goes on at the next sequence.
    expect((await js.publish('behind.last', 'after')).seq).toBe(341);
    await nc.flush();
  }, 240_000);
});
