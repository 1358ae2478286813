import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileConsumerStorage, readConsumerFiles } from '../src/consumer/consumer-storage.js';
import { ConsumerState } from '../src/consumer/consumer-state.js';
import { fixture, settle } from './support/consumer-fixture.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('consumer state storage', () => {
  it('a scan moves the stream position only, and the snapshot keeps it', () => {
    const state = new ConsumerState('explicit');
    state.apply({ op: 'deliver', sseq: 2, dseq: 1, count: 1, tsMs: 1 });
    state.apply({ op: 'ack', sseq: 2, dseq: 1 });
    state.apply({ op: 'scan', sseq: 6 });
    state.apply({ op: 'scan', sseq: 4 }); // never backwards
    const copy = new ConsumerState('explicit');
    copy.restore(state.snapshot());
    expect(copy.snapshot().delivered).toEqual({ consumer_seq: 1, stream_seq: 5 });
    expect(copy.snapshot().ack_floor).toEqual({ consumer_seq: 1, stream_seq: 2 });
  });

  it('coalesces many changes into few writes and flush() makes the newest durable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consumer-storage-'));
    dirs.push(dir);
    const state = new ConsumerState('explicit');
    let reads = 0;
    const storage = new FileConsumerStorage(join(dir, 'c'), () => {
      reads++;
      return state.snapshot();
    }, (err) => {
      throw err;
    });
    await storage.saveMeta({ stream_name: 'S', name: 'c', created: 'now', config: { deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 } });
    for (let i = 1; i <= 2000; i++) {
      state.apply({ op: 'deliver', sseq: i, dseq: i, count: 1, tsMs: i });
      state.apply({ op: 'ack', sseq: i, dseq: i });
      storage.stateChanged();
    }
    await storage.flush();
    expect(reads).toBeLessThanOrEqual(3);
    const onDisk = JSON.parse(readFileSync(join(dir, 'c', 'state.json'), 'utf8'));
    expect(onDisk.ack_floor).toEqual({ consumer_seq: 2000, stream_seq: 2000 });
    const files = await readConsumerFiles(join(dir, 'c'));
    expect(files?.meta.name).toBe('c');
    await storage.remove();
    expect(await readConsumerFiles(join(dir, 'c'))).toBeNull();
  });

  it('close() writes a change made while a write was in progress', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consumer-storage-'));
    dirs.push(dir);
    const state = new ConsumerState('explicit');
    const storage = new FileConsumerStorage(join(dir, 'c'), () => state.snapshot(), (err) => {
      throw err;
    });
    await storage.saveMeta({ stream_name: 'S', name: 'c', created: 'now', config: { deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 } });
    state.apply({ op: 'deliver', sseq: 1, dseq: 1, count: 1, tsMs: 1 });
    storage.stateChanged();
    // Let the first write start (it is scheduled with setImmediate), then change the state during it.
    await new Promise((r) => setImmediate(r));
    state.apply({ op: 'ack', sseq: 1, dseq: 1 });
    storage.stateChanged();
    await storage.close();
    const files = await readConsumerFiles(join(dir, 'c'));
    expect(files?.state?.ack_floor).toEqual({ consumer_seq: 1, stream_seq: 1 });
  });

  it('removes an idle ephemeral pull consumer after its inactive threshold', async () => {
    const f = await fixture();
    await f.api('$JS.API.CONSUMER.CREATE.S.E', { stream_name: 'S', config: { name: 'E', ack_policy: 'explicit', inactive_threshold: 2e9 } });
    await settle();
    f.clock.advance(1500);
    await f.pull('E', { batch: 1, no_wait: true });
    f.clock.advance(1500);
    await settle();
    // the pull 1.5 s ago counts as activity
    expect(f.service.consumerCount('S')).toBe(1);
    f.clock.advance(2500);
    await settle();
    expect(f.service.consumerCount('S')).toBe(0);
  });
});
