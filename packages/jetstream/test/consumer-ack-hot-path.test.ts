// The allocation-free ack path: AckReplyReader agrees with parseAckReply, and the ack floor moves as the
// map-walking version did, in and out of order.
import { describe, expect, it } from 'vitest';
import { AckReplyReader, parseAckReply } from '../src/consumer/ack-reply.js';
import { ConsumerState } from '../src/consumer/consumer-state.js';
import { ack, fixture, isStatus, settle } from './support/consumer-fixture.js';

describe('AckReplyReader', () => {
  const subjects = [
    '$JS.ACK.S.D.3.10.12.1795983481224968091.0',
    '$JS.ACK.S.D.1.1.1.1.5',
    '$JS.ACK.ORDERS.worker.1.9007199254740991.42.0.0',
    '$JS.ACK.S.D.1.90071992547409910.42.0.0', // sseq beyond a safe integer: rejected
    '$JS.ACK.S.D.1.-5.2.0.0', // not a plain decimal: parseAckReply's reading
    '$JS.ACK.S.D.x.5.2.0.0',
    '$JS.ACK.S.D.1.1e3.2.0.0',
    '$JS.ACK.S.D.1..2.0.0',
    '1.2.3',
    'a.1.2.3.4',
  ];
  it.each(subjects)('reads %s as parseAckReply does', (subject) => {
    const reader = new AckReplyReader();
    const expected = parseAckReply(subject);
    expect(reader.read(subject)).toBe(expected !== null);
    if (expected !== null) {
      expect({ deliveryCount: reader.deliveryCount, streamSeq: reader.streamSeq, consumerSeq: reader.consumerSeq }).toEqual(expected);
    }
  });

  it('overwrites the previous reading', () => {
    const reader = new AckReplyReader();
    expect(reader.read('$JS.ACK.S.D.2.7.9.0.0')).toBe(true);
    expect(reader.read('$JS.ACK.S.D.1.3.4.0.0')).toBe(true);
    expect([reader.deliveryCount, reader.streamSeq, reader.consumerSeq]).toEqual([1, 3, 4]);
  });
});

describe('ConsumerState ack floor', () => {
  it('follows in-order acks one by one', () => {
    const s = new ConsumerState('explicit');
    for (let i = 1; i <= 1000; i++) s.deliver(i, i, 1, 0);
    for (let i = 1; i <= 999; i++) {
      expect(s.ack(i, i).settled).toEqual([i]);
      expect([s.adflr, s.asflr]).toEqual([i, i]);
    }
    s.ack(1000, 1000);
    expect([s.adflr, s.asflr, s.pending.size]).toEqual([1000, 1000, 0]);
  });

  it('jumps over a gap wider than the probe to the next pending message', () => {
    const s = new ConsumerState('explicit');
    for (let i = 1; i <= 300; i++) s.deliver(i, i, 1, 0);
    for (let i = 2; i <= 200; i++) s.ack(i, i); // out of order: the floor stays at 0
    expect([s.adflr, s.asflr]).toEqual([0, 0]);
    s.ack(1, 1);
    expect([s.adflr, s.asflr]).toEqual([200, 200]);
  });

  it('skips stream sequences a filtered consumer never delivered', () => {
    const s = new ConsumerState('explicit');
    s.deliver(10, 1, 1, 0);
    s.deliver(20, 2, 1, 0);
    s.deliver(500, 3, 1, 0);
    s.ack(10, 1);
    expect([s.adflr, s.asflr]).toEqual([1, 19]);
    s.ack(20, 2);
    expect([s.adflr, s.asflr]).toEqual([2, 499]);
  });
});

describe('long drains (read-ahead prefetch, in-memory delivery)', () => {
  it('delivers 1,000 messages once each, in order, across several read-aheads', async () => {
    const f = await fixture();
    for (let i = 0; i < 1000; i++) await f.publish(i % 2 === 0 ? 's.a' : 's.b', String(i));
    const r = await f.api('$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    expect(r.error).toBeUndefined();
    const got: string[] = [];
    for (let round = 0; round < 10 && got.length < 1000; round++) {
      const msgs = await f.pull('D', { batch: 300 });
      for (const m of msgs) {
        got.push(m.data.toString());
        ack(f, m);
      }
      await settle();
    }
    expect(got).toEqual(Array.from({ length: 1000 }, (_, i) => String(i)));
    const info = await f.api('$JS.API.CONSUMER.INFO.S.D');
    expect(info.ack_floor).toMatchObject({ consumer_seq: 1000, stream_seq: 1000 });
    expect([info.num_ack_pending, info.num_pending]).toEqual([0, 0]);
  });

  it('a filtered consumer gets only its subject across read-aheads, and messages stored meanwhile', async () => {
    const f = await fixture();
    for (let i = 0; i < 700; i++) await f.publish(i % 3 === 0 ? 's.a' : 's.b', String(i));
    const r = await f.api('$JS.API.CONSUMER.CREATE.S.F', { stream_name: 'S', config: { durable_name: 'F', ack_policy: 'explicit', filter_subject: 's.b' } });
    expect(r.error).toBeUndefined();
    const first = await f.pull('F', { batch: 200 });
    for (let i = 700; i < 800; i++) await f.publish(i % 3 === 0 ? 's.a' : 's.b', String(i));
    const rest: string[] = [];
    for (let round = 0; round < 10; round++) {
      const msgs = await f.pull('F', { batch: 200, no_wait: true });
      const data = msgs.filter((m) => !isStatus(m));
      rest.push(...data.map((m) => m.data.toString()));
      if (data.length < 200) break;
    }
    const expected = Array.from({ length: 800 }, (_, i) => i).filter((i) => i % 3 !== 0).map(String);
    expect([...first.map((m) => m.data.toString()), ...rest]).toEqual(expected);
  });
});
