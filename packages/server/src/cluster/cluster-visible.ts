// Which local subscriptions the cluster knows of: every client's, and internal ones whose owner has
// `clusterVisible: true` — clustered JetStream's (every node subscribes `$JS.API.>` and the stream subjects
// it leads; who answers is JetStream's rule, not routing's). Other internal subscriptions (a single node's
// JetStream, the fault hook) stay local. A visible internal subscription is announced apart from clients'
// (InterestEntry.clients): messages are forwarded to it, but it is no subscriber a push consumer on another
// node delivers to.
import type { Subscription } from '../subscription.js';

export function isClusterVisible(sub: Subscription): boolean {
  const owner = sub.owner as Subscription['owner'] & { readonly clusterVisible?: boolean };
  return owner.cid !== 0 || owner.clusterVisible === true;
}

/** Announced as a client's: a push consumer on another node delivers to it (clients, delivery targets). */
export function countsAsClient(sub: Subscription): boolean {
  return sub.owner.cid !== 0 || (sub.owner.clientInterest !== undefined && sub.owner.clientInterest(sub.subject));
}
