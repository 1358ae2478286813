// A traced message a peer forwarded (issue 21, ADR-41 across routes): this node traces its own deliveries and
// publishes its own event, whose Nats-Trace-Hop header says which of the origin's route egresses led here.
import type { MessageRouter } from '../message-router.js';
import { ROUTER_KIND } from './message-trace.js';
import { DROPPED, UNTRACED, startTrace } from './trace-start.js';
import { deliverRoutedTraced } from './traced-publish.js';
import { sendTraceEvent } from './trace-event-send.js';

export interface RoutedArrival {
  subject: string;
  reply: string | null;
  headerBytes: number;
  message: Buffer;
  queues: readonly string[];
  route: string | null;
  /** the sending node's server id, and its server name (the ingress names it) */
  fromPeer: string;
  peerName: string;
  account: string;
}

/** false when the message is not traced after all (deliver it as any routed message). */
export function deliverRoutedWithTrace(router: MessageRouter, m: RoutedArrival, serverInfo: () => Record<string, unknown>): boolean {
  const from = { kind: ROUTER_KIND, cid: 0, name: m.peerName, account: m.account, subject: m.subject };
  const start = startTrace(m.message, m.headerBytes, from, null, true);
  if (start === UNTRACED) return false;
  if (start === DROPPED || !('finish' in start)) return true;
  deliverRoutedTraced(router, start, m.subject, m.reply, m.headerBytes, m.message, m.queues, m.route, m.fromPeer);
  start.finish((t) => sendTraceEvent(router, t, serverInfo()));
  return true;
}
