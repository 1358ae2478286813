// The server's side of JetStream's MessageBus: internal subscriptions on the core router.
import type { BusHandler, MessageBus } from '@flotilla/jetstream';
import type { MessageRouter } from './message-router.js';
import { Subscription, type SubscriptionOwner } from './subscription.js';

/** Internal subscribers deliver by calling their handler; cid 0 marks the server itself. */
class InternalSubscriber implements SubscriptionOwner {
  readonly cid = 0;
  constructor(private readonly handler: BusHandler) {}

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

  constructor(private readonly router: MessageRouter) {}

  subscribe(subject: string, handler: BusHandler, queue?: string): () => void {
    const owner = new InternalSubscriber(handler);
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
    if (header !== null && header.length > 0) {
      const message = Buffer.allocUnsafe(header.length + data.length);
      message.set(header, 0);
      message.set(data, header.length);
      this.router.publish(subject, reply, header.length, message, 0, true);
    } else {
      this.router.publish(subject, reply, -1, toBuffer(data), 0, true);
    }
  }

  hasInterest(subject: string): boolean {
    return this.router.sublist.hasInterest(subject);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
