// Per-message TTL and delete markers on an R3 stream (three real processes), with the leader killed (-9) in
// between: every replica removes the same messages (each by the stored timestamp + TTL, from the log's
// entries, as max_age), the expiry time does not move with the failover, and a marker stream's markers are
// written once, by whichever node leads when the message is due, at the same sequence on every replica.
// nats-server 2.9.10 predates per-message TTL (2.11), so this runs against Flotilla only; headers and marker
// rules are nats-server 2.14.5's (stream.go, memstore.go/filestore.go expireMsgs, handleRemovalOrSdm).
import { describe, it, expect } from 'vitest';
import { headers, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

const NAMES = ['n1', 'n2', 'n3'];
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'TTL' }, (c) => (cluster = c));

async function publish(nc: NatsConnection, subject: string, data: string, ttl?: string): Promise<{ seq: number; error?: unknown }> {
  const h = headers();
  if (ttl !== undefined) h.set('Nats-TTL', ttl);
  for (let attempt = 0; ; attempt++) {
    try {
      const m = await nc.request(subject, new TextEncoder().encode(data), { headers: h, timeout: 2000 });
      return JSON.parse(new TextDecoder().decode(m.data)) as { seq: number };
    } catch (err) {
      if (attempt >= 20) throw err;
      await sleep(250);
    }
  }
}

async function until<T>(probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('R3 per-message TTL across a leader kill', () => {
  it('file: messages expire at their stored time + TTL through the failover, the same ones on every replica', async () => {
    const leaderOf = async (jsm: Awaited<ReturnType<JsCluster['client']>>['jsm']) => (await cluster.waitForReplicasCurrent(jsm, 'TTL3', 3)).cluster!.leader!;
    const admin = await cluster.client('n1');
    await addStream(admin.jsm, { name: 'TTL3', subjects: ['ttl3.>'], num_replicas: 3, storage: 'file' as never, allow_msg_ttl: true } as never);
    const leader = await leaderOf(admin.jsm);
    const survivors = NAMES.filter((n) => n !== leader);
    const pub = await cluster.client(survivors[0]!);
    const shortTtl: number[] = [];
    for (let i = 0; i < 5; i++) shortTtl.push((await publish(pub.nc, `ttl3.s${i}`, `short${i}`, '4s')).seq);
    const keptA = (await publish(pub.nc, 'ttl3.kept', 'kept-a')).seq;
    const keptB = (await publish(pub.nc, 'ttl3.kept', 'kept-b', '1h')).seq;
    const firstTsMs = (await pub.jsm.streams.getMessage('TTL3', { seq: shortTtl[0]! })).time.getTime();
    const lastTsMs = (await pub.jsm.streams.getMessage('TTL3', { seq: shortTtl[4]! })).time.getTime();
    await cluster.kill(leader);
    const watch = await cluster.client(survivors[1]!);
    const newLeader = await cluster.waitForStreamLeader(watch.jsm, 'TTL3', { not: leader });
    expect(survivors).toContain(newLeader);
    const goneAt = await until(async () => ((await watch.jsm.streams.info('TTL3')).state.messages === 2 ? Date.now() : null), 15_000);
    console.log(`TTL3: all five gone ${goneAt - (lastTsMs + 4000)} ms after the last one was due (leader ${leader} killed, new ${newLeader})`);
    // Due 4 s after their own (leader-assigned) timestamps: not restarted by the failover.
    expect(goneAt).toBeGreaterThanOrEqual(lastTsMs + 4000 - 20);
    expect(goneAt - (firstTsMs + 4000)).toBeLessThan(1500);
    await cluster.restart(leader);
    const contents = await cluster.replicaContents('TTL3', NAMES, { timeoutMs: 30_000 });
    for (const name of NAMES) {
      expect([...contents.get(name)!.content.entries()], name).toEqual([
        [keptA, 'kept-a'],
        [keptB, 'kept-b'],
      ]);
    }
    await Promise.all([admin.nc.close(), pub.nc.close(), watch.nc.close()]);
  }, 90_000);

  it('memory, with delete markers: the node leading when the TTLs run out writes each marker once, at the same sequence everywhere', async () => {
    const admin = await cluster.client('n1');
    // max_msgs_per_subject 1 keeps the 2s TTLs as sent (else raised to the marker TTL); markers live 60 s.
    await addStream(admin.jsm, {
      name: 'SDM3',
      subjects: ['sdm3.>'],
      num_replicas: 3,
      storage: 'memory' as never,
      max_msgs_per_subject: 1,
      subject_delete_marker_ttl: 60_000_000_000,
    } as never);
    const leader = (await cluster.waitForReplicasCurrent(admin.jsm, 'SDM3', 3)).cluster!.leader!;
    const survivors = NAMES.filter((n) => n !== leader);
    const pub = await cluster.client(survivors[0]!);
    const a = (await publish(pub.nc, 'sdm3.a', 'a', '2s')).seq;
    const dueMs = (await pub.jsm.streams.getMessage('SDM3', { seq: a })).time.getTime() + 2000;
    const b = (await publish(pub.nc, 'sdm3.b', 'b', '2s')).seq;
    const c = (await publish(pub.nc, 'sdm3.c', 'c')).seq;
    expect([a, b, c]).toEqual([1, 2, 3]);
    await cluster.kill(leader);
    const watch = await cluster.client(survivors[1]!);
    await cluster.waitForStreamLeader(watch.jsm, 'SDM3', { not: leader });
    let last: unknown = null;
    const state = await until(async () => {
      const st = (await watch.jsm.streams.info('SDM3')).state;
      last = st;
      return st.messages === 3 && st.last_seq === 5 ? st : null;
    }, 15_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; last state ${JSON.stringify(last)}`);
    });
    console.log(`SDM3: both markers in ${Date.now() - dueMs} ms after the first TTL ran out (leader killed before)`);
    expect([state.first_seq, state.last_seq]).toEqual([3, 5]);
    const markers = [await watch.jsm.streams.getMessage('SDM3', { seq: 4 }), await watch.jsm.streams.getMessage('SDM3', { seq: 5 })];
    expect(markers.map((m) => m.subject).sort()).toEqual(['sdm3.a', 'sdm3.b']);
    for (const m of markers) {
      expect(m.data.length).toBe(0);
      expect([m.header.get('Nats-Marker-Reason'), m.header.get('Nats-TTL'), m.header.get('Nats-Rollup')]).toEqual(['MaxAge', '1m0s', 'sub']);
    }
    // No second marker from another node that saw the same messages due (reports are retried, not doubled).
    await sleep(2500);
    expect((await watch.jsm.streams.info('SDM3')).state.last_seq).toBe(5);
    await cluster.restart(leader);
    const contents = await cluster.replicaContents('SDM3', NAMES, { timeoutMs: 30_000 });
    for (const name of NAMES) {
      expect([...contents.get(name)!.content.entries()].map(([seq, data]) => [seq, data]), name).toEqual([
        [3, 'c'],
        [4, ''],
        [5, ''],
      ]);
    }
    await Promise.all([admin.nc.close(), pub.nc.close(), watch.nc.close()]);
  }, 90_000);
});
