import { describe, expect, it } from 'vitest';
import { ack, fixture, header, settle, statusOf, type Fixture } from './support/consumer-fixture.js';

async function push(f: Fixture, name: string, config: object): Promise<Record<string, unknown>> {
  const r = await f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { name, deliver_subject: 'out', ...config } });
  if (r.error) throw new Error(JSON.stringify(r.error));
  await settle();
  return r;
}

describe('push consumers', () => {
  it('delivers to the deliver subject only while it has interest, keeping the message subject', async () => {
    const f = await fixture();
    await f.publish('s.a', '1');
    await push(f, 'P', { durable_name: 'P', ack_policy: 'explicit' });
    expect(f.bus.published.filter((m) => m.route === 'out')).toHaveLength(0);
    expect((await f.api('$JS.API.CONSUMER.INFO.S.P')).push_bound).toBeUndefined();
    const box = f.bus.inbox('out');
    f.clock.advance(100);
    await settle();
    expect(box.msgs.map((m) => [m.subject, m.data.toString()])).toEqual([['s.a', '1']]);
    expect((await f.api('$JS.API.CONSUMER.INFO.S.P')).push_bound).toBe(true);
    await f.publish('s.b', '2');
    await settle();
    expect(box.msgs.map((m) => m.subject)).toEqual(['s.a', 's.b']);
  });

  it('sends idle heartbeats with the last sequences and headers_only bodies with Nats-Msg-Size', async () => {
    const f = await fixture();
    const box = f.bus.inbox('out');
    await f.publish('s.a', 'hello');
    await push(f, 'H', { ack_policy: 'none', idle_heartbeat: 1e9, headers_only: true });
    expect(box.msgs[0]!.data.length).toBe(0);
    expect(header(box.msgs[0]!, 'Nats-Msg-Size')).toBe('5');
    f.clock.advance(1000);
    await settle();
    expect(statusOf(box.msgs[1]!)).toEqual({
      code: 100,
      description: 'Idle Heartbeat',
      headers: { 'Nats-Last-Consumer': '1', 'Nats-Last-Stream': '1' },
    });
  });

  it('pauses at the flow-control window until the client answers', async () => {
    const f = await fixture();
    const box = f.bus.inbox('out');
    const chunk = 'x'.repeat(100_000);
    for (let i = 0; i < 30; i++) await f.publish('s.a', chunk);
    await push(f, 'F', { ack_policy: 'none', flow_control: true, idle_heartbeat: 5e9 });
    await settle(50);
    const fc = box.msgs.filter((m) => statusOf(m).description === 'FlowControl Request');
    const data = box.msgs.filter((m) => m.data.length > 0);
    expect(fc).toHaveLength(1);
    expect(fc[0]!.reply).toMatch(/^\$JS\.FC\.S\.F\./);
    expect(data.length).toBeGreaterThan(10);
    expect(data.length).toBeLessThan(30);
    f.bus.publish(fc[0]!.reply!, null, null, Buffer.alloc(0));
    await settle(50);
    expect(box.msgs.filter((m) => m.data.length > 0).length).toBeGreaterThan(data.length);
  });

  it('paces deliveries to rate_limit_bps', async () => {
    const f = await fixture();
    const box = f.bus.inbox('out');
    for (let i = 0; i < 3; i++) await f.publish('s.a', 'x'.repeat(997));
    // 1000 bytes per message at 8000 bps = one per second
    await push(f, 'R', { ack_policy: 'none', rate_limit_bps: 8000 });
    expect(box.msgs).toHaveLength(1);
    f.clock.advance(1000);
    await settle();
    expect(box.msgs).toHaveLength(2);
  });

  it('removes an ephemeral push consumer after inactive_threshold without interest', async () => {
    const f = await fixture();
    await push(f, 'E', { ack_policy: 'none', inactive_threshold: 1e9 });
    f.clock.advance(500);
    expect(f.service.consumerCount('S')).toBe(1);
    f.clock.advance(1500);
    await settle();
    expect(f.service.consumerCount('S')).toBe(0);
  });

  it('delivers last_per_subject then new messages, with pending counts KV relies on', async () => {
    const f = await fixture();
    const box = f.bus.inbox('out');
    for (const s of ['s.k1', 's.k2', 's.k1', 's.k3', 's.k2']) await f.publish(s, s);
    const r = await push(f, 'L', { ack_policy: 'none', deliver_policy: 'last_per_subject', filter_subject: 's.>' });
    expect(r['num_pending']).toBe(3);
    // observed on nats-server: the sequence just before the first message it will deliver
    expect((r['delivered'] as { stream_seq: number }).stream_seq).toBe(2);
    // [stream seq, consumer seq, pending] of k1@3, k3@4, k2@5
    expect(box.msgs.map((m) => m.reply!.split('.').slice(5).filter((_, i) => i !== 2))).toEqual([
      ['3', '1', '2'],
      ['4', '2', '1'],
      ['5', '3', '0'],
    ]);
    await f.publish('s.k4', 'new');
    await settle();
    expect(box.msgs[3]!.subject).toBe('s.k4');
  });

  it('ack explicit push consumer redelivers after ack_wait', async () => {
    const f = await fixture();
    const box = f.bus.inbox('out');
    await f.publish('s.a');
    await push(f, 'X', { durable_name: 'X', ack_policy: 'explicit', ack_wait: 1e9 });
    f.clock.advance(1000);
    await settle();
    expect(box.msgs).toHaveLength(2);
    ack(f, box.msgs[1]!);
    f.clock.advance(5000);
    await settle();
    expect(box.msgs).toHaveLength(2);
  });
});
