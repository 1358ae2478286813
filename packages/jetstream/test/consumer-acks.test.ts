import { describe, expect, it } from 'vitest';
import { ack, fixture, settle, type Fixture } from './support/consumer-fixture.js';

async function durable(f: Fixture, name: string, config: object = {}): Promise<void> {
  const r = await f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { durable_name: name, ack_policy: 'explicit', ...config } });
  if (r.error) throw new Error(JSON.stringify(r.error));
  await settle();
}

async function info(f: Fixture, name = 'D') {
  return f.api(`$JS.API.CONSUMER.INFO.S.${name}`);
}

describe('acknowledgements and redelivery', () => {
  it('moves the ack floor like nats-server for out-of-order explicit acks', async () => {
    const f = await fixture();
    for (let i = 0; i < 4; i++) await f.publish('s.a', String(i));
    await durable(f, 'D');
    const msgs = await f.pull('D', { batch: 4 });
    ack(f, msgs[1]!);
    await settle();
    expect((await info(f)).ack_floor).toMatchObject({ consumer_seq: 0, stream_seq: 0 });
    ack(f, msgs[0]!, '');
    await settle();
    let i = await info(f);
    expect(i.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect(i.num_ack_pending).toBe(2);
    ack(f, msgs[3]!, '+ACK');
    ack(f, msgs[2]!, '+OK');
    await settle();
    i = await info(f);
    expect(i.ack_floor).toMatchObject({ consumer_seq: 4, stream_seq: 4 });
    expect(i.num_ack_pending).toBe(0);
  });

  it('redelivers after ack_wait with a higher delivery count and a new consumer sequence', async () => {
    const f = await fixture();
    await f.publish('s.a', 'one');
    await durable(f, 'D', { ack_wait: 1e9 });
    const box = f.bus.inbox('_INBOX.r');
    await f.pull('D', { batch: 5, expires: 60e9 }, '_INBOX.r');
    expect(box.msgs[0]!.reply).toMatch(/^\$JS\.ACK\.S\.D\.1\.1\.1\./);
    f.clock.advance(999);
    await settle();
    expect(box.msgs).toHaveLength(1);
    f.clock.advance(1);
    await settle();
    expect(box.msgs).toHaveLength(2);
    expect(box.msgs[1]!.reply).toMatch(/^\$JS\.ACK\.S\.D\.2\.1\.2\.\d+\.0$/);
    const i = await info(f);
    expect([i.num_redelivered, i.num_ack_pending, i.delivered.consumer_seq]).toEqual([1, 1, 2]);
    ack(f, box.msgs[1]!);
    await settle();
    const after = await info(f);
    expect([after.num_redelivered, after.num_ack_pending]).toEqual([0, 0]);
    expect(after.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 1 });
  });

  it('+WPI resets the ack timer, -NAK redelivers now or after its delay', async () => {
    const f = await fixture();
    await f.publish('s.a', 'one');
    await durable(f, 'D', { ack_wait: 1e9 });
    const box = f.bus.inbox('_INBOX.n');
    await f.pull('D', { batch: 10, expires: 600e9 }, '_INBOX.n');
    f.clock.advance(800);
    ack(f, box.msgs[0]!, '+WPI');
    f.clock.advance(800);
    await settle();
    expect(box.msgs).toHaveLength(1);
    ack(f, box.msgs[0]!, '-NAK');
    await settle();
    expect(box.msgs).toHaveLength(2);
    ack(f, box.msgs[1]!, '-NAK {"delay":5000000000}');
    f.clock.advance(4000);
    await settle();
    expect(box.msgs).toHaveLength(2);
    f.clock.advance(1000);
    await settle();
    expect(box.msgs).toHaveLength(3);
    expect(box.msgs[2]!.reply).toMatch(/^\$JS\.ACK\.S\.D\.3\.1\.3\./);
  });

  it('+TERM stops redelivery and publishes the terminated advisory with its reason', async () => {
    const f = await fixture();
    await f.publish('s.a', 'one');
    await durable(f, 'D', { ack_wait: 1e9 });
    const adv = f.bus.inbox('$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.D');
    const msgs = await f.pull('D', { batch: 1 });
    ack(f, msgs[0]!, '+TERM bad payload');
    f.clock.advance(5000);
    await settle();
    expect((await info(f)).num_ack_pending).toBe(0);
    const body = JSON.parse(adv.msgs[0]!.data.toString());
    expect(body).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.terminated', stream: 'S', consumer: 'D', stream_seq: 1, consumer_seq: 1, deliveries: 1, reason: 'bad payload' });
  });

  it('stops at max_deliver with the MAX_DELIVERIES advisory, following backoff', async () => {
    const f = await fixture();
    await f.publish('s.a', 'one');
    await durable(f, 'D', { max_deliver: 3, backoff: [1e9, 2e9] });
    expect((await info(f)).config.ack_wait).toBe(1e9);
    const adv = f.bus.inbox('$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.D');
    const box = f.bus.inbox('_INBOX.m');
    await f.pull('D', { batch: 10, expires: 600e9 }, '_INBOX.m');
    f.clock.advance(1000);
    await settle();
    expect(box.msgs).toHaveLength(2);
    f.clock.advance(1999);
    await settle();
    expect(box.msgs).toHaveLength(2);
    f.clock.advance(1);
    await settle();
    expect(box.msgs).toHaveLength(3);
    f.clock.advance(10_000);
    await settle();
    expect(box.msgs).toHaveLength(3);
    expect(JSON.parse(adv.msgs[0]!.data.toString())).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.max_deliver', stream: 'S', consumer: 'D', stream_seq: 1, deliveries: 3 });
    expect((await info(f)).num_ack_pending).toBe(0);
  });

  it('ack_policy all acknowledges everything up to the acked message', async () => {
    const f = await fixture();
    for (let i = 0; i < 5; i++) await f.publish('s.a');
    await durable(f, 'D', { ack_policy: 'all' });
    const msgs = await f.pull('D', { batch: 5 });
    ack(f, msgs[2]!);
    await settle();
    const i = await info(f);
    expect(i.ack_floor).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
    expect(i.num_ack_pending).toBe(2);
  });

  it('answers ack-sync requests, and +NXT acks then pulls more', async () => {
    const f = await fixture();
    for (let i = 0; i < 3; i++) await f.publish('s.a', String(i));
    await durable(f, 'D');
    const first = await f.pull('D', { batch: 1 });
    const syncBox = f.bus.inbox('_INBOX.sync');
    ack(f, first[0]!, '+ACK', '_INBOX.sync');
    await settle();
    expect(syncBox.msgs).toHaveLength(1);
    expect(syncBox.msgs[0]!.data.length).toBe(0);
    const nxt = f.bus.inbox('_INBOX.nxt');
    const second = await f.pull('D', { batch: 1 });
    ack(f, second[0]!, '+NXT {"batch":1}', '_INBOX.nxt');
    await settle();
    expect(nxt.msgs.map((m) => m.data.toString())).toEqual(['2']);
    expect((await info(f)).ack_floor.stream_seq).toBe(2);
  });

  it('respects max_ack_pending until acks free room', async () => {
    const f = await fixture();
    for (let i = 0; i < 5; i++) await f.publish('s.a', String(i));
    await durable(f, 'D', { max_ack_pending: 2 });
    const box = f.bus.inbox('_INBOX.p');
    await f.pull('D', { batch: 5, expires: 600e9 }, '_INBOX.p');
    expect(box.msgs).toHaveLength(2);
    ack(f, box.msgs[0]!);
    await settle();
    expect(box.msgs).toHaveLength(3);
  });

  it('ack_policy none moves the floor on delivery', async () => {
    const f = await fixture();
    for (let i = 0; i < 2; i++) await f.publish('s.a');
    await durable(f, 'D', { ack_policy: 'none' });
    await f.pull('D', { batch: 2 });
    const i = await info(f);
    expect(i.ack_floor).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect(i.num_ack_pending).toBe(0);
  });
});
