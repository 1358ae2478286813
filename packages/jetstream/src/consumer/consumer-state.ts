// A consumer's state as a state machine: every change (deliver, ack, term, drop, skip, scan) is an entry
// given to apply(), on the node that runs the consumer. Its storage persists the resulting snapshot: state
// files on a single node; in a cluster, whole-state entries through the stream's Raft group
// (cluster/consumer-replication-storage.ts), which followers keep to start from when they lead.
import type { AckPolicy } from './consumer-config.js';
import { PendingAcks, type PendingAck } from './pending-acks.js';

export type ConsumerEntry =
  /** A message went out: first delivery when `count` is 1, else a redelivery. */
  | { op: 'deliver'; sseq: number; dseq: number; count: number; tsMs: number }
  /** +ACK (and +NXT's ack); with ack_policy all it covers everything up to sseq. */
  | { op: 'ack'; sseq: number; dseq: number }
  /** +TERM: settled like an ack, never redelivered. */
  | { op: 'term'; sseq: number; dseq: number }
  /** max_deliver reached: no longer awaited, but not acknowledged either. */
  | { op: 'drop'; sseq: number }
  /** Purge or start position: the next new message is at least sseq. */
  | { op: 'skip'; sseq: number }
  /** A filtered consumer found nothing for it below `sseq`: its stream position moves on (ack floor stays). */
  | { op: 'scan'; sseq: number }
  /** CONSUMER.RESET (2.14): start again at `sseq` with nothing pending, consumer sequences from 1. */
  | { op: 'reset'; sseq: number };

export type { PendingAck };

export interface ConsumerStateSnapshot {
  delivered: { consumer_seq: number; stream_seq: number };
  ack_floor: { consumer_seq: number; stream_seq: number };
  /** [stream seq, consumer seq, delivered at ms] */
  pending: Array<[number, number, number]>;
  /** [stream seq, redeliveries] */
  redelivered: Array<[number, number]>;
}

/** What an entry settled, so retention can remove messages (workqueue / interest). */
export interface ApplyResult {
  settled: number[];
}

const NOTHING: ApplyResult = { settled: [] };
/** Stream sequences looked at one by one for the next pending message before iterating the map instead. */
const FLOOR_PROBE_LIMIT = 64;

export class ConsumerState {
  /** Next consumer sequence to use. */
  dseq = 1;
  /** Next stream sequence to look at for a new message. */
  sseq = 1;
  adflr = 0;
  asflr = 0;
  /** Insertion order is ascending stream sequence (first deliveries only ever move forward). */
  readonly pending = new PendingAcks();
  /** Redeliveries per stream sequence (delivery count - 1), only while > 0. */
  readonly redelivered = new Map<number, number>();
  lastDeliveredMs = 0;
  lastAckedMs = 0;

  constructor(private readonly ackPolicy: AckPolicy) {}

  deliveryCount(sseq: number): number {
    return (this.redelivered.get(sseq) ?? 0) + 1;
  }

  apply(e: ConsumerEntry): ApplyResult {
    switch (e.op) {
      case 'deliver':
        return this.deliver(e.sseq, e.dseq, e.count, e.tsMs);
      case 'ack':
      case 'term':
        return this.ack(e.sseq, e.dseq);
      case 'drop':
        this.pending.delete(e.sseq);
        return NOTHING;
      case 'skip':
        return this.applySkip(e.sseq);
      case 'scan':
        if (e.sseq > this.sseq) this.sseq = e.sseq;
        return NOTHING;
      case 'reset':
        // nats-server's resetLocalStartingSeq.
        this.pending.clear();
        this.redelivered.clear();
        this.sseq = e.sseq;
        this.dseq = 1;
        this.adflr = 0;
        this.asflr = e.sseq - 1;
        this.lastDeliveredMs = 0;
        this.lastAckedMs = 0;
        return NOTHING;
    }
  }

  /** The `deliver` entry without building one (the delivery hot path). */
  deliver(sseq: number, dseq: number, count: number, tsMs: number): ApplyResult {
    this.dseq = dseq + 1;
    if (count === 1) {
      if (sseq >= this.sseq) this.sseq = sseq + 1;
    } else {
      this.redelivered.set(sseq, count - 1);
    }
    this.lastDeliveredMs = tsMs;
    if (this.ackPolicy === 'none') {
      this.adflr = dseq;
      this.asflr = sseq;
      return { settled: [sseq] };
    }
    const p = this.pending.get(sseq);
    if (p) p.tsMs = tsMs;
    else this.pending.set(sseq, { dseq, tsMs });
    return NOTHING;
  }

