/** How the leader replicates to one peer (etcd's Progress): probe one append at a time, stream a bounded
 * window of appends optimistically, or send a snapshot. */
export const ProgressState = { Probe: 'probe', Replicate: 'replicate', Snapshot: 'snapshot' } as const;
export type ProgressState = (typeof ProgressState)[keyof typeof ProgressState];

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = ProgressState.Probe;
  /** Probe: an append is outstanding; wait for its answer (or a heartbeat) before sending another. */
  probeSent = false;
  /** Last index of each in-flight append, oldest first; at most maxInflight long. */
  readonly inflight: number[] = [];
  /** Heard from this peer since the last check-quorum round. */
  recentActive = false;
  /** Ticks since `match` last advanced while the peer was behind; drives resends after message loss. */
  stalledTicks = 0;
  /** Snapshot state: index of the snapshot being sent and the next byte offset to send. */
  pendingSnapshot = 0;
  snapshotOffset = 0;
  /** Highest commit index sent to this peer, so commit advances are propagated without new entries. */
  sentCommit = 0;
  /** Highest heartbeat round this peer answered (ReadIndex). */
  ackedContext = 0;

  constructor(next: number) {
    this.next = next;
  }

  becomeProbe(): void {
    if (this.state === ProgressState.Snapshot) {
      this.next = Math.max(this.match + 1, this.pendingSnapshot + 1);
      this.pendingSnapshot = 0;
    } else {
      this.next = this.match + 1;
    }
    this.state = ProgressState.Probe;
    this.probeSent = false;
    this.inflight.length = 0;
    this.stalledTicks = 0;
  }

  becomeReplicate(): void {
    this.state = ProgressState.Replicate;
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflight.length = 0;
    this.stalledTicks = 0;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.state = ProgressState.Snapshot;
    this.pendingSnapshot = snapshotIndex;
    this.snapshotOffset = 0;
    this.inflight.length = 0;
    this.stalledTicks = 0;
  }

  /** An append acknowledged up to `index`. Returns whether match advanced. */
  maybeUpdate(index: number): boolean {
    let updated = false;
    if (this.match < index) {
      this.match = index;
      this.stalledTicks = 0;
      updated = true;
    }
    this.next = Math.max(this.next, index + 1);
    this.probeSent = false;
    while (this.inflight.length > 0 && this.inflight[0]! <= index) this.inflight.shift();
    return updated;
  }

  /**
   * An append with prevIndex `rejected` was refused. Returns false when the rejection is stale (an answer to
   * an older append). `hintNext` is the leader's guess from the follower's conflict hint.
   */
  maybeDecrTo(rejected: number, hintNext: number): boolean {
    if (this.state === ProgressState.Replicate) {
      if (rejected <= this.match) return false;
      this.becomeProbe();
      this.next = Math.max(this.match + 1, Math.min(hintNext, rejected));
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(this.match + 1, Math.min(hintNext, rejected));
    this.probeSent = false;
    return true;
  }

  /** Whether the leader may send another append now. */
  canSend(maxInflight: number): boolean {
    switch (this.state) {
      case ProgressState.Probe:
        return !this.probeSent;
      case ProgressState.Replicate:
        return this.inflight.length < maxInflight;
      case ProgressState.Snapshot:
        return false;
    }
  }

  sentAppend(lastIndex: number, entryCount: number): void {
    if (this.state === ProgressState.Replicate) {
      if (entryCount > 0) {
        this.next = lastIndex + 1;
        this.inflight.push(lastIndex);
      }
    } else if (this.state === ProgressState.Probe) {
      this.probeSent = true;
    }
  }
}
