// The ConsumerService runs on its streams' consumer-state placements alone: a placement that is neither local
// files nor a Raft group drives it the same way (when consumers run, where a create and a delete are stored,
// who serves), and the local files close their consumers one at a time at shutdown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Consumer } from '../src/consumer/consumer.js';
import { ConsumerService } from '../src/consumer/consumer-service.js';
import type { ConsumerConfig } from '../src/consumer/consumer-config.js';
import type { ConsumerRunner, ConsumerStatePlacement, ConsumerStorage, StoredConsumer } from '../src/consumer/consumer-state-placement.js';
import { MemoryConsumerStorage } from '../src/consumer/consumer-storage.js';
import { LocalConsumerFiles } from '../src/local/local-consumer-files.js';
import { FakeBus, FakeClock, FakeContext, FakeStream, streamConfig } from './support/consumer-fakes.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const durableConfig = (name: string): ConsumerConfig => ({
  durable_name: name,
  deliver_policy: 'all',
  ack_policy: 'explicit',
  replay_policy: 'instant',
  num_replicas: 0,
});

const createRequest = (name: string) => ({ stream: 'S', config: durableConfig(name), action: '' as const, legacyEphemeral: false });

/** Records what the service asks; `serving` and `storedNames` are what the test says. */
class RecordingPlacement implements ConsumerStatePlacement {
  readonly acceptsReplicas = false;
  serving = false;
  runner: ConsumerRunner | null = null;
  readonly calls: string[] = [];
  readonly storedNames = new Set<string>();

  async open(runner: ConsumerRunner): Promise<void> {
    this.runner = runner;
    this.calls.push('open');
  }
  storageFor(name: string): ConsumerStorage {
    this.calls.push(`storageFor:${name}`);
    return new MemoryConsumerStorage();
  }
  async storeNew(consumer: Consumer): Promise<void> {
    this.calls.push(`storeNew:${consumer.name}`);
    this.storedNames.add(consumer.name);
    await consumer.initPosition(null);
  }
  async remove(consumer: Consumer, unlist: () => void): Promise<void> {
    this.calls.push(`remove:${consumer.name}`);
    this.storedNames.delete(consumer.name);
    unlist();
    await consumer.close(true);
  }
  consumerCount(): number {
    return this.storedNames.size;
  }
  isStored(name: string): boolean {
    return this.storedNames.has(name);
  }
  clusterInfo(): object {
    return { name: 'placed' };
  }
  async stepDown(): Promise<void> {
    this.calls.push('stepDown');
  }
  interestWhileStarting(): boolean | undefined {
    return this.serving ? undefined : true;
  }
  messageStored(seq: number): void {
    this.calls.push(`stored:${seq}`);
  }
  messagesRemoved(): void {
    this.calls.push('removed');
  }
  async streamDeleted(): Promise<void> {
    this.calls.push('streamDeleted');
  }
  async handOver(): Promise<void> {
    this.calls.push('handOver');
    for (const c of this.runner!.running()) await c.close(false);
    this.runner!.forgetAll();
  }
  async close(): Promise<void> {
    this.calls.push('close');
  }
}

function setUp(): { ctx: FakeContext; stream: FakeStream; service: ConsumerService } {
  const ctx = new FakeContext(new FakeBus());
  const stream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'] }));
  ctx.table.set('S', stream);
  return { ctx, stream, service: new ConsumerService(ctx, new FakeClock()) };
}

