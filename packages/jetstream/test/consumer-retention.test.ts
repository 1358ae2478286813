import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConsumerService } from '../src/consumer/consumer-service.js';
import { LocalConsumerFiles } from '../src/local/local-consumer-files.js';
import { ConsumerState } from '../src/consumer/consumer-state.js';
import { ack, fixture, settle, type Fixture } from './support/consumer-fixture.js';

async function create(f: Fixture, name: string, config: object = {}): Promise<void> {
  const r = await f.api(`$JS.API.CONSUMER.CREATE.S.${name}`, { stream_name: 'S', config: { durable_name: name, ack_policy: 'explicit', ...config } });
  if (r.error) throw new Error(JSON.stringify(r.error));
  await settle();
}

describe('retention through consumers', () => {
  it('workqueue: a message goes once acknowledged', async () => {
    const f = await fixture({ retention: 'workqueue' });
    for (let i = 0; i < 3; i++) await f.publish('s.a', String(i));
    await create(f, 'W');
    const msgs = await f.pull('W', { batch: 3 });
    ack(f, msgs[0]!);
    ack(f, msgs[2]!, '+TERM');
    await settle();
    expect(f.stream.store.state()).toMatchObject({ messages: 1, first_seq: 2 });
  });

  it('interest: a message goes once every matching consumer acknowledged it', async () => {
    const f = await fixture({ retention: 'interest' });
    await create(f, 'A');
    await create(f, 'B', { filter_subject: 's.b' });
    await f.publish('s.a', 'a');
    await f.publish('s.b', 'b');
    const a = await f.pull('A', { batch: 2 });
    for (const m of a) ack(f, m);
    await settle();
    // s.a only interested A; s.b still waits for B
    expect(f.stream.store.state().messages).toBe(1);
    const b = await f.pull('B', { batch: 1 });
    ack(f, b[0]!);
    await settle();
    expect(f.stream.store.state().messages).toBe(0);
  });

  it('interest: deleting a consumer drops what no one else needs', async () => {
    const f = await fixture({ retention: 'interest' });
    await create(f, 'A');
    await create(f, 'B');
    for (let i = 0; i < 3; i++) await f.publish('s.a');
    for (const m of await f.pull('A', { batch: 3 })) ack(f, m);
    await settle();
    expect(f.stream.store.state().messages).toBe(3);
    await f.api('$JS.API.CONSUMER.DELETE.S.B');
    await settle();
    expect(f.stream.store.state().messages).toBe(0);
    expect(f.service.hasInterest('S', 's.a')).toBe(true);
  });

  it('purge moves consumers past removed messages', async () => {
    const f = await fixture();
    for (let i = 0; i < 5; i++) await f.publish('s.a');
    await create(f, 'D');
    await f.stream.store.purge({ seq: 4 });
    f.service.streamPurged(f.stream);
    const info = await f.api('$JS.API.CONSUMER.INFO.S.D');
    expect(info.num_pending).toBe(2);
    expect(info.ack_floor.stream_seq).toBe(3);
    const msgs = await f.pull('D', { batch: 5, no_wait: true });
    expect(msgs[0]!.reply).toMatch(/^\$JS\.ACK\.S\.D\.1\.4\.1\./);
  });
});

describe('consumer state persistence', () => {
  it('applies entries as a state machine and round-trips its snapshot', () => {
    const s = new ConsumerState('explicit');
    s.apply({ op: 'deliver', sseq: 1, dseq: 1, count: 1, tsMs: 10 });
    s.apply({ op: 'deliver', sseq: 2, dseq: 2, count: 1, tsMs: 11 });
    s.apply({ op: 'deliver', sseq: 1, dseq: 3, count: 2, tsMs: 12 });
    s.apply({ op: 'ack', sseq: 2, dseq: 2 });
    const snap = s.snapshot();
    expect(snap).toEqual({
      delivered: { consumer_seq: 3, stream_seq: 2 },
      ack_floor: { consumer_seq: 0, stream_seq: 0 },
      pending: [[1, 1, 12]],
      redelivered: [[1, 1]],
    });
    const r = new ConsumerState('explicit');
    r.restore(JSON.parse(JSON.stringify(snap)));
    expect(r.snapshot()).toEqual(snap);
    r.apply({ op: 'ack', sseq: 1, dseq: 1 });
    expect(r.snapshot().ack_floor).toEqual({ consumer_seq: 3, stream_seq: 2 });
  });

  it('reloads config, acks and pending redeliveries from the stream directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consumer-persist-'));
    try {
      const f = await fixture({ storage: 'file' }, dir);
      for (let i = 0; i < 4; i++) await f.publish('s.a', String(i));
      await create(f, 'D', { ack_wait: 1e9 });
      const msgs = await f.pull('D', { batch: 3 });
      const sync = f.bus.inbox('_INBOX.s');
      ack(f, msgs[0]!, '+ACK', '_INBOX.s');
      ack(f, msgs[2]!, '+ACK', '_INBOX.s');
      for (let i = 0; i < 400 && sync.msgs.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(sync.msgs).toHaveLength(2);
      // No stop(): state must already be on disk when ack-sync was answered.
      const service = new ConsumerService(f.ctx, f.clock, new LocalConsumerFiles(f.ctx.log));
      await service.streamAdded(f.stream);
      const restored = service.consumer('S', 'D')!;
      const info = restored.info();
      expect(info['config']).toMatchObject({ durable_name: 'D', ack_wait: 1e9 });
      expect(info['delivered']).toMatchObject({ consumer_seq: 3, stream_seq: 3 });
      expect(info['ack_floor']).toMatchObject({ consumer_seq: 1, stream_seq: 1 });
      expect([info['num_ack_pending'], info['num_pending']]).toEqual([1, 1]);
      await f.service.stop();
      // message 2 (unacked) is redelivered after ack_wait, then 4 is new
      const box = f.bus.inbox('_INBOX.after');
      restored.onPullRequest('_INBOX.after', Buffer.from(JSON.stringify({ batch: 2, expires: 60e9 })));
      await settle();
      f.clock.advance(1000);
      await settle();
      expect(box.msgs.map((m) => m.reply!.split('.').slice(4, 7))).toEqual([
        ['1', '4', '4'],
        ['2', '2', '5'],
      ]);
      await service.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
