// The server's side of JetStream's MessageBus: internal subscriptions on the core router.
import type { BusHandler, MessageBus } from '@flotilla/jetstream';
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

  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    this.handler({
      subject,
      reply,
      header: headerBytes > 0 ? message.subarray(0, headerBytes) : null,
      data: headerBytes > 0 ? message.subarray(headerBytes) : message,
    });
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

  subscribe(subject: string, handler: BusHandler, queue?: string): () => void {
    const owner = new InternalSubscriber(handler, this.clusterVisible);
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

  publish(subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    const [headerBytes, message] = frame(header, data);
    this.router.publish(subject, reply, headerBytes, message, 0, true);
  }

  /** Matches subscribers on `route` while the message keeps `subject`, as JetStream deliveries do. */
  publishTo(route: string, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    const [headerBytes, message] = frame(header, data);
    this.router.publishTo(route, subject, reply, headerBytes, message);
  }

  hasInterest(subject: string): boolean {
    return this.router.hasInterest(subject);
  }
}

/** Header block and body as the router carries them: one buffer and the header length (-1 for none). */
function frame(header: Uint8Array | null, data: Uint8Array): [number, Buffer] {
  if (header === null || header.length === 0) return [-1, toBuffer(data)];
  const message = Buffer.allocUnsafe(header.length + data.length);
  message.set(header, 0);
  message.set(data, header.length);
  return [header.length, message];
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
