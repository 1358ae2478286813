// The server's side of JetStream's MessageBus: internal subscriptions on the core router.
import type { BusHandler, BusSubscribeOptions, BusTrace, MessageBus } from '@flotilla/jetstream';
import type { MessageRouter } from './message-router.js';
import { Subscription, type SubscriptionOwner } from './subscription.js';

/** Internal subscribers deliver by calling their handler; cid 0 marks the server itself. */
class InternalSubscriber implements SubscriptionOwner {
  readonly cid = 0;
  constructor(
    private readonly handler: BusHandler,
    /** Announced to the cluster (cluster-visible.ts): clustered JetStream serves requests from every node. */
    readonly clusterVisible: boolean,
  ) {}

  /** Set for a delivery target (a mirror's or source's deliver subject): push consumers deliver to it. */
  clientInterest?: (subject: string) => boolean;

  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, fromPeer?: string): void {
    this.handler({
      subject,
      reply,
      header: headerBytes > 0 ? message.subarray(0, headerBytes) : null,
      data: headerBytes > 0 ? message.subarray(headerBytes) : message,
      ...(fromPeer !== undefined ? { fromPeer } : {}),
    });
    if (sub.maxMsgs > 0 && sub.delivered >= sub.maxMsgs) this.unsubscribe?.();
  }

  /** Set when the handler reports traced messages (message-trace/traced-publish.ts hands them over with deliverTraced). */
  traced = false;

  deliverTraced(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, trace: BusTrace): void {
    this.handler({ subject, reply, header: message.subarray(0, headerBytes), data: message.subarray(headerBytes), trace });
    if (sub.maxMsgs > 0 && sub.delivered >= sub.maxMsgs) this.unsubscribe?.();
  }

  unsubscribe: (() => void) | null = null;
}

export class InternalBus implements MessageBus {
  private nextSid = 1;

  /** `clusterVisible`: every subscription is announced to the other nodes (clustered JetStream). */
  constructor(
    private readonly router: MessageRouter,
    private readonly clusterVisible = false,
  ) {}

  subscribe(subject: string, handler: BusHandler, queue?: string, opts?: BusSubscribeOptions): () => void {
    const owner = new InternalSubscriber(handler, this.clusterVisible);
    if (opts?.deliveryTarget === true) owner.clientInterest = () => true;
    if (opts?.traced === true) owner.traced = true;
    const sub = new Subscription(owner, subject, queue ?? null, `$sys.${this.nextSid++}`);
    this.router.subscribe(sub);
    let active = true;
    owner.unsubscribe = () => {
      if (!active) return;
      active = false;
      this.router.unsubscribe(sub);
    };
    return owner.unsubscribe;
  }

  // Header and body stay apart until a subscriber needs them joined (client connections never do).
  publish(subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    this.router.publishParts(null, subject, reply, header, data);
  }

  /** Matches subscribers on `route` while the message keeps `subject`, as JetStream deliveries do. */
  publishTo(route: string, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    this.router.publishParts(route, subject, reply, header, data);
  }

  hasInterest(subject: string): boolean {
    return this.router.hasInterest(subject);
  }

  hasClientInterest(subject: string): boolean {
    return this.router.hasClientInterest(subject);
  }
}
