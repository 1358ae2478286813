// A three-replica file stream (StreamReplica, FileStore, LevelRaftLogStore, in-memory Raft transport) through
// simulated power cuts (packages/store/test/support/power-loss-fs.ts) of one node or all three at once: every
// acknowledged publish is at its sequence on the recovered group, and each replica's store as it came back
// from its disk is a prefix of what the group converges to.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeId } from '@flotilla/raft';
import { LevelRaftLogStore, type StoredMessage } from '@flotilla/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { crash, forgetRoot, prng, registerRoot, simTmpBase, type CrashMode } from '../../store/test/support/power-loss-fs.js';
import { ReplicaCluster, contentOf } from './stream-replica-harness.js';

vi.mock('node:fs', async (importOriginal) => (await import('../../store/test/support/power-loss-fs.js')).wrapFs(await importOriginal()));
vi.mock('node:fs/promises', async (importOriginal) =>
  (await import('../../store/test/support/power-loss-fs.js')).wrapFsPromises(await importOriginal()),
);
vi.mock('level', async (importOriginal) => (await import('../../store/test/support/power-loss-fs.js')).wrapLevel(await importOriginal()));

const ROUNDS = Number(process.env.POWER_LOSS_ROUNDS ?? 12);
const SEED = Number(process.env.POWER_LOSS_SEED ?? 0x3e91);
const CONFIG = { name: 'S', subjects: ['s.>'], storage: 'file', num_replicas: 3 };
/** Small WAL segments and frequent snapshots: checkpoints and log compaction happen between crashes. */
const LOG_OPTIONS = { walSegmentBytes: 16 * 1024, levelApplyDelayMs: 2, writeBufferBytes: 1024 * 1024 };
const REPLICA_OPTIONS = { snapshotEveryEntries: 24 };

const logDirOf = (root: string, id: NodeId): string => join(root, `log${id}`);
/** `scrambled` is opt-in, as in power-loss-file-store.test.ts: FileStore's known hole after scrambled writeback. */
const SCRAMBLE = process.env.POWER_LOSS_SCRAMBLE === '1';
const modeOf = (r: number): CrashMode =>
  r < 0.35 ? 'synced-only' : r < 0.7 ? 'torn' : r < 0.85 && SCRAMBLE ? 'scrambled' : r < 0.85 ? 'torn' : 'everything';
const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));

let cluster: ReplicaCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/** `before` (a replica's store as reopened) is a prefix of `after` (the converged group). */
function expectPrefix(before: StoredMessage[], after: StoredMessage[], label: string): void {
  expect(before.length, `${label}: holds more than the group`).toBeLessThanOrEqual(after.length);
  for (let i = 0; i < before.length; i++) {
    const a = before[i];
    const b = after[i];
    expect(a.seq, `${label}: message ${i} sequence`).toBe(b.seq);
    expect(Buffer.from(a.data).toString(), `${label}: seq ${a.seq} data`).toBe(Buffer.from(b.data).toString());
  }
}

