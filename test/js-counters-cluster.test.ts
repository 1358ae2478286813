// Counter streams (ADR-49) on R3 (three real processes): increments published concurrently through all three
// nodes sum exactly, and increments retried with a Nats-Msg-Id while the stream leader is killed (-9) are
// each counted once; every replica stores the same totals at the same sequences. The leader computes each
// total (the last stored or in-flight one plus the increment) before proposing, so the Raft log carries
// the {"val":...} bodies. nats-server 2.9.10 predates counters, so this runs against Flotilla only.
import { describe, it, expect } from 'vitest';
import { headers, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { until } from './helpers/until.js';

const NAMES = ['n1', 'n2', 'n3'];
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'CNT' }, (c) => (cluster = c));

interface Ack {
  seq?: number;
  val?: string;
  duplicate?: boolean;
  error?: { err_code: number };
}

/** One increment, retried (same Nats-Msg-Id when given) on a timeout or an error until it is acknowledged. */
async function increment(nc: NatsConnection, subject: string, by: bigint, msgId?: string): Promise<Ack> {
  const h = headers();
  h.set('Nats-Incr', by.toString());
  if (msgId !== undefined) h.set('Nats-Msg-Id', msgId);
  for (let attempt = 0; ; attempt++) {
    try {
      const m = await nc.request(subject, new Uint8Array(0), { headers: h, timeout: 2000 });
      const ack = JSON.parse(new TextDecoder().decode(m.data)) as Ack;
      if (ack.error === undefined) return ack;
      if (attempt >= 40) throw new Error(`increment refused: ${JSON.stringify(ack)}`);
    } catch (err) {
      if (attempt >= 40) throw err;
    }
    await sleep(250);
  }
}

/** Runs `count` increments per connection, `inFlight` at a time each. */
async function incrementFrom(
  conns: NatsConnection[],
  subject: string,
  count: number,
  valueOf: (conn: number, i: number) => bigint,
  idOf?: (conn: number, i: number) => string,
  acks: Ack[] = [],
): Promise<Ack[]> {
  await Promise.all(
    conns.map(async (nc, c) => {
      const inFlight = 8;
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < count) {
            const i = next++;
            acks.push(await increment(nc, subject, valueOf(c, i), idOf?.(c, i)));
          }
        }),
      );
    }),
  );
  return acks;
}

const totalOf = (content: Map<number, string>): string => {
  const last = [...content.entries()].sort((a, b) => a[0] - b[0]).at(-1);
  return last === undefined ? '0' : (JSON.parse(last[1]) as { val: string }).val;
};

describe('R3 counters', () => {
  it('increments through all three nodes at once sum exactly, on every replica', async () => {
    const clients = await Promise.all(NAMES.map((n) => cluster.client(n)));
    await addStream(clients[0]!.jsm, { name: 'CNT3', subjects: ['cnt3.>'], num_replicas: 3, allow_msg_counter: true } as never);
    await cluster.waitForReplicasCurrent(clients[0]!.jsm, 'CNT3', 3);
    const perNode = 60;
    // Big values: the sum passes 2^64 many times over.
    const big = 10n ** 30n;
    const acks = await incrementFrom(
      clients.map((c) => c.nc),
      'cnt3.hits',
      perNode,
      (c, i) => big + BigInt(c * 1000 + i),
    );
    let expected = 0n;
    for (let c = 0; c < NAMES.length; c++) for (let i = 0; i < perNode; i++) expected += big + BigInt(c * 1000 + i);
    expect(acks).toHaveLength(NAMES.length * perNode);
    expect(new Set(acks.map((a) => a.seq)).size).toBe(NAMES.length * perNode);
    expect(acks.map((a) => a.val)).toContain(expected.toString());
    const contents = await cluster.replicaContents('CNT3', NAMES, { timeoutMs: 30_000 });
    for (const name of NAMES) {
      expect(contents.get(name)!.content.size, name).toBe(NAMES.length * perNode);
      expect(totalOf(contents.get(name)!.content), name).toBe(expected.toString());
    }
    // Every replica stored the same totals at the same sequences.
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    for (const name of NAMES.slice(1)) expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    await Promise.all(clients.map((c) => c.nc.close()));
  }, 120_000);

  it('increments retried across a leader kill -9 are each counted once', async () => {
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'CNTF', subjects: ['cntf.>'], num_replicas: 3, allow_msg_counter: true } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'CNTF', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const pubs = await Promise.all(survivors.map((n) => cluster.client(n)));
    const count = 400;
    const progress: Ack[] = [];
    const running = incrementFrom(
      pubs.map((p) => p.nc),
      'cntf.x',
      count,
      (c, i) => BigInt(c * 1000 + i + 1),
      (c, i) => `inc-${c}-${i}`,
      progress,
    );
    await until(() => progress.length >= 50, 30_000, '50 increments before the kill');
    await cluster.kill(leader);
    const atKill = progress.length;
    const acks = await running;
    // The kill fell in the middle of the run.
    expect(atKill).toBeLessThan(acks.length);
    let expected = 0n;
    for (let c = 0; c < survivors.length; c++) for (let i = 0; i < count; i++) expected += BigInt(c * 1000 + i + 1);
    expect(acks).toHaveLength(survivors.length * count);
    const newLeader = await cluster.waitForStreamLeader(pubs[0]!.jsm, 'CNTF', { not: leader });
    expect(survivors).toContain(newLeader);
    // After the failover the counter goes on from the committed total.
    const after = await increment(pubs[0]!.nc, 'cntf.x', 1n);
    expect(after.val).toBe((expected + 1n).toString());
    await cluster.restart(leader);
    const contents = await cluster.replicaContents('CNTF', NAMES, { timeoutMs: 30_000 });
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    for (const name of NAMES) {
      expect(totalOf(contents.get(name)!.content), name).toBe((expected + 1n).toString());
      expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    }
    console.log(`CNTF: ${atKill} of ${acks.length} increments acked before the kill of ${leader}, ${acks.filter((a) => a.duplicate === true).length} answered as duplicates`);
    await Promise.all([admin.nc.close(), ...pubs.map((p) => p.nc.close())]);
  }, 120_000);
});
