// Routing of a traced message: the same deliveries as MessageRouter.publish, each client delivery recorded
// as an egress event; with Nats-Trace-Only the events are recorded and nothing is delivered.
import type { MessageRouter } from '../message-router.js';
import type { Subscription, SubscriptionOwner } from '../subscription.js';
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
  const deliver = !trace.traceOnly;
  let delivered = 0;
  const take = (sub: Subscription): void => {
    const owner = sub.owner;
    // Internal subscribers (streams, imports) get no egress event in nats-server either; a stream reports a
    // `js` hop, trace-only messages included (it rules on them and stores nothing).
    if (owner.cid === 0) {
      if (isTracedOwner(owner)) {
        sub.delivered++;
        owner.deliverTraced(sub, subject, reply, headerBytes, message, trace);
        delivered++;
      } else if (deliver) {
        router.deliverOne(sub, subject, reply, headerBytes, message);
        delivered++;
      }
      return;
    }
    if (!echo && owner.cid === publisherCid) return trace.clientEgress(owner.cid, ownerName(sub), sub.subject, sub.queue, NO_ECHO_ERROR);
    trace.clientEgress(owner.cid, ownerName(sub), sub.subject, sub.queue, null);
    if (deliver) router.deliverOne(sub, subject, reply, headerBytes, message);
    delivered++;
  };
  for (const sub of result.plain) take(sub);
  const cluster = router.cluster;
  let served: string[] | null = null;
  for (const members of result.queues) {
    const chosen = router.drawQueueMember(members, subject, echo ? -1 : publisherCid);
    if (chosen === null) continue;
    take(chosen);
    if (cluster !== null) (served ??= []).push(chosen.queue!);
  }
  // A peer would deliver a trace-only message: it is not forwarded (peers do not trace yet).
  if (cluster !== null && deliver) delivered += cluster.forward(subject, reply, headerBytes, message, served ?? NO_QUEUES, null);
  return delivered;
}
