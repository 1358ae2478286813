// Consumer state in a replicated stream's Raft group, on one node: the consumers run on the stream's leader
// only, and their config and state travel through the group as consumer entries that every replica applies
// (`applyEntry`). A node that becomes leader starts the consumers from what it applied; one that stops
// leading releases them (waiting pulls get 409 Leadership Change).
import type { JetStreamContext } from '../jetstream-context.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import type { ConsumerConfig } from '../consumer/consumer-config.js';
import { consumerErrors as E } from '../consumer/consumer-errors.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';
import {
  LEADERSHIP_START_WAIT_MS,
  type ConsumerRunner,
  type ConsumerStatePlacement,
  type ConsumerStorage,
} from '../consumer/consumer-state-placement.js';
import type { Consumer } from '../consumer/consumer.js';
import * as S from '../consumer/status-headers.js';
import { encodeConsumerEntry } from './consumer-replication-entry.js';
import { ReplicatedConsumerStorage, type ConsumerReplicationGroup } from './consumer-replication-storage.js';
import type { AppliedConsumer } from './consumer-replication-state.js';
import { StreamConsumerReplication } from './consumer-replication-stream.js';

const EMPTY = new Uint8Array(0);

export class ReplicatedConsumerPlacement implements ConsumerStatePlacement {
  readonly acceptsReplicas = true;
  private readonly replication: StreamConsumerReplication;
  private runner: ConsumerRunner | null = null;

  constructor(
    readonly group: ConsumerReplicationGroup,
    readonly stream: StreamHandle,
    private readonly ctx: JetStreamContext,
    nowMs: () => number,
  ) {
    this.replication = new StreamConsumerReplication(group, stream, ctx, nowMs);
  }

  /** Loads what this node applied before; the consumers start only with leadershipChanged(true). */
  async open(runner: ConsumerRunner): Promise<void> {
    this.runner = runner;
    await this.replication.open();
  }

  get serving(): boolean {
    return this.replication.serving;
  }

  storedConsumers(): AppliedConsumer[] {
    return this.replication.applied.all();
  }

  // ---- the group's side ---------------------------------------------------------------------------

  /** A consumer entry committed in the stream's group; false for a payload that is not one. */
  applyEntry(payload: Uint8Array): boolean {
    return this.replication.applied.applyPayload(payload);
  }

  /** Consumer state for the stream group's snapshot. */
  snapshot(): Buffer {
    return this.replication.applied.snapshot();
  }

  /** A snapshot installed on this (follower) replica replaces its consumer state. */
  restore(data: Uint8Array): void {
    this.replication.applied.restore(data);
  }

  /**
   * This node became (true) or stopped being (false) the stream's leader. Leading starts every consumer from
   * the applied config and state (pending messages are redelivered after ack_wait with their delivery count
   * + 1); losing it answers waiting pulls with 409 Leadership Change and drops the consumers' subscriptions
   * so the new leader's take over.
   */
  async leadershipChanged(leading: boolean): Promise<void> {
    const runner = this.runner;
    const rep = this.replication;
    if (runner === null) return;
    if (!leading) {
      rep.lost();
      this.releaseAll(S.LEADERSHIP_CHANGE);
      return;
    }
    if (rep.leading) return;
    const epoch = rep.gained();
    // Work still queued belongs to an earlier leadership (nothing of this one can run before its consumers
    // start): it is waited for, bounded, and checks the epoch itself when it goes on.
    await runner.inTurn(async () => {
      if (rep.epoch !== epoch) return;
      const started = await runner.startStored(rep.applied.all(), () => rep.epoch === epoch);
      if (started === null) return;
      // Requests that went to the old leader (or came while these consumers started): pull again.
      const replies = rep.started(started, () => this.proposeSync(runner, epoch));
      for (const reply of replies) {
        if (this.ctx.bus.hasInterest(reply)) this.ctx.bus.publish(reply, null, S.LEADERSHIP_CHANGE, EMPTY);
      }
    }, LEADERSHIP_START_WAIT_MS);
  }

