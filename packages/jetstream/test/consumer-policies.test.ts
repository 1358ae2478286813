import { describe, expect, it } from 'vitest';
import { fixture, settle, type Fixture } from './support/consumer-fixture.js';

async function create(f: Fixture, name: string, config: object): Promise<Record<string, unknown>> {
  const r = await f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { durable_name: name, ack_policy: 'none', ...config } });
  if (r.error) throw new Error(JSON.stringify(r.error));
  await settle();
  return r;
}

describe('deliver and replay policies, filters', () => {
  it('by_start_time starts at the first message stored at or after the time', async () => {
    const f = await fixture();
    const t0 = Date.now();
    await f.stream.store.append('s.a', undefined, Buffer.from('old'), { timestampNs: BigInt(t0 - 10_000) * 1_000_000n });
    await f.stream.store.append('s.a', undefined, Buffer.from('new'), { timestampNs: BigInt(t0) * 1_000_000n });
    const r = await create(f, 'T', { deliver_policy: 'by_start_time', opt_start_time: new Date(t0 - 5000).toISOString() });
    expect(r['num_pending']).toBe(1);
    expect((r['delivered'] as { stream_seq: number }).stream_seq).toBe(1);
    const msgs = await f.pull('T', { batch: 2, no_wait: true });
    expect(msgs[0]!.data.toString()).toBe('new');
  });

  it('filter_subjects takes messages of every listed filter, in stream order', async () => {
    const f = await fixture();
    for (const s of ['s.a', 's.b', 's.c', 's.a', 's.b']) await f.publish(s, s);
    const r = await create(f, 'M', { filter_subjects: ['s.a', 's.b'] });
    expect(r['num_pending']).toBe(4);
    const msgs = await f.pull('M', { batch: 10, no_wait: true });
    expect(msgs.filter((m) => m.data.length > 0).map((m) => m.reply!.split('.')[5])).toEqual(['1', '2', '4', '5']);
  });

  it('replay original spaces deliveries like the original publishes', async () => {
    const f = await fixture();
    const base = BigInt(Date.now()) * 1_000_000n;
    for (let i = 0; i < 3; i++) await f.stream.store.append('s.a', undefined, Buffer.from(String(i)), { timestampNs: base + BigInt(i) * 500_000_000n });
    const box = f.bus.inbox('out');
    await create(f, 'O', { deliver_subject: 'out', replay_policy: 'original' });
    expect(box.msgs).toHaveLength(1);
    f.clock.advance(499);
    await settle();
    expect(box.msgs).toHaveLength(1);
    f.clock.advance(1);
    await settle();
    expect(box.msgs).toHaveLength(2);
    f.clock.advance(500);
    await settle();
    expect(box.msgs.map((m) => m.data.toString())).toEqual(['0', '1', '2']);
  });

  it('deliver last and new start where nats-server starts', async () => {
    const f = await fixture();
    for (const s of ['s.a', 's.b', 's.a']) await f.publish(s, s);
    const last = await create(f, 'L', { deliver_policy: 'last', filter_subject: 's.b' });
    expect([last['num_pending'], (last['delivered'] as { stream_seq: number }).stream_seq]).toEqual([1, 1]);
    const fresh = await create(f, 'N', { deliver_policy: 'new' });
    expect([fresh['num_pending'], (fresh['delivered'] as { stream_seq: number }).stream_seq]).toEqual([0, 3]);
    await f.publish('s.c', 'c');
    const msgs = await f.pull('N', { batch: 1, no_wait: true });
    expect(msgs[0]!.subject).toBe('s.c');
  });
});

describe('consumer update', () => {
  it('applies a changed filter from the current position', async () => {
    const f = await fixture();
    for (const s of ['s.a', 's.b', 's.a', 's.b']) await f.publish(s, s);
    await create(f, 'U', { filter_subject: 's.a' });
    const first = await f.pull('U', { batch: 1, no_wait: true });
    expect(first[0]!.subject).toBe('s.a');
    const upd = await f.api('$JS.API.CONSUMER.CREATE.S.U', { stream_name: 'S', config: { durable_name: 'U', ack_policy: 'none', filter_subject: 's.b' }, action: 'update' });
    expect(upd.num_pending).toBe(2);
    const next = await f.pull('U', { batch: 5, no_wait: true });
    expect(next.filter((m) => m.data.length > 0).map((m) => m.reply!.split('.')[5])).toEqual(['2', '4']);
  });
});
