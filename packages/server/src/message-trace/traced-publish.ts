// Routing of a traced message: the same deliveries as MessageRouter.publish (at the origin) and deliverRouted
// (on a peer), each client delivery recorded as an egress event and each peer it is forwarded to as a route
// egress; with Nats-Trace-Only the events are recorded and nothing is delivered to a client or stored.
import { pickMember, type MessageRouter } from '../message-router.js';
import type { Subscription, SubscriptionOwner } from '../subscription.js';
import { isClusterVisible } from '../cluster/cluster-visible.js';
import type { BusTrace } from '@flotilla/jetstream';
import { NO_ECHO_ERROR, type MessageTrace } from './message-trace.js';

const NO_QUEUES: readonly string[] = [];

/** An internal owner that reports traced messages (InternalBus subscriptions made with `traced`). */
interface TracedOwner extends SubscriptionOwner {
  traced: boolean;
  deliverTraced(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, trace: BusTrace): void;
}

function isTracedOwner(owner: SubscriptionOwner): owner is TracedOwner {
  return (owner as Partial<TracedOwner>).traced === true;
}

/** A client connection's name (`name` in CONNECT); internal owners have none. */
function ownerName(sub: Subscription): string {
  return (sub.owner as { name?: string }).name ?? '';
}

/** One traced message's deliveries on this node. */
class TracedDeliveries {
  delivered = 0;

  constructor(
    private readonly router: MessageRouter,
    private readonly trace: MessageTrace,
    private readonly subject: string,
    private readonly reply: string | null,
    private readonly headerBytes: number,
    private readonly message: Buffer,
    private readonly publisherCid: number,
    private readonly echo: boolean,
    private readonly route: string | null = null,
    private readonly fromPeer?: string,
  ) {}

  take(sub: Subscription): void {
    const { router, trace, subject, reply, headerBytes, message } = this;
    const owner = sub.owner;
    const deliver = !trace.traceOnly;
    // Internal subscribers (streams, imports) get no egress event in nats-server either; a stream reports a
    // `js` hop, trace-only messages included (it rules on them and stores nothing).
    if (owner.cid === 0) {
      if (isTracedOwner(owner)) {
        sub.delivered++;
        router.stats.outMsgs++;
        router.stats.outBytes += message.length;
        owner.deliverTraced(sub, subject, reply, headerBytes, message, trace);
        this.delivered++;
      } else if (deliver) {
        router.deliverOne(sub, subject, reply, headerBytes, message, this.route, this.fromPeer);
        this.delivered++;
      }
      return;
    }
    if (!this.echo && owner.cid === this.publisherCid) return trace.clientEgress(owner.cid, ownerName(sub), sub.subject, sub.queue, NO_ECHO_ERROR);
    trace.clientEgress(owner.cid, ownerName(sub), sub.subject, sub.queue, null);
    if (deliver) router.deliverOne(sub, subject, reply, headerBytes, message, this.route, this.fromPeer);
    this.delivered++;
  }
}

/** Returns how many subscriptions received it (trace-only: would have), as MessageRouter.publish does. */
export function publishTraced(
  router: MessageRouter,
  trace: MessageTrace,
  subject: string,
  reply: string | null,
  headerBytes: number,
  message: Buffer,
  publisherCid: number,
  echo: boolean,
): number {
  const result = router.sublist.match(subject);
  router.stats.inMsgs++;
  router.stats.inBytes += message.length;
  router.publisherCid = publisherCid;
  const d = new TracedDeliveries(router, trace, subject, reply, headerBytes, message, publisherCid, echo);
  for (const sub of result.plain) d.take(sub);
  const cluster = router.cluster;
  let served: string[] | null = null;
  for (const members of result.queues) {
    const chosen = router.drawQueueMember(members, subject, echo ? -1 : publisherCid);
    if (chosen === null) continue;
    d.take(chosen);
    if (cluster !== null) (served ??= []).push(chosen.queue!);
  }
  // Trace-only too: each peer traces what it would do and delivers nothing (nats-server routes it likewise).
  if (cluster !== null) d.delivered += cluster.forward(subject, reply, headerBytes, message, served ?? NO_QUEUES, null, trace);
  return d.delivered;
}

/** MessageRouter.deliverRouted for a traced message a peer forwarded: it is never forwarded again. */
export function deliverRoutedTraced(
  router: MessageRouter,
  trace: MessageTrace,
  subject: string,
  reply: string | null,
  headerBytes: number,
  message: Buffer,
  queues: readonly string[],
  route: string | null,
  fromPeer: string,
): number {
  router.stats.inMsgs++;
  router.stats.inBytes += message.length;
  router.publisherCid = 0;
  const result = router.sublist.match(route ?? subject);
  const d = new TracedDeliveries(router, trace, subject, reply, headerBytes, message, 0, true, route, fromPeer);
  for (const sub of result.plain) if (isClusterVisible(sub)) d.take(sub);
  if (queues.length === 0) return d.delivered;
  for (const members of result.queues) {
    if (!queues.includes(members[0]!.queue!)) continue;
    const chosen = pickMember(members, -1, true, 0);
    if (chosen !== null) d.take(chosen);
  }
  return d.delivered;
}