describe('three file replicas under simulated power loss', () => {
  it(`keep every acknowledged publish through ${ROUNDS} power cuts of one node or all three`, async () => {
    const rand = prng(SEED);
    const base = await mkdtemp(join(simTmpBase(tmpdir()), 'flotilla-powerloss-replicas-'));
    registerRoot(base);
    const logStores = (id: NodeId): Promise<LevelRaftLogStore> => LevelRaftLogStore.open({ dir: logDirOf(base, id), ...LOG_OPTIONS });
    const c = (cluster = await ReplicaCluster.start(CONFIG, { root: base, logStores, options: REPLICA_OPTIONS }));
    /** seq -> data of every publish whose PubAck arrived before a crash. */
    const acked = new Map<number, string>();
    let published = 0;
    let allAtOnce = 0;
    /** Replicas whose store came back behind the group (the Raft log replayed or the leader sent the rest). */
    let behindAtReopen = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await c.waitForLeader(10_000);
      const label = `seed ${SEED} (POWER_LOSS_SEED) round ${round}`;
      const replies: { reply: string; data: string }[] = [];
      const count = 5 + Math.floor(rand() * 40);
      for (let i = 0; i < count; i++) {
        const data = `m${++published}`;
        replies.push({ reply: c.publish(`s.${published % 5}`, data), data });
        if (rand() < 0.3) await sleep(Math.floor(rand() * 6));
      }
      // Often the cut comes right after the last publish, while proposals are in flight.
      const pause = rand();
      if (pause < 0.3) await new Promise((res) => setImmediate(res));
      else if (pause < 0.6) await sleep(1 + Math.floor(rand() * 3));
      else await sleep(Math.floor(rand() * 30));
      // Power cut: what was acknowledged by now must survive.
      for (const { reply, data } of replies) {
        const ack = c.ack(reply);
        if (ack !== undefined && ack.error === undefined) acked.set(ack.seq as number, data);
      }
      const everyone = rand() < 0.5;
      const victims: NodeId[] = everyone ? [...c.nodes.keys()] : [1 + Math.floor(rand() * c.nodes.size)];
      if (everyone) allAtOnce++;
      const mode = modeOf(rand());
      const images = crash(
        victims.flatMap((id) => [c.nodes.get(id)!.dir, logDir(c, id)]),
        mode,
        rand,
      );
      // The abandoned replicas stop on their old directories, which no longer count.
      for (const id of victims) {
        await c.crash(id);
        await c.nodes.get(id)!.logStore.close().catch(() => undefined);
      }
      const reopened = new Map<NodeId, StoredMessage[]>();
      for (let i = 0; i < victims.length; i++) {
        const slot = c.nodes.get(victims[i])!;
        slot.dir = images[2 * i].dir;
        const logStore = await LevelRaftLogStore.open({ dir: images[2 * i + 1].dir, ...LOG_OPTIONS });
        logDirByStore.set(logStore, images[2 * i + 1].dir);
        slot.logStore = logStore;
      }
      for (const id of victims) {
        const replica = await c.restart(id);
        const content = await contentOf(replica);
        reopened.set(id, content);
        if (process.env.POWER_LOSS_TRACE) console.log(`${label} n${id} reopened ${JSON.stringify({ ...replica.stream.store.state(), first_ts: 0, last_ts: 0 })} held ${content.length}`);
      }
      await c.waitForLeader(10_000);
      const converged = await c.waitConverged(10_000).catch(async (err: unknown) => {
        const views = await Promise.all(
          [...c.nodes.values()].map(async (n) => {
            const msgs = n.replica ? await contentOf(n.replica) : [];
            const st = n.replica?.status();
            return `n${n.id}: ${msgs.length} msgs, seqs ${msgs[0]?.seq}..${msgs.at(-1)?.seq}, status ${JSON.stringify(st)}, errors ${n.errors.slice(-3).join(' | ')}`;
          }),
        );
        throw new Error(`${label} [${mode}, nodes ${victims}]: ${String(err)}\n${views.join('\n')}`);
      });
      const bySeq = new Map(converged.map((m) => [m.seq, Buffer.from(m.data).toString()]));
      for (const [seq, data] of acked) expect(bySeq.get(seq), `${label} [${mode}, nodes ${victims}]: acknowledged seq ${seq}`).toBe(data);
      for (const [id, content] of reopened) {
        expectPrefix(content, converged, `${label} [${mode}]: node ${id} as reopened`);
        if (content.length < converged.length) behindAtReopen++;
      }
      if (process.env.POWER_LOSS_TRACE) console.log(label, mode, victims, 'acked', acked.size, 'reopened', [...reopened.values()].map((m) => m.length), 'converged', converged.length);
    }
    expect(acked.size).toBeGreaterThan(0);
    expect(allAtOnce).toBeGreaterThan(0);
    expect(behindAtReopen, 'no crash cost a replica anything: the simulation did not bite').toBeGreaterThan(0);
    forgetRoot(base);
  });
});

/** Where each log store lives (the harness keeps only the store object). */
const logDirByStore = new WeakMap<object, string>();
function logDir(c: ReplicaCluster, id: NodeId): string {
  return logDirByStore.get(c.nodes.get(id)!.logStore) ?? logDirOf(c.root, id);
}
