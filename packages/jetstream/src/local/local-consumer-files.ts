// Consumer state on a single node: this node alone runs a stream's consumers, and their config and state
// are the files under `<stream.dir>/consumers/<name>/` (consumer-storage.ts), loaded when the stream comes
// up. Memory streams and mem_storage consumers keep their state in memory only.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { JetStreamLogger } from '../message-bus.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import type { ConsumerConfig } from '../consumer/consumer-config.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';
import type { Consumer } from '../consumer/consumer.js';
import { FileConsumerStorage, MemoryConsumerStorage, storedConsumers } from '../consumer/consumer-storage.js';
import type {
  ConsumerRunner,
  ConsumerStatePlacement,
  ConsumerStatePlacements,
  ConsumerStorage,
} from '../consumer/consumer-state-placement.js';

/** Every stream's consumer files on this node. */
export class LocalConsumerFiles implements ConsumerStatePlacements {
  /**
   * Shutdown closes consumers one at a time across every stream: each close may write a state file, and
   * thousands written at once would run out of file descriptors.
   */
  private closing: Promise<void> = Promise.resolve();

  constructor(private readonly log: JetStreamLogger) {}

  forStream(stream: StreamHandle): ConsumerStatePlacement {
    return new LocalConsumerPlacement(stream, this.log, (close) => {
      const run = this.closing.then(close);
      this.closing = run.catch(() => undefined);
      return run;
    });
  }
}

export class LocalConsumerPlacement implements ConsumerStatePlacement {
  readonly serving = true;
  readonly acceptsReplicas = false;
  private runner: ConsumerRunner | null = null;

  constructor(
    private readonly stream: StreamHandle,
    private readonly log: JetStreamLogger,
    private readonly closeInTurn: (close: () => Promise<void>) => Promise<void>,
  ) {}

  private get consumersDir(): string {
    return join(this.stream.dir, 'consumers');
  }

  /** Starts every consumer stored under the stream's directory, one after another as each is read. */
  async open(runner: ConsumerRunner): Promise<void> {
    this.runner = runner;
    for await (const files of storedConsumers(this.consumersDir)) await runner.startStored([files], () => true);
    // A memory stream's consumers have no files, but a restored one's are seeded there (backup/): read once.
    if (this.stream.config.storage !== 'file') await rm(this.consumersDir, { recursive: true, force: true });
  }

  storageFor(name: string, config: ConsumerConfig, read: () => ConsumerStateSnapshot): ConsumerStorage {
    if (this.stream.config.storage !== 'file' || config.mem_storage) return new MemoryConsumerStorage();
    return new FileConsumerStorage(join(this.consumersDir, name), read, (err) =>
      this.log.error({ stream: this.stream.name, consumer: name, err: String(err) }, 'consumer state write failed'),
    );
  }

  /** meta.json first; the start position's state follows through the coalesced writes. */
  async storeNew(consumer: Consumer): Promise<void> {
    await consumer.saveMeta();
    await consumer.initPosition(null);
  }

  async remove(consumer: Consumer, unlist: () => void): Promise<void> {
    unlist();
    await consumer.close(true);
  }

  consumerCount(): number {
    return this.runner?.runningCount ?? 0;
  }

  isStored(name: string): boolean {
    return this.runner?.isRunning(name) === true;
  }

  clusterInfo(): object | undefined {
    return undefined;
  }

  /** Nothing to hand over to (the API refuses STEPDOWN on a single node before asking). */
  async stepDown(): Promise<void> {}

  interestWhileStarting(): boolean | undefined {
    return undefined;
  }

  messageStored(): void {}

  messagesRemoved(): void {}

  /** Each consumer's directory goes with it. */
  async streamDeleted(): Promise<void> {
    await this.closeAll(true);
  }

  async handOver(): Promise<void> {
    await this.closeAll(false);
  }

  close(): Promise<void> {
    return this.closeInTurn(() => this.closeAll(false));
  }

  private async closeAll(deleted: boolean): Promise<void> {
    const runner = this.runner;
    if (runner === null) return;
    for (const c of runner.running()) await c.close(deleted);
    runner.forgetAll();
  }
}
