// Priority groups on three nodes with R3 consumers, through the stock @nats-io/jetstream 3.4.0 client: overflow
// with two workers, and pinned_client with two workers across a kill -9 of the leader (the new leader starts
// unpinned, as nats-server's pin lives in its leader's memory, and pins one worker; the other gets nothing),
// the pin moving when its holder goes away, and UNPIN on the new leader. nats-server 2.9.10 predates priority
// groups (2.11): Flotilla only; the expected values are nats-server 2.14.5's (consumer.go nextWaiting,
// processNextMsgRequest, setPinnedTimer; jetstream_api.go jsConsumerUnpinRequest).
import { describe, it, expect } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { AGAINST_NATS_SERVER, JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';
import { claimServerVersion } from './helpers/jetstream-v3-server.js';

const dec = new TextDecoder();
const SEC_NS = 1_000_000_000;
let cluster: JsCluster;

useJsCluster({ size: 3, clusterName: 'PRIO' }, (c) => (cluster = c));

/** nats.js turns priority groups on for servers of 2.11.0 and later; Flotilla reports 2.11.0, and `prioritized` is gated on 2.12 (docs/compatibility.md). */
const claimFeatureLevel = (conn: NatsConnection): NatsConnection => claimServerVersion(conn, '2.14.0');

async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function consumerLeader(jsm: JetStreamManager, stream: string, name: string, not?: string): Promise<string> {
  let leader = '';
  await until(
    async () => {
      const info = await jsm.consumers.info(stream, name).catch(() => null);
      leader = info?.cluster?.leader ?? '';
      return leader !== '' && leader !== not && (info?.cluster?.replicas ?? []).every((r) => r.current);
    },
    20_000,
    `consumer ${name} leader`,
  );
  return leader;
}

describe.skipIf(AGAINST_NATS_SERVER)('priority groups on R3 consumers', () => {
  it('overflow with two workers: the min_pending worker helps only with a backlog', async () => {
    const admin = await cluster.connect('n1');
    await addStream(await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 }), { name: 'OV3', subjects: ['ov3.>'], num_replicas: 3 });
    const nc = claimFeatureLevel(await connect({ servers: cluster.nodes.map((n) => n.url) }));
    try {
      const jsm = await jetstreamManager(nc, { timeout: 10_000 });
      const js = jetstream(nc, { timeout: 10_000 });
      await jsm.consumers.add('OV3', { durable_name: 'W', ack_policy: AckPolicy.Explicit, num_replicas: 3, priority_groups: ['jobs'], priority_policy: 'overflow' } as never);
      await consumerLeader(jsm, 'OV3', 'W');
      for (let i = 1; i <= 8; i++) await js.publish('ov3.a', `o-${i}`);
      const c = await js.consumers.get('OV3', 'W');
      const b: string[] = [];
      for await (const m of await c.fetch({ group: 'jobs', min_pending: 4, max_messages: 8, expires: 1500 })) {
        b.push(dec.decode(m.data));
        m.ack();
      }
      // Served while 4 or more were pending (this one included): o-1..o-5.
      expect(b).toEqual(['o-1', 'o-2', 'o-3', 'o-4', 'o-5']);
      const a: string[] = [];
      for await (const m of await c.fetch({ group: 'jobs', max_messages: 8, expires: 1000 })) {
        a.push(dec.decode(m.data));
        m.ack();
      }
      expect(a).toEqual(['o-6', 'o-7', 'o-8']);
    } finally {
      await nc.close().catch(() => undefined);
    }
  }, 40_000);

  it('pinned_client with two workers: one holds the pin across a leader kill; it moves when the holder goes away; unpin', async () => {
    await cluster.ensureAllRunning();
    const admin = await cluster.connect('n1');
    const adminJsm = await admin.jetstreamManager({ checkAPI: false, timeout: 10_000 });
    await addStream(adminJsm, { name: 'PN3', subjects: ['pn3.>'], num_replicas: 3 });
    const leader = (await cluster.waitForReplicasCurrent(adminJsm, 'PN3', 3)).cluster!.leader!;
    const survivors = cluster.nodes.filter((n) => n.name !== leader);
    const conns = await Promise.all(survivors.map((n) => connect({ servers: n.url, reconnect: false }).then(claimFeatureLevel)));
    try {
      const [ncA, ncB] = conns as [NatsConnection, NatsConnection];
      const jsm = await jetstreamManager(ncA, { timeout: 10_000 });
      const js = jetstream(ncA, { timeout: 10_000 });
      await jsm.consumers.add('PN3', {
        durable_name: 'PIN',
        ack_policy: AckPolicy.Explicit,
        num_replicas: 3,
        priority_groups: ['jobs'],
        priority_policy: 'pinned_client',
        priority_timeout: 2 * SEC_NS,
      } as never);
      expect(await consumerLeader(jsm, 'PN3', 'PIN')).toBe(leader);
      const got: Record<'A' | 'B', Array<{ data: string; pin: string }>> = { A: [], B: [] };
      const worker = async (name: 'A' | 'B', conn: NatsConnection) => {
        const msgs = await (await jetstream(conn, { timeout: 10_000 }).consumers.get('PN3', 'PIN')).consume({ group: 'jobs', max_messages: 10, expires: 1000 });
        void (async () => {
          for await (const m of msgs) {
            got[name].push({ data: dec.decode(m.data), pin: m.headers?.get('Nats-Pin-Id') ?? '' });
            m.ack();
          }
        })();
        return msgs;
      };
      const workers = { A: await worker('A', ncA), B: await worker('B', ncB) };
      for (let i = 1; i <= 5; i++) await js.publish('pn3.a', `p-${i}`);
      await until(() => got.A.length + got.B.length === 5, 10_000, 'first five delivered');
      const before = got.A.length === 5 ? 'A' : 'B';
      expect(got[before === 'A' ? 'B' : 'A']).toEqual([]);
      const firstPin = got[before][0]!.pin;
      expect(firstPin).toMatch(/^\w{22}$/);

      // The acks reach the replicas before the kill (else the new leader may deliver p-4.. again: at least once).
      await until(async () => {
        const info = await jsm.consumers.info('PN3', 'PIN');
        return info.ack_floor.stream_seq === 5 && (info.cluster?.replicas ?? []).every((r) => r.current);
      }, 10_000, 'acks replicated');
      const killedAt = Date.now();
      await cluster.kill(leader);
      const newLeader = await consumerLeader(jsm, 'PN3', 'PIN', leader);
      console.log(`leader ${leader} killed; consumer leader ${newLeader} after ${Date.now() - killedAt} ms`);
      // The new leader pins one worker afresh; the other gets nothing.
      const countA = got.A.length;
      const countB = got.B.length;
      for (let i = 6; i <= 10; i++) await js.publish('pn3.a', `p-${i}`);
      // Only the new messages count: a delivery the old leader made but had not replicated may come again.
      const fresh = (w: 'A' | 'B', from: number) => got[w].slice(from).filter((m) => Number(m.data.slice(2)) > 5);
      await until(() => fresh('A', countA).length + fresh('B', countB).length >= 5, 15_000, 'five delivered after the kill').catch(async (e: Error) => {
        const info = await jsm.consumers.info('PN3', 'PIN').catch((x: Error) => x.message);
        throw new Error(`${e.message}; A ${JSON.stringify(got.A.slice(countA))}, B ${JSON.stringify(got.B.slice(countB))}; ${JSON.stringify(info)}`);
      });
      const after = fresh('A', countA).length > 0 ? 'A' : 'B';
      const other = after === 'A' ? 'B' : 'A';
      expect(fresh(after, after === 'A' ? countA : countB).map((m) => m.data)).toEqual(['p-6', 'p-7', 'p-8', 'p-9', 'p-10']);
      expect(fresh(other, other === 'A' ? countA : countB)).toEqual([]);
      const secondPin = got[after].at(-1)!.pin;
      expect(secondPin).not.toBe(firstPin);
      expect((await jsm.consumers.info('PN3', 'PIN')).priority_groups).toEqual([{ group: 'jobs', pinned_client_id: secondPin, pinned_ts: expect.any(String) }]);

      // The holder goes away: the pin moves to the other worker after priority_timeout.
      const otherBefore = got[other].length;
      workers[after].stop();
      await until(async () => (await jsm.consumers.info('PN3', 'PIN')).priority_groups?.[0]?.pinned_client_id !== secondPin, 10_000, 'pin released');
      for (let i = 11; i <= 13; i++) await js.publish('pn3.a', `p-${i}`);
      await until(() => got[other].length === otherBefore + 3, 10_000, 'three delivered to the other worker');
      expect(got[other].slice(otherBefore).map((m) => m.data)).toEqual(['p-11', 'p-12', 'p-13']);
      const thirdPin = got[other].at(-1)!.pin;
      expect(thirdPin).not.toBe(secondPin);

      // UNPIN through the new leader: the pin is dropped, and the remaining worker pins again.
      await expect(jsm.consumers.unpin('PN3', 'PIN', 'jobs')).resolves.toMatchObject({ type: 'io.nats.jetstream.api.v1.consumer_unpin_response' });
      for (let i = 14; i <= 15; i++) await js.publish('pn3.a', `p-${i}`);
      await until(() => got[other].length === otherBefore + 5, 10_000, 'two delivered after unpin');
      expect(got[other].at(-1)!.pin).not.toBe(thirdPin);
      workers[other].stop();
    } finally {
      for (const c of conns) await c.close().catch(() => undefined);
      await cluster.restart(leader);
    }
  }, 60_000);
});
