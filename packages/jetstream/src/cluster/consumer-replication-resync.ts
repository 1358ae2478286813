// Cluster: a replica that caught up by installing a stream snapshot missed the consumer entries the snapshot
// compacted away (the stream's snapshot holds messages only). It asks the leader, over core NATS, to propose
// a `sync` entry — every consumer's config and state — and asks again (bounded) until the leader answers,
// which it does once that entry is committed. The leader coalesces requests that arrive meanwhile.
import type { JetStreamLogger, MessageBus } from '../message-bus.js';
import { randomId } from '../consumer/random-id.js';
import { settledWithin } from '../consumer/settled-within.js';

/** `$JSC.CR.<stream>`: a replica's request; the serving leader subscribes it. */
export const RESYNC_SUBJECT_PREFIX = '$JSC.CR.';
/** A request unanswered this long is sent again (a leader may be getting elected). */
const RETRY_AFTER_MS = 1000;
/** Requests per resync before giving up (logged). */
const MAX_ATTEMPTS = 30;
/** Coalesced passes the leader runs back to back at most. */
const MAX_PASSES = 8;
/** A sync not committed within this long is given up (the askers ask again); it must not block later ones. */
export const SYNC_WAIT_MS = 5_000;

const EMPTY = new Uint8Array(0);

export class ConsumerResync {
  private readonly subject: string;
  // Asking side.
  private replySubject: string | null = null;
  private unsubscribeReply: (() => void) | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempts = 0;
  // Serving side.
  private unsubscribeServe: (() => void) | null = null;
  private waitingReplies: string[] = [];
  private running = false;
  private again = false;
  /** Bumped by serve(): a run of an earlier leadership (maybe stuck on its commit) does not hold up this one's. */
  private serving = 0;

  constructor(
    private readonly bus: MessageBus,
    private readonly streamName: string,
    private readonly log: JetStreamLogger,
    private readonly syncWaitMs = SYNC_WAIT_MS,
  ) {
    this.subject = `${RESYNC_SUBJECT_PREFIX}${streamName}`;
  }

  /** Asks the leader for a `sync` entry (no-op while a request is outstanding). */
  request(): void {
    if (this.replySubject !== null) return;
    this.replySubject = `${RESYNC_SUBJECT_PREFIX}R.${this.streamName}.${randomId(12)}`;
    this.unsubscribeReply = this.bus.subscribe(this.replySubject, () => this.endRequest());
    this.attempts = 0;
    this.send();
  }

  get requesting(): boolean {
    return this.replySubject !== null;
  }

  private send(): void {
    this.retryTimer = null;
    if (this.replySubject === null) return;
    if (this.attempts++ >= MAX_ATTEMPTS) {
      this.log.warn({ stream: this.streamName, attempts: MAX_ATTEMPTS }, 'consumer resync unanswered');
      this.endRequest();
      return;
    }
    this.bus.publish(this.subject, this.replySubject, null, EMPTY);
    this.retryTimer = setTimeout(() => this.send(), RETRY_AFTER_MS);
    this.retryTimer.unref();
  }

  private endRequest(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.unsubscribeReply?.();
    this.unsubscribeReply = null;
    this.replySubject = null;
  }

  /** Leader: answer requests by running `sync` (propose the entry; resolves once committed). */
  serve(sync: () => Promise<void>): void {
    this.stopServing();
    this.serving++;
    this.running = false;
    this.unsubscribeServe = this.bus.subscribe(this.subject, (m) => {
      if (m.reply !== null && this.waitingReplies.length < 1024) this.waitingReplies.push(m.reply);
      void this.run(sync);
    });
  }

  stopServing(): void {
    this.unsubscribeServe?.();
    this.unsubscribeServe = null;
    this.waitingReplies = [];
  }

  close(): void {
    this.stopServing();
    this.endRequest();
  }

  private async run(sync: () => Promise<void>): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    const serving = this.serving;
    try {
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        this.again = false;
        const replies = this.waitingReplies;
        this.waitingReplies = [];
        let failure: unknown = null;
        const done = sync().catch((err: unknown) => (failure = err ?? new Error('sync failed')));
        const inTime = await settledWithin(done, this.syncWaitMs);
        if (serving !== this.serving) return;
        if (!inTime || failure !== null) {
          // Not leading any more, or no commit in time: the askers retry (against the next leader).
          this.log.debug({ stream: this.streamName, err: String(failure ?? `not committed within ${this.syncWaitMs} ms`) }, 'consumer resync not proposed');
          return;
        }
        for (const r of replies) this.bus.publish(r, null, null, EMPTY);
        if (!this.again) return;
      }
    } finally {
      if (serving === this.serving) this.running = false;
    }
  }
}
