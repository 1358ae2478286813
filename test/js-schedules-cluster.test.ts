// Message schedules (ADR-51) on R3 (three real processes) with the stream leader killed (-9): the leader fires
// each schedule by proposing its copy through the stream's Raft log, and every replica moves the schedule on
// when it applies the copy, so a firing is produced exactly once — an `@at` schedule due after the kill is
// fired once by the new leader, and an `@every` schedule running through the kill never repeats a firing
// (each copy's Nats-Schedule-Next is distinct and increasing) and goes on after it. Every replica holds the
// same copies at the same sequences. nats-server 2.9.10 predates schedules, so this runs against Flotilla only.
import { describe, it, expect } from 'vitest';
import { headers, type JetStreamManager, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { until } from './helpers/until.js';

const NAMES = ['n1', 'n2', 'n3'];
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'SCH' }, (c) => (cluster = c));

async function publish(nc: NatsConnection, subject: string, hdrs: Record<string, string>, body: string): Promise<{ seq: number }> {
  const h = headers();
  for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
  for (let attempt = 0; ; attempt++) {
    try {
      const m = await nc.request(subject, new TextEncoder().encode(body), { headers: h, timeout: 2000 });
      const ack = JSON.parse(new TextDecoder().decode(m.data)) as { seq: number; error?: unknown };
      if (ack.error !== undefined) throw new Error(JSON.stringify(ack));
      return ack;
    } catch (err) {
      if (attempt >= 20) throw err;
      await sleep(250);
    }
  }
}

/** The copies on `subject` (as the leader serves them): sequence and Nats-Schedule-Next. */
async function copiesOn(jsm: JetStreamManager, stream: string, subject: string): Promise<Array<{ seq: number; next: string; scheduler: string }>> {
  const info = await jsm.streams.info(stream);
  const out: Array<{ seq: number; next: string; scheduler: string }> = [];
  for (let seq = info.state.first_seq; seq > 0 && seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m === null || m.subject !== subject) continue;
    out.push({ seq, next: m.header.get('Nats-Schedule-Next'), scheduler: m.header.get('Nats-Scheduler') });
  }
  return out;
}

describe('R3 schedules across a leader kill -9', () => {
  it('an @at schedule due after the kill fires exactly once, from the new leader', async () => {
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'SAT3', subjects: ['sat3.>'], num_replicas: 3, allow_msg_schedules: true } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'SAT3', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const pub = await cluster.client(survivors[0]!);
    const at = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    await publish(pub.nc, 'sat3.sched', { 'Nats-Schedule': `@at ${at}`, 'Nats-Schedule-Target': 'sat3.out' }, 'once');
    await cluster.kill(leader);
    const newLeader = await cluster.waitForStreamLeader(pub.jsm, 'SAT3', { not: leader });
    expect(survivors).toContain(newLeader);
    const copies = await until(async () => {
      const c = await copiesOn(pub.jsm, 'SAT3', 'sat3.out').catch(() => []);
      return c.length > 0 ? c : null;
    }, 30_000, 'the @at copy');
    expect(copies.map((c) => [c.scheduler, c.next])).toEqual([['sat3.sched', 'purge']]);
    await sleep(2000);
    expect(await copiesOn(pub.jsm, 'SAT3', 'sat3.out')).toHaveLength(1);
    expect(await copiesOn(pub.jsm, 'SAT3', 'sat3.sched')).toHaveLength(0);
    await cluster.restart(leader);
    const contents = await cluster.replicaContents('SAT3', NAMES, { timeoutMs: 30_000 });
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    expect(first.map(([, data]) => data)).toEqual(['once']);
    for (const name of NAMES) expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    await Promise.all([admin.nc.close(), pub.nc.close()]);
  }, 120_000);

  it('an @every schedule running through the kill never repeats a firing and goes on', async () => {
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'SEV3', subjects: ['sev3.>'], num_replicas: 3, allow_msg_schedules: true } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'SEV3', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const pub = await cluster.client(survivors[0]!);
    await publish(pub.nc, 'sev3.tick', { 'Nats-Schedule': '@every 1s', 'Nats-Schedule-Target': 'sev3.out' }, 'tick');
    await until(async () => (await copiesOn(pub.jsm, 'SEV3', 'sev3.out')).length >= 2, 30_000, 'two copies before the kill');
    await cluster.kill(leader);
    await cluster.waitForStreamLeader(pub.jsm, 'SEV3', { not: leader });
    const atKill = (await copiesOn(pub.jsm, 'SEV3', 'sev3.out')).length;
    const copies = await until(async () => {
      const c = await copiesOn(pub.jsm, 'SEV3', 'sev3.out').catch(() => []);
      return c.length >= atKill + 3 ? c : null;
    }, 30_000, 'three copies after the failover');
    // Each firing once: the next firing each copy names is distinct and increasing.
    const nexts = copies.map((c) => Date.parse(c.next));
    for (let i = 1; i < nexts.length; i++) expect(nexts[i]!, `copy ${i}`).toBeGreaterThan(nexts[i - 1]!);
    console.log(`SEV3: ${copies.length} copies, ${atKill} before the kill of ${leader}; next-firing gaps ${nexts.slice(1).map((n, i) => n - nexts[i]!).join(',')} ms`);
    // End the schedule, then compare the replicas.
    await publish(pub.nc, 'sev3.tick', { 'Nats-Rollup': 'sub' }, 'stop');
    await cluster.restart(leader);
    const contents = await cluster.replicaContents('SEV3', NAMES, { timeoutMs: 30_000 });
    const first = [...contents.get(NAMES[0]!)!.content.entries()];
    for (const name of NAMES) expect([...contents.get(name)!.content.entries()], name).toEqual(first);
    await Promise.all([admin.nc.close(), pub.nc.close()]);
  }, 120_000);
});
