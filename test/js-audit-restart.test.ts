// Audit of issue 5 item 6 for an orderly restart (SIGTERM; kill -9 is covered by js-*-restart and
// js-durability*): stream configs and messages, consumer configs, delivered / acknowledged state, redelivery
// counts above 2, and what workqueue and interest retention removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckPolicy, connect, createInbox, nanos, RetentionPolicy, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

const running: FlotillaProcess[] = [];
const storeDir = mkdtempSync(join(tmpdir(), 'js-audit-restart-'));

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop().catch(() => undefined)));
  rmSync(storeDir, { recursive: true, force: true });
});

async function start(): Promise<{ server: FlotillaProcess; nc: NatsConnection }> {
  const server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
  running.push(server);
  return { server, nc: await connect({ servers: server.url, reconnect: false }) };
}

describe('orderly restart (audit)', () => {
  it('keeps streams, consumers, their state and redelivery counts, and retention removals', async () => {
    const first = await start();
    const jsm = await first.nc.jetstreamManager();
    const js = first.nc.jetstream();
    await jsm.streams.add({ name: 'RS', subjects: ['rs.>'], max_msgs: 100, description: 'kept' });
    for (let i = 1; i <= 5; i++) await js.publish('rs.x', `m${i}`);
    await jsm.streams.add({ name: 'WQ', subjects: ['wq.>'], retention: RetentionPolicy.Workqueue });
    await jsm.streams.add({ name: 'IN', subjects: ['in.>'], retention: RetentionPolicy.Interest });
    await jsm.consumers.add('WQ', { durable_name: 'w', ack_policy: AckPolicy.Explicit });
    await jsm.consumers.add('IN', { durable_name: 'i1', ack_policy: AckPolicy.Explicit });
    await jsm.consumers.add('IN', { durable_name: 'i2', ack_policy: AckPolicy.Explicit });
    for (let i = 1; i <= 3; i++) {
      await js.publish('wq.x', `w${i}`);
      await js.publish('in.x', `i${i}`);
    }
    const deliver = createInbox();
    await jsm.consumers.add('RS', { durable_name: 'push', deliver_subject: deliver, ack_policy: AckPolicy.Explicit });
    await jsm.consumers.add('RS', { durable_name: 'd', ack_policy: AckPolicy.Explicit });
    // one message only, so that a nak-ed message is the only thing the consumer can deliver next
    // (nats-server processes acks asynchronously, a fresh message could otherwise overtake it)
    await jsm.streams.add({ name: 'RD', subjects: ['rd'] });
    await js.publish('rd', 'again');
    await jsm.consumers.add('RD', { durable_name: 'r', ack_policy: AckPolicy.Explicit, ack_wait: nanos(2000) });

    // RS/d: m1 acked, m2 delivered and unacked; RD/r: its message delivered three times (two naks)
    const c = await js.consumers.get('RS', 'd');
    await (await c.next({ expires: 1000 }))!.ackAck();
    expect((await c.next({ expires: 1000 }))?.seq).toBe(2);
    const r = await js.consumers.get('RD', 'r');
    for (let round = 1; round <= 3; round++) {
      const m = await r.next({ expires: 1000 });
      expect([m?.seq, m?.info.redeliveryCount]).toEqual([1, round]);
      if (round < 3) m!.nak();
    }
    // WQ: w1 acked (removed); IN: i1 acked by both consumers (removed), i2 by one only (kept)
    const w = await js.consumers.get('WQ', 'w');
    await (await w.next({ expires: 1000 }))!.ackAck();
    for (const name of ['i1', 'i2']) {
      const ic = await js.consumers.get('IN', name);
      const first = await ic.next({ expires: 1000 });
      await first!.ackAck();
      if (name === 'i1') await (await ic.next({ expires: 1000 }))!.ackAck();
    }
    const before = await jsm.consumers.info('RS', 'd');
    expect(before.delivered).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    await first.nc.close();
    await first.server.stop(); // SIGTERM

    const second = await start();
    const jsm2 = await second.nc.jetstreamManager();
    const rs = await jsm2.streams.info('RS');
    expect(rs.config).toMatchObject({ max_msgs: 100, description: 'kept' });
    expect(rs.state).toMatchObject({ messages: 5, first_seq: 1, last_seq: 5, consumer_count: 2 });
    expect((await jsm2.consumers.info('RS', 'push')).config.deliver_subject).toBe(deliver);
    const after = await jsm2.consumers.info('RS', 'd');
    expect(after.delivered).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect(after.ack_floor).toMatchObject({ consumer_seq: 1, stream_seq: 1 });
    expect([after.num_ack_pending, after.num_redelivered, after.num_pending]).toEqual([1, 0, 3]);
    const rd = await jsm2.consumers.info('RD', 'r');
    expect(rd.delivered).toMatchObject({ consumer_seq: 3, stream_seq: 1 });
    expect([rd.num_ack_pending, rd.num_redelivered]).toEqual([1, 1]);
    const wq = await jsm2.streams.info('WQ');
    expect(wq.state).toMatchObject({ messages: 2, first_seq: 2, last_seq: 3 });
    const interest = await jsm2.streams.info('IN');
    expect(interest.state).toMatchObject({ messages: 2, first_seq: 2, last_seq: 3 });
    // RD's message comes back (after ack_wait) as its fourth delivery
    const r2 = await second.nc.jetstream().consumers.get('RD', 'r');
    let again = null;
    for (let i = 0; i < 5 && again === null; i++) again = await r2.next({ expires: 1000 });
    expect([again?.seq, again?.info.redeliveryCount]).toEqual([1, 4]);
    await again!.ackAck();
    await second.nc.close();
  });
});
