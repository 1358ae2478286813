// The system account's internal client in one account's subject space: subscriptions whose messages are
// handled by the server itself, and publishes of the JSON it answers with. A request is copied out of the
// publisher's buffers and handled after the publish that carried it returns (nats-server hands them to an
// internal queue too), so a handler never publishes into a router that is still delivering.
import type { MessageRouter } from '../message-router.js';
import { Subscription, type SubscriptionOwner } from '../subscription.js';

export interface SystemRequest {
  subject: string;
  reply: string | null;
  /** the request's header block, null without one */
  header: Buffer | null;
  body: Buffer;
  /** the connection that published it (0: the server itself) */
  publisherCid: number;
}

export type SystemHandler = (req: SystemRequest) => void;
/** Where a handler's exception goes: a bug in one answer must not take the process down. */
export type HandlerFailure = (err: unknown, subject: string) => void;

class InternalSubscriber implements SubscriptionOwner {
  readonly cid = 0;

  constructor(
    private readonly router: MessageRouter,
    private readonly handler: SystemHandler,
    private readonly failed: HandlerFailure,
    /** announced to the cluster (cluster-visible.ts), so a request made on any node reaches this one */
    readonly clusterVisible: boolean,
  ) {}

  deliverMessage(_sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    // Read while the publish is still running: the router names its publisher only until it returns.
    const publisherCid = this.router.publisherCid;
    const header = headerBytes > 0 ? Buffer.from(message.subarray(0, headerBytes)) : null;
    const body = Buffer.from(headerBytes > 0 ? message.subarray(headerBytes) : message);
    queueMicrotask(() => {
      try {
        this.handler({ subject, reply, header, body, publisherCid });
      } catch (err) {
        this.failed(err, subject);
      }
    });
  }
}

export class InternalClient {
  private readonly subs: Subscription[] = [];
  private nextSid = 1;

  constructor(
    readonly router: MessageRouter,
    private readonly failed: HandlerFailure,
  ) {}

  /**
   * nats-server's system subscriptions are routed: every node answers a request made on any node. `local`
   * keeps one on this node only, for an answer that reads the requesting connection (USER.INFO).
   */
  subscribe(subject: string, handler: SystemHandler, scope: 'cluster' | 'local' = 'cluster', queue: string | null = null): void {
    const owner = new InternalSubscriber(this.router, handler, this.failed, scope === 'cluster');
    const sub = new Subscription(owner, subject, queue, `$sys.events.${this.nextSid++}`);
    this.subs.push(sub);
    this.router.subscribe(sub);
  }

  /** Publishes `json` (already serialised) on `subject`; false when nothing received it. */
  publish(subject: string, json: string): boolean {
    return this.router.publish(subject, null, -1, Buffer.from(json), 0, true) > 0;
  }

  /** Publishes `body` with the header block `header` (none when null); false when nothing received it. */
  publishMessage(subject: string, header: Buffer | null, body: Buffer): boolean {
    const message = header === null ? body : Buffer.concat([header, body]);
    return this.router.publish(subject, null, header === null ? -1 : header.length, message, 0, true) > 0;
  }

  hasInterest(subject: string): boolean {
    return this.router.hasInterest(subject);
  }

  close(): void {
    for (const sub of this.subs) this.router.unsubscribe(sub);
    this.subs.length = 0;
  }
}
