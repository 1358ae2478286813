// A replicated stream deleted and created again under the same name is a new stream: its consumers can be
// created at once (no lingering 10008 from the first incarnation's state), and a replicated stream's config
// update reaches its running consumers as on a single node.
import { describe, expect, it } from 'vitest';
import { AckPolicy, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream, apiRequest } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

let cluster: JsCluster;
/** Creates a durable pull consumer; returns how long until it succeeded and the error codes seen before. */
async function createConsumerTimed(nc: NatsConnection, stream: string, durable: string, timeoutMs: number): Promise<{ ms: number; errors: string[] }> {
  const t0 = Date.now();
  const errors: string[] = [];
  while (Date.now() - t0 < timeoutMs) {
    try {
      await apiRequest(nc, `$JS.API.CONSUMER.CREATE.${stream}.${durable}`, { stream_name: stream, config: { durable_name: durable, ack_policy: AckPolicy.Explicit } }, 2_000);
      return { ms: Date.now() - t0, errors };
    } catch (err) {
      errors.push((err as Error).message);
      await sleep(100);
    }
  }
  throw new Error(`consumer ${durable} not created within ${timeoutMs} ms: ${errors.slice(-3).join(' | ')}`);
}

useJsCluster({ size: 3, clusterName: 'RECREATE' }, (c) => (cluster = c));

describe('re-created replicated stream', () => {
  it('takes a consumer create within a few seconds after delete + create (no consumer in the first one)', async () => {
    const nc = await cluster.connect('n1');
    const jsm = await nc.jetstreamManager();
    await addStream(jsm, { name: 'AGAIN', subjects: ['again.>'], num_replicas: 3 });
    await jsm.streams.delete('AGAIN');
    await addStream(jsm, { name: 'AGAIN', subjects: ['again.>'], num_replicas: 3 });
    const first = await createConsumerTimed(nc, 'AGAIN', 'C1', 15_000);
    // The new stream's leader answers as soon as it leads: a few retries while it elects at most.
    expect(first.ms).toBeLessThan(5_000);
    const js = nc.jetstream();
    const ack = await js.publish('again.x', new TextEncoder().encode('one'));
    expect(ack.seq).toBe(1);
    const info = await jsm.consumers.info('AGAIN', 'C1');
    expect(info.num_pending).toBe(1);
  }, 60_000);

  it('does so again when the first incarnation had consumers and messages, through another node', async () => {
    const nc = await cluster.connect('n2');
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await addStream(jsm, { name: 'TWICE', subjects: ['twice.>'], num_replicas: 3 });
    await createConsumerTimed(nc, 'TWICE', 'OLD', 15_000);
    for (let i = 0; i < 5; i++) await js.publish('twice.a', new TextEncoder().encode(`m${i}`));
    await jsm.streams.delete('TWICE');
    await addStream(jsm, { name: 'TWICE', subjects: ['twice.>'], num_replicas: 3 });
    const created = await createConsumerTimed(nc, 'TWICE', 'NEW', 15_000);
    expect(created.ms).toBeLessThan(5_000);
    const names: string[] = [];
    for await (const c of await jsm.consumers.list('TWICE')) names.push(c.name);
    // The old incarnation's consumer went with it.
    expect(names).toEqual(['NEW']);
    const info = await jsm.streams.info('TWICE');
    expect(info.state.messages).toBe(0);
  }, 60_000);

  it('after a first incarnation busy with publishes still in flight, a durable create as the bench makes it', async () => {
    const nc = await cluster.connect('n1');
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const cfg = { name: 'BUSY', subjects: ['busy.>'], num_replicas: 3, storage: 'file', retention: 'limits', discard: 'old' } as const;
    await addStream(jsm, cfg);
    const body = new Uint8Array(128);
    for (let i = 0; i < 2_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, k) => js.publish(`busy.${k % 8}`, body)));
    }
    // Publishes through every node still being proposed when the delete comes.
    const pubs = await Promise.all(['n1', 'n2', 'n3'].map((n) => cluster.connect(n)));
    for (let i = 0; i < 3_000; i++) pubs[i % 3]!.publish(`busy.${i % 8}`, body, { reply: `_INBOX.ignored.${i % 3}` });
    await apiRequest(nc, '$JS.API.STREAM.DELETE.BUSY', '', 10_000);
    await addStream(jsm, cfg);
    await apiRequest(nc, '$JS.API.CONSUMER.DELETE.BUSY.D', '', 5_000).catch(() => undefined);
    const t0 = Date.now();
    const errors: string[] = [];
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        const config = { durable_name: 'D', ack_policy: 'explicit', deliver_policy: 'all', max_ack_pending: 20_000, num_replicas: 0 };
        await apiRequest(nc, '$JS.API.CONSUMER.DURABLE.CREATE.BUSY.D', { stream_name: 'BUSY', config }, 2_000);
        break;
      } catch (err) {
        errors.push((err as Error).message);
        await sleep(250);
      }
    }
    // At most a retry or two while the new group elects; never a run of 10008s.
    expect(errors.filter((e) => /10008/.test(e)).length).toBeLessThan(3);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect((await jsm.consumers.info('BUSY', 'D')).num_pending).toBe(0);
  }, 60_000);

  it('survives repeated delete + create rounds, with and without consumers', async () => {
    const nc = await cluster.connect('n2');
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const body = new Uint8Array(64);
    const times: number[] = [];
    const groups: string[] = [];
    for (let round = 0; round < 4; round++) {
      const created = await addStream(jsm, { name: 'LOOP', subjects: ['loop.>'], num_replicas: 3 });
      // Answered by the new group's leader, never by the just-deleted group's (still retiring) one: the
      // publishes below then find a leader serving the subjects.
      const group = (created.cluster as { raft_group?: string } | undefined)?.raft_group;
      expect(group).toMatch(/^S-LOOP-/);
      expect(groups).not.toContain(group);
      groups.push(group!);
      await Promise.all(Array.from({ length: 100 }, (_, k) => js.publish(`loop.${k % 8}`, body)));
      if (round % 2 === 1) await createConsumerTimed(nc, 'LOOP', `X${round}`, 15_000);
      times.push((await createConsumerTimed(nc, 'LOOP', 'C', 15_000)).ms);
      expect((await jsm.consumers.info('LOOP', 'C')).num_pending).toBe(100);
      await apiRequest(nc, '$JS.API.STREAM.DELETE.LOOP', '', 10_000);
    }
    expect(Math.max(...times)).toBeLessThan(5_000);
  }, 120_000);

  it('a replicated stream update reaches its running consumer (max_msgs lowers num_pending)', async () => {
    const nc = await cluster.connect('n3');
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await addStream(jsm, { name: 'UPD', subjects: ['upd.>'], num_replicas: 3 });
    await createConsumerTimed(nc, 'UPD', 'W', 15_000);
    for (let i = 0; i < 10; i++) await js.publish('upd.a', new TextEncoder().encode(`m${i}`));
    expect((await jsm.consumers.info('UPD', 'W')).num_pending).toBe(10);
    const cfg = (await jsm.streams.info('UPD')).config;
    await jsm.streams.update('UPD', { ...cfg, max_msgs: 4 });
    // The update applies on every replica; the leader's consumer counts what is left.
    let pending = -1;
    for (let i = 0; i < 50 && pending !== 4; i++) {
      pending = (await jsm.consumers.info('UPD', 'W')).num_pending;
      if (pending !== 4) await sleep(100);
    }
    expect(pending).toBe(4);
  }, 60_000);
});