  /** Leader: every consumer's config and state in one `sync` entry (a caught-up replica asked for it). */
  private proposeSync(runner: ConsumerRunner, epoch: number): Promise<void> {
    return runner.inTurn(async () => {
      const rep = this.replication;
      if (rep.epoch !== epoch || !rep.loaded) throw new Error('not leading');
      const consumers = runner.running().map((c) => ({ meta: c.meta(), state: c.state.snapshot() }));
      await this.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'sync', consumers }));
    });
  }

  // ---- ConsumerStatePlacement ---------------------------------------------------------------------

  storageFor(name: string, _config: ConsumerConfig, read: () => ConsumerStateSnapshot): ConsumerStorage {
    return new ReplicatedConsumerStorage(this.group, name, read, (err) =>
      this.ctx.log.warn({ stream: this.stream.name, consumer: name, err: String(err) }, 'consumer state not replicated yet'),
    );
  }

  /** Config, then the start position, committed in the stream group before the create is answered. */
  async storeNew(consumer: Consumer): Promise<void> {
    const rep = this.replication;
    const epoch = rep.epoch;
    try {
      await consumer.initPosition(null);
      await consumer.saveMeta();
      await consumer.persistState();
    } catch (err) {
      consumer.release(S.LEADERSHIP_CHANGE);
      throw err;
    }
    if (rep.epoch !== epoch || !rep.leading) {
      consumer.release(S.LEADERSHIP_CHANGE);
      throw E.createFailed('stream leadership changed');
    }
  }

  /** Committed first: if it cannot be (leadership lost), the consumer stays as it is everywhere. */
  async remove(consumer: Consumer, unlist: () => void): Promise<void> {
    await this.group.proposeConsumerEntry(encodeConsumerEntry({ op: 'remove', name: consumer.name }));
    unlist();
    consumer.release(S.CONSUMER_DELETED);
  }

  consumerCount(): number {
    return this.replication.applied.size;
  }

  isStored(name: string): boolean {
    return this.replication.applied.get(name) !== undefined;
  }

  clusterInfo(): object {
    return this.group.clusterInfo();
  }

  /** Our consumer leader is the stream leader, so it steps down. */
  stepDown(): Promise<void> {
    return this.group.stepDown();
  }

  /** A new leader whose consumers are still starting: their replicated filters decide. */
  interestWhileStarting(subject: string): boolean | undefined {
    return this.replication.loaded ? undefined : this.replication.appliedInterest(subject);
  }

  messageStored(seq: number): void {
    this.replication.stored(seq);
  }

  messagesRemoved(): void {
    this.replication.purged();
  }

  /** The group goes away with the stream: nothing more is proposed; local files go with the stream dir. */
  async streamDeleted(): Promise<void> {
    this.replication.close();
    this.releaseAll(S.CONSUMER_DELETED);
    await this.replication.applied.drop();
  }

  /**
   * A replica of a later incarnation of this name (deleted, then created again) takes over: keeping this one
   * would send the new stream's consumer entries to the old, stopped group (10008 forever).
   */
  async handOver(): Promise<void> {
    this.ctx.log.warn({ stream: this.stream.name }, 'consumers of an earlier replica of this stream replaced');
    this.replication.close();
    this.releaseAll(S.LEADERSHIP_CHANGE);
    // Its files live in its own replica directory, which goes with it.
    await this.replication.applied.close();
  }

  async close(): Promise<void> {
    this.replication.close();
    // In parallel: each gets a bounded last proposal, and the replica's files their last write.
    await Promise.all((this.runner?.running() ?? []).map((c) => c.close(false)));
    await this.replication.applied.close();
  }

  private releaseAll(status: Uint8Array): void {
    const runner = this.runner;
    if (runner === null) return;
    for (const c of runner.running()) c.release(status);
    runner.forgetAll();
  }
}
