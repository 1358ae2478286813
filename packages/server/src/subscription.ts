import type { SublistEntry } from '@flotilla/protocol';

/** Whatever receives the messages of a subscription: a client connection, or an internal service. */
export interface SubscriptionOwner {
  /** Connection id for echo suppression and monitoring; internal owners use 0. */
  readonly cid: number;
  /** `fromPeer`: the server id of the node a routed message came from (for internal owners; clients ignore it). */
  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, fromPeer?: string): void;
  /**
   * Optional, for owners that carry a message into another account (imports): a message matched on `route`
   * (a JetStream deliver subject or pull inbox) while carrying `subject`. Without it they get deliverMessage.
   */
  deliverRouted?(sub: Subscription, route: string, subject: string, reply: string | null, headerBytes: number, message: Buffer): void;
  /** Optional, for an internal owner (cid 0) that stands for subscribers elsewhere: is a client's among them for `subject`? */
  clientInterest?(subject: string): boolean;
  /** true for a leaf link standing for a remote server's subscribers: queue groups prefer members here. */
  readonly remoteLeaf?: boolean;
}

export class Subscription implements SublistEntry {
  /** Messages delivered so far; with `maxMsgs` the subscription ends when they meet. */
  delivered = 0;
  maxMsgs = 0; // 0 = unlimited
  // `MSG <subject> <sid> ` / `HMSG …` for the last subject delivered: most subscriptions see one subject.
  private prefixSubject = '';
  private prefixHeaders = false;
  private prefix: Buffer | null = null;

  constructor(
    readonly owner: SubscriptionOwner,
    readonly subject: string,
    readonly queue: string | null,
    readonly sid: string,
  ) {}

  /** The encoded start of a MSG (or HMSG) line for `subject` on this subscription. */
  framePrefix(subject: string, withHeaders: boolean): Buffer {
    if (this.prefix === null || this.prefixSubject !== subject || this.prefixHeaders !== withHeaders) {
      this.prefix = Buffer.from(`${withHeaders ? 'HMSG' : 'MSG'} ${subject} ${this.sid} `);
      this.prefixSubject = subject;
      this.prefixHeaders = withHeaders;
    }
    return this.prefix;
  }
}