describe('ConsumerService over a consumer-state placement', () => {
  it('runs consumers when the placement starts them, and stores creates and deletes through it', async () => {
    const { stream, service } = setUp();
    const placement = new RecordingPlacement();
    await service.streamAdded(stream, placement);
    expect(service.placementOf('S')).toBe(placement);
    expect(service.leads('S')).toBe(false);
    // Not running yet: interest comes from the placement.
    expect(service.hasInterest('S', 's.x')).toBe(true);

    placement.storedNames.add('A');
    const stored: StoredConsumer = { meta: { stream_name: 'S', name: 'A', created: new Date(0).toISOString(), config: durableConfig('A') }, state: null };
    expect(await placement.runner!.startStored([stored], () => true)).toEqual(['A']);
    placement.serving = true;
    expect(service.leads('S')).toBe(true);
    expect(service.consumer('S', 'A')?.info()).toMatchObject({ name: 'A', cluster: { name: 'placed' } });
    expect(service.hasInterest('S', 's.x')).toBe(true);
    // A start no longer current starts nothing.
    expect(await placement.runner!.startStored([{ ...stored, meta: { ...stored.meta, name: 'Z' } }], () => false)).toBeNull();
    expect(service.consumer('S', 'Z')).toBeUndefined();

    const info = await service.createConsumer(createRequest('B'));
    expect(info['name']).toBe('B');
    expect(placement.calls).toEqual(['open', 'storageFor:A', 'storageFor:B', 'storeNew:B']);
    expect(service.consumerCount('S')).toBe(2);

    await service.deleteConsumer('S', 'A');
    expect(service.consumer('S', 'A')).toBeUndefined();
    expect(placement.calls.at(-1)).toBe('remove:A');
    expect(service.consumerCount('S')).toBe(1);

    await service.stepDown('S', 'B');
    expect(placement.calls.at(-1)).toBe('stepDown');
    await expect(service.stepDown('S', 'A')).rejects.toMatchObject({ code: 404 });

    await stream.publish('s.x', 'x');
    expect(placement.calls.at(-1)).toBe('stored:1');
    service.streamPurged(stream);
    expect(placement.calls.at(-1)).toBe('removed');
    await service.stop();
    expect(placement.calls.at(-1)).toBe('close');
  });

  it('a second placement for the stream takes over from the first; deleting the stream goes to the one registered', async () => {
    const { stream, service } = setUp();
    const first = new RecordingPlacement();
    await service.streamAdded(stream, first);
    // Added again with the same placement, or with none: nothing changes.
    await service.streamAdded(stream, first);
    await service.streamAdded(stream);
    expect(first.calls).toEqual(['open']);

    const second = new RecordingPlacement();
    await service.streamAdded(stream, second);
    expect(first.calls).toEqual(['open', 'handOver']);
    expect(service.placementOf('S')).toBe(second);

    await service.streamRemoved(stream);
    expect(second.calls).toEqual(['open', 'streamDeleted']);
    expect(first.calls).toEqual(['open', 'handOver']);
    expect(service.placementOf('S')).toBeUndefined();
  });
});

describe('LocalConsumerFiles', () => {
  it('reloads file consumers and closes them one at a time across streams at shutdown', async () => {
    const root = mkdtempSync(join(tmpdir(), 'consumer-placement-'));
    dirs.push(root);
    const ctx = new FakeContext(new FakeBus());
    const streams = ['S1', 'S2'].map((name) => new FakeStream(streamConfig({ name, subjects: [`${name}.>`], storage: 'file' }), join(root, name)));
    const service = new ConsumerService(ctx, new FakeClock(), new LocalConsumerFiles(ctx.log));
    for (const s of streams) {
      ctx.table.set(s.name, s);
      await service.streamAdded(s);
      for (const c of ['A', 'B']) await service.createConsumer({ ...createRequest(c), stream: s.name });
    }
    let open = 0;
    let most = 0;
    const close = Consumer.prototype.close;
    vi.spyOn(Consumer.prototype, 'close').mockImplementation(async function (this: Consumer, deleted: boolean) {
      most = Math.max(most, ++open);
      try {
        await new Promise((r) => setTimeout(r, 5));
        await close.call(this, deleted);
      } finally {
        open--;
      }
    });
    await service.stop();
    expect(most).toBe(1);

    // The files brought them back.
    const again = new ConsumerService(ctx, new FakeClock(), new LocalConsumerFiles(ctx.log));
    for (const s of streams) await again.streamAdded(s);
    expect(again.consumersOf('S1').map((c) => c.name).sort()).toEqual(['A', 'B']);
    expect(again.consumersOf('S2').map((c) => c.name).sort()).toEqual(['A', 'B']);
    await again.stop();
  });
});
