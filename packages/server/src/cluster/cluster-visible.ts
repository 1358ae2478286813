// Which local subscriptions the cluster knows of: every client's, and internal ones whose owner opts in
// with `clusterVisible: true` (a clustered service that wants messages from other nodes). Other internal
// subscriptions (this node's own JetStream API, the fault hook) stay local, so a request is never answered
// by two nodes. A visible internal subscription is announced apart from clients' (InterestEntry.clients):
// messages are forwarded to it, but it is no subscriber a push consumer on another node delivers to.
import type { Subscription } from '../subscription.js';

export function isClusterVisible(sub: Subscription): boolean {
  const owner = sub.owner as Subscription['owner'] & { readonly clusterVisible?: boolean };
  return owner.cid !== 0 || owner.clusterVisible === true;
}
