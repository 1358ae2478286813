// One replicated stream's consumer replication on this node: its Raft group, what the log applied, whether
// this node serves the consumers (leads the stream and has started them), the pull requests it saw while
// following, and the snapshot catch-up (`ConsumerResync`). Its placement (-placement) starts and stops the
// consumers through the ConsumerService, which owns them.
import { join } from 'node:path';
import { subjectMatchesFilter } from '@flotilla/protocol';
import type { JetStreamContext } from '../jetstream-context.js';
import type { BusMessage } from '../message-bus.js';
import type { StreamHandle } from '../stream/stream-handle.js';
import { consumerFilters } from '../consumer/consumer-config.js';
import { ObservedPulls } from '../consumer/observed-pulls.js';
import { AppliedConsumers } from './consumer-replication-state.js';
import { ConsumerResync } from './consumer-replication-resync.js';
import type { ConsumerReplicationGroup } from './consumer-replication-storage.js';

export class StreamConsumerReplication {
  readonly applied: AppliedConsumers;
  readonly resync: ConsumerResync;
  private readonly observedPulls = new ObservedPulls();
  leading = false;
  /** true once the consumers of the current leadership are started */
  loaded = false;
  /** Bumped at every leadership change, so work begun under an earlier one is dropped. */
  epoch = 0;
  /** Last sequence seen stored message by message (messages past it without that = a snapshot installed). */
  private lastStoredSeq: number;
  private unsubscribes: Array<() => void> = [];

  constructor(
    readonly group: ConsumerReplicationGroup,
    private readonly stream: StreamHandle,
    private readonly ctx: JetStreamContext,
    private readonly nowMs: () => number,
  ) {
    this.applied = new AppliedConsumers(stream.config.storage === 'file' ? join(stream.dir, 'consumers') : null, (err) =>
      ctx.log.error({ stream: stream.name, err: String(err) }, 'replicated consumer write failed'),
    );
    this.resync = new ConsumerResync(ctx.bus, stream.name, ctx.log);
    this.lastStoredSeq = stream.store.state().last_seq;
  }

  /** This node serves the stream's consumer requests. */
  get serving(): boolean {
    return this.leading && this.loaded;
  }

  /** Watches pull requests, loads this node's files; a restarted replica asks for a resync. */
  async open(): Promise<void> {
    // Every node sees every MSG.NEXT (all subscribe `$JS.API.>`); the serving leader handles its own.
    const observe = (msg: BusMessage): void => {
      if (this.serving) return;
      const consumer = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      this.observedPulls.observe(consumer, msg.reply, msg.data, this.nowMs());
    };
    const bus = this.ctx.bus;
    this.unsubscribes.push(bus.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${this.stream.name}.*`, observe));
    const domain = this.ctx.options.domain;
    if (domain) this.unsubscribes.push(bus.subscribe(`$JS.${domain}.API.CONSUMER.MSG.NEXT.${this.stream.name}.*`, observe));
    await this.applied.load();
    // What a restarted replica rebuilt (files, log replay after its last snapshot) may miss consumer entries
    // compacted into a snapshot (memory streams keep no files at all). A new stream has nothing to miss.
    if (this.applied.size > 0 || this.stream.store.state().last_seq > 0) this.resync.request();
  }

  /** A message was stored here in sequence (leader or follower). */
  stored(seq: number): void {
    if (seq > this.lastStoredSeq) this.lastStoredSeq = seq;
  }

  /**
   * Messages left the store, or a snapshot replaced it. Messages that appeared without being stored one by
   * one mean a snapshot was installed: the consumer entries it compacted never reached this replica.
   */
  purged(): void {
    if (this.leading) return;
    const last = this.stream.store.state().last_seq;
    if (last <= this.lastStoredSeq) return;
    this.lastStoredSeq = last;
    this.resync.request();
  }

  /** Leadership gained: returns the epoch the consumer start belongs to. */
  gained(): number {
    this.leading = true;
    return ++this.epoch;
  }

  /** The consumers are started: serve, and return the reply subjects to tell `409 Leadership Change`. */
  started(consumerNames: readonly string[], proposeSync: () => Promise<void>): string[] {
    this.loaded = true;
    const now = this.nowMs();
    const replies: string[] = [];
    for (const name of consumerNames) replies.push(...this.observedPulls.take(name, now));
    this.observedPulls.clear();
    this.resync.serve(proposeSync);
    return replies;
  }

  /** Leadership lost (or the stream is going away). */
  lost(): void {
    this.leading = false;
    this.loaded = false;
    this.epoch++;
    this.observedPulls.clear();
    this.resync.stopServing();
  }

  /** Interest retention before the consumers are started: their replicated filters decide. */
  appliedInterest(subject: string): boolean {
    for (const a of this.applied.all()) {
      const filters = consumerFilters(a.meta.config);
      if (filters.length === 0 || filters.some((f) => subjectMatchesFilter(subject, f))) return true;
    }
    return false;
  }

  close(): void {
    this.lost();
    for (const u of this.unsubscribes.splice(0)) u();
    this.resync.close();
  }
}
