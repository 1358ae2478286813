// Atomic batch publish (ADR-50) on an R3 stream of three real processes, with the stream leader killed (-9)
// mid-batch: a batch commits through one Raft entry, so every replica holds all of it or none of it. A batch
// staged on a leader that dies is lost with it (staging is the leader's), and its commit on the new leader is
// answered "batch is incomplete" (10176), as nats-server 2.14.5's processJetStreamAtomicBatchMsg answers a
// batch it does not know. nats-server 2.9.10 predates atomic batches, so this runs against Flotilla only.
import { describe, it, expect } from 'vitest';
import { headers, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

const NAMES = ['n1', 'n2', 'n3'];
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'ATOM' }, (c) => (cluster = c));

/** One batch message by request (retried while the stream has no leader); the reply's body. */
async function batchMsg(nc: NatsConnection, id: string, seq: number, commit = false): Promise<string> {
  const h = headers();
  h.set('Nats-Batch-Id', id);
  h.set('Nats-Batch-Sequence', String(seq));
  if (commit) h.set('Nats-Batch-Commit', '1');
  for (let attempt = 0; ; attempt++) {
    try {
      const m = await nc.request(`atom3.${seq % 3}`, new TextEncoder().encode(`${id}-${seq}`), { headers: h, timeout: 3000 });
      return new TextDecoder().decode(m.data);
    } catch (err) {
      if (attempt >= 20) throw err;
      await sleep(250);
    }
  }
}

async function stage(nc: NatsConnection, id: string, n: number): Promise<void> {
  for (let seq = 1; seq <= n; seq++) expect(await batchMsg(nc, id, seq)).toBe('');
}

describe('R3 atomic batch across a leader kill', () => {
  it('a committed batch is whole on every replica; one staged on a killed leader is refused and leaves nothing', async () => {
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'ATOM3', subjects: ['atom3.>'], num_replicas: 3, allow_atomic: true } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'ATOM3', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const pub = await cluster.client(survivors[0]!);

    // A: committed whole through the leader.
    await stage(pub.nc, 'A', 99);
    expect(JSON.parse(await batchMsg(pub.nc, 'A', 100, true))).toEqual({ stream: 'ATOM3', seq: 100, batch: 'A', count: 100 });

    // B: staged on the leader, which is then killed before the commit.
    await stage(pub.nc, 'B', 40);
    await cluster.kill(leader);
    const newLeader = await cluster.waitForStreamLeader(pub.jsm, 'ATOM3', { not: leader });
    expect(survivors).toContain(newLeader);
    expect(JSON.parse(await batchMsg(pub.nc, 'B', 41, true))).toEqual({
      error: { code: 400, err_code: 10176, description: 'atomic publish batch is incomplete' },
      stream: 'ATOM3',
      seq: 0,
    });
    expect((await pub.jsm.streams.info('ATOM3')).state.last_seq).toBe(100);

    // C: the commit is sent and the (new) leader killed at once, before its ack: all of C or none of it.
    await stage(pub.nc, 'C', 49);
    const h = headers();
    h.set('Nats-Batch-Id', 'C');
    h.set('Nats-Batch-Sequence', '50');
    h.set('Nats-Batch-Commit', '1');
    pub.nc.publish('atom3.2', new TextEncoder().encode('C-50'), { headers: h });
    await pub.nc.flush();
    await cluster.kill(newLeader);
    await cluster.restart(leader);
    await cluster.restart(newLeader);
    const contents = await cluster.replicaContents('ATOM3', NAMES, { timeoutMs: 60_000 });
    const a = Array.from({ length: 100 }, (_, i) => [i + 1, `A-${i + 1}`] as const);
    const c = Array.from({ length: 50 }, (_, i) => [101 + i, `C-${i + 1}`] as const);
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    // Whole or nothing: exactly A, or A then all of C.
    expect([100, 150]).toContain(first.length);
    expect(first).toEqual(first.length === 100 ? a : [...a, ...c]);
    for (const name of NAMES) expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    console.log(`ATOM3: batch C ${first.length === 150 ? 'committed' : 'not committed'} across the kill of ${newLeader}`);
    await Promise.all([admin.nc.close().catch(() => undefined), pub.nc.close().catch(() => undefined)]);
  }, 180_000);
});