  /** The `ack` / `term` entry without building one (the ack hot path). */
  ack(sseq: number, dseq: number): ApplyResult {
    if (this.ackPolicy === 'none') return NOTHING;
    if (this.ackPolicy === 'all') {
      if (dseq <= this.adflr || sseq <= this.asflr) return NOTHING;
      const settled: number[] = [];
      for (const s of this.pending.keys()) {
        if (s > sseq) break;
        settled.push(s);
      }
      for (const s of settled) {
        this.pending.delete(s);
        this.redelivered.delete(s);
      }
      this.adflr = dseq;
      this.asflr = sseq;
      if (sseq >= this.sseq) this.sseq = sseq + 1;
      return { settled };
    }
    const p = this.pending.get(sseq);
    this.redelivered.delete(sseq);
    if (!p) return NOTHING;
    if (sseq >= this.sseq) this.sseq = sseq + 1;
    this.pending.delete(sseq);
    if (this.pending.size === 0) {
      this.adflr = this.dseq - 1;
      this.asflr = this.sseq - 1;
    } else if (p.dseq === this.adflr + 1) {
      // The oldest outstanding one: the floor moves up to just below the next pending message.
      this.floorBelowNextPending(sseq);
    }
    return { settled: [sseq] };
  }

  /**
   * Sets the floor below the oldest pending message, which lies above `acked` (the oldest until now). Acks
   * mostly come in order, so the next stream sequences are probed first: the map's first entry costs a walk
   * over every slot deleted since V8 last compacted it (up to max_ack_pending of them).
   */
  private floorBelowNextPending(acked: number): void {
    const end = Math.min(this.sseq, acked + 1 + FLOOR_PROBE_LIMIT);
    for (let s = acked + 1; s < end; s++) {
      const next = this.pending.get(s);
      if (next !== undefined) {
        this.adflr = next.dseq - 1;
        this.asflr = s - 1;
        return;
      }
    }
    const [nextSeq, next] = this.pending.entries().next().value as [number, PendingAck];
    this.adflr = next.dseq - 1;
    this.asflr = nextSeq - 1;
  }

  private applySkip(sseq: number): ApplyResult {
    if (sseq > this.sseq) this.sseq = sseq;
    if (this.asflr < sseq - 1) {
      this.asflr = sseq - 1;
      this.adflr = this.dseq - 1;
      for (const s of [...this.pending.keys()]) if (s < sseq) this.pending.delete(s);
      for (const s of [...this.redelivered.keys()]) if (s < sseq) this.redelivered.delete(s);
    }
    return NOTHING;
  }

  /** True while this consumer still needs `sseq` (nats-server's needAck, filter checked by the caller). */
  needsAck(sseq: number): boolean {
    if (sseq <= this.asflr) return false;
    if (this.ackPolicy !== 'explicit') return true;
    return sseq >= this.sseq || this.pending.has(sseq);
  }

  snapshot(): ConsumerStateSnapshot {
    const pending: Array<[number, number, number]> = [];
    for (const [s, p] of this.pending) pending.push([s, p.dseq, p.tsMs]);
    return {
      delivered: { consumer_seq: this.dseq - 1, stream_seq: this.sseq - 1 },
      ack_floor: { consumer_seq: this.adflr, stream_seq: this.asflr },
      pending,
      redelivered: [...this.redelivered],
    };
  }

  restore(s: ConsumerStateSnapshot): void {
    this.dseq = s.delivered.consumer_seq + 1;
    this.sseq = s.delivered.stream_seq + 1;
    this.adflr = s.ack_floor.consumer_seq;
    this.asflr = s.ack_floor.stream_seq;
    this.pending.clear();
    for (const [sseq, dseq, tsMs] of [...s.pending].sort((a, b) => a[0] - b[0])) this.pending.set(sseq, { dseq, tsMs });
    this.redelivered.clear();
    for (const [sseq, n] of s.redelivered) this.redelivered.set(sseq, n);
  }
}
