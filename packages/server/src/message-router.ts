// Core NATS routing: the one Sublist of this server, and delivery of a published message to each matching
// subscription (every plain one, one member per queue group). Clustering and JetStream plug in here as
// further subscription owners.
import { Sublist, encodeStatusHeaders } from '@flotilla/protocol';
import type { Subscription } from './subscription.js';

const NO_RESPONDERS_HEADERS = encodeStatusHeaders(503);

export interface RouterStats {
  inMsgs: number;
  inBytes: number;
  outMsgs: number;
  outBytes: number;
}

export class MessageRouter {
  readonly sublist = new Sublist<Subscription>();
  readonly stats: RouterStats = { inMsgs: 0, inBytes: 0, outMsgs: 0, outBytes: 0 };
  private queueCursor = 0;

  subscribe(sub: Subscription): void {
    this.sublist.insert(sub);
  }

  unsubscribe(sub: Subscription): void {
    this.sublist.remove(sub);
  }

  /**
   * Delivers to every matching subscription. `publisherCid` with `echo` false suppresses delivery back
   * to the publishing connection. Returns how many subscriptions received the message.
   */
  publish(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    publisherCid: number,
    echo: boolean,
  ): number {
    const stats = this.stats;
    stats.inMsgs++;
    stats.inBytes += message.length;
    const result = this.sublist.match(subject);
    let delivered = 0;
    const plain = result.plain;
    for (let i = 0; i < plain.length; i++) {
      const sub = plain[i]!;
      if (!echo && sub.owner.cid === publisherCid) continue;
      this.deliver(sub, subject, reply, headerBytes, message);
      delivered++;
    }
    const queues = result.queues;
    for (let q = 0; q < queues.length; q++) {
      const members = queues[q]!;
      const chosen = this.pickMember(members, echo ? -1 : publisherCid);
      if (chosen === null) continue;
      this.deliver(chosen, subject, reply, headerBytes, message);
      delivered++;
    }
    return delivered;
  }

  /** The 503 status a requester that negotiated no_responders gets when nobody received its request. */
  publishNoResponders(reply: string): void {
    this.publish(reply, null, NO_RESPONDERS_HEADERS.length, NO_RESPONDERS_HEADERS, 0, true);
  }

  private deliver(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    sub.delivered++;
    this.stats.outMsgs++;
    this.stats.outBytes += message.length;
    sub.owner.deliverMessage(sub, subject, reply, headerBytes, message);
  }

  /** Rotates through the group so load spreads evenly; skips the publisher when echo is off. */
  private pickMember(members: readonly Subscription[], excludeCid: number): Subscription | null {
    const n = members.length;
    const start = this.queueCursor++ % n;
    for (let i = 0; i < n; i++) {
      const sub = members[(start + i) % n]!;
      if (sub.owner.cid !== excludeCid) return sub;
    }
    return null;
  }
}
