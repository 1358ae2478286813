import { describe, expect, it } from 'vitest';
import { parseAckReply } from '../src/consumer/ack-reply.js';
import { fixture, isStatus, settle, statusOf, type Fixture } from './support/consumer-fixture.js';

async function durable(f: Fixture, name: string, config: object = {}): Promise<void> {
  const r = await f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { durable_name: name, ack_policy: 'explicit', ...config } });
  if (r.error) throw new Error(JSON.stringify(r.error));
  await settle();
}

describe('pull consumers (CONSUMER.MSG.NEXT)', () => {
  it('delivers a batch with the v1 ack reply subject and pending counts', async () => {
    const f = await fixture();
    for (const s of ['s.a', 's.b', 's.c']) await f.publish(s, s);
    await durable(f, 'D');
    const msgs = await f.pull('D', { batch: 2 });
    expect(msgs.map((m) => m.subject)).toEqual(['s.a', 's.b']);
    expect(msgs.map((m) => m.data.toString())).toEqual(['s.a', 's.b']);
    const ts = (await f.stream.store.get(1))!.timestampNs;
    expect(msgs[0]!.reply).toBe(`$JS.ACK.S.D.1.1.1.${ts}.2`);
    expect(msgs[1]!.reply).toMatch(/^\$JS\.ACK\.S\.D\.1\.2\.2\.\d+\.1$/);
    expect(msgs.every((m) => m.route.startsWith('_INBOX.pull.'))).toBe(true);
    const info = await f.api('$JS.API.CONSUMER.INFO.S.D');
    expect(info.delivered).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect([info.num_ack_pending, info.num_pending]).toEqual([2, 1]);
  });

  it('answers no_wait with 404 when empty and 408 with pending headers after a partial batch', async () => {
    const f = await fixture();
    await durable(f, 'D');
    const empty = await f.pull('D', { batch: 3, no_wait: true });
    expect(empty).toHaveLength(1);
    expect(statusOf(empty[0]!)).toMatchObject({ code: 404, description: 'No Messages' });
    await f.publish('s.a');
    await f.publish('s.b');
    const partial = await f.pull('D', { batch: 3, no_wait: true });
    expect(partial).toHaveLength(3);
    expect(isStatus(partial[2]!)).toBe(true);
    expect(statusOf(partial[2]!)).toEqual({
      code: 408,
      description: 'Request Timeout',
      headers: { 'Nats-Pending-Messages': '1', 'Nats-Pending-Bytes': '0' },
    });
  });

  it('expires waiting requests with 408 and serves requests as messages arrive', async () => {
    const f = await fixture();
    await durable(f, 'D');
    const box = f.bus.inbox('_INBOX.exp');
    await f.pull('D', { batch: 5, expires: 2e9 }, '_INBOX.exp');
    expect((await f.api('$JS.API.CONSUMER.INFO.S.D')).num_waiting).toBe(1);
    await f.publish('s.a');
    await settle();
    expect(box.msgs).toHaveLength(1);
    f.clock.advance(2000);
    await settle();
    expect(box.msgs).toHaveLength(2);
    expect(statusOf(box.msgs[1]!)).toEqual({
      code: 408,
      description: 'Request Timeout',
      headers: { 'Nats-Pending-Messages': '4', 'Nats-Pending-Bytes': '0' },
    });
    expect((await f.api('$JS.API.CONSUMER.INFO.S.D')).num_waiting).toBe(0);
  });

  it('sends idle heartbeats to waiting requests and refuses too-large heartbeats', async () => {
    const f = await fixture();
    await durable(f, 'D');
    const bad = await f.pull('D', { batch: 1, expires: 1e9, idle_heartbeat: 1e9 });
    expect(statusOf(bad[0]!)).toMatchObject({ code: 400, description: 'Bad Request - heartbeat value too large' });
    const box = f.bus.inbox('_INBOX.hb');
    await f.pull('D', { batch: 1, expires: 10e9, idle_heartbeat: 1e9 }, '_INBOX.hb');
    f.clock.advance(1000);
    expect(statusOf(box.msgs[0]!)).toEqual({
      code: 100,
      description: 'Idle Heartbeat',
      headers: { 'Nats-Last-Consumer': '0', 'Nats-Last-Stream': '0' },
    });
  });

  it('enforces max_waiting, max_batch, max_expires and max_bytes', async () => {
    const f = await fixture();
    await durable(f, 'D', { max_waiting: 1, max_batch: 10, max_expires: 5e9, max_bytes: 1000 });
    const a = f.bus.inbox('_INBOX.w1');
    await f.pull('D', { batch: 1, expires: 1e9 }, '_INBOX.w1');
    const full = await f.pull('D', { batch: 1, expires: 1e9 });
    expect(statusOf(full[0]!)).toMatchObject({ code: 409, description: 'Exceeded MaxWaiting' });
    a.close();
    expect(statusOf((await f.pull('D', { batch: 11 }))[0]!)).toMatchObject({ code: 409, description: 'Exceeded MaxRequestBatch of 10' });
    expect(statusOf((await f.pull('D', { batch: 1, expires: 6e9 }))[0]!)).toMatchObject({ code: 409, description: 'Exceeded MaxRequestExpires of 5s' });
    expect(statusOf((await f.pull('D', { batch: 1, max_bytes: 2000 }))[0]!)).toMatchObject({ code: 409, description: 'Exceeded MaxRequestMaxBytes of 1000' });
  });

  it('ends a request with 409 when the next message does not fit max_bytes', async () => {
    const f = await fixture();
    await durable(f, 'D');
    await f.publish('s.a', 'x'.repeat(100));
    const msgs = await f.pull('D', { batch: 2, max_bytes: 50 });
    expect(msgs).toHaveLength(1);
    expect(statusOf(msgs[0]!)).toEqual({
      code: 409,
      description: 'Message Size Exceeds MaxBytes',
      headers: { 'Nats-Pending-Messages': '2', 'Nats-Pending-Bytes': '50' },
    });
  });

  it('tells a request whose batch completed with bytes to spare (2.10 Batch Completed)', async () => {
    const f = await fixture();
    await durable(f, 'D');
    await f.publish('s.a', 'x'.repeat(10));
    const msgs = await f.pull('D', { batch: 1, max_bytes: 1000 });
    expect(msgs).toHaveLength(2);
    expect(statusOf(msgs[1]!)).toEqual({
      code: 409,
      description: 'Batch Completed',
      headers: { 'Nats-Pending-Messages': '0', 'Nats-Pending-Bytes': String(1000 - 13) },
    });
  });

  it('answers a pull on a push consumer with 409', async () => {
    const f = await fixture();
    await f.api('$JS.API.CONSUMER.CREATE.S.P', { stream_name: 'S', config: { durable_name: 'P', deliver_subject: 'out' } });
    expect(statusOf((await f.pull('P', { batch: 1 }))[0]!)).toMatchObject({ code: 409, description: 'Consumer is push based' });
  });

  it('tells waiting requests the consumer was deleted', async () => {
    const f = await fixture();
    await durable(f, 'D');
    const box = f.bus.inbox('_INBOX.del');
    await f.pull('D', { batch: 1, expires: 30e9 }, '_INBOX.del');
    await f.api('$JS.API.CONSUMER.DELETE.S.D');
    expect(statusOf(box.msgs[0]!)).toMatchObject({ code: 409, description: 'Consumer Deleted' });
  });

  it('serves concurrent requests round-robin and drops requests whose inbox went away', async () => {
    const f = await fixture();
    await durable(f, 'D');
    const a = f.bus.inbox('_INBOX.a');
    const b = f.bus.inbox('_INBOX.b');
    const gone = f.bus.inbox('_INBOX.gone');
    await f.pull('D', { batch: 5, expires: 30e9 }, '_INBOX.gone');
    gone.close();
    await f.pull('D', { batch: 2, expires: 30e9 }, '_INBOX.a');
    await f.pull('D', { batch: 2, expires: 30e9 }, '_INBOX.b');
    for (let i = 0; i < 4; i++) await f.publish('s.a', String(i));
    await settle();
    expect(a.msgs.map((m) => m.data.toString())).toEqual(['0', '2']);
    expect(b.msgs.map((m) => m.data.toString())).toEqual(['1', '3']);
    expect(gone.msgs).toHaveLength(0);
  });

  it('parses the ack subject back', () => {
    expect(parseAckReply('$JS.ACK.S.D.3.10.12.1795983481224968091.0')).toEqual({ deliveryCount: 3, streamSeq: 10, consumerSeq: 12 });
  });
});
