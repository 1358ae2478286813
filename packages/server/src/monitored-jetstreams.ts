// Every JetStream this node runs, with the account it serves, as monitoring reads them: without accounts the
// server's one JetStream is the global account's ($G); with accounts, one per JetStream-enabled account.
// Sorted by account name (nats-server sorts /jsz account details so pages are stable).
import type { JetStreamService } from '@flotilla/jetstream';
import type { FlotillaServer } from './server.js';
import { GLOBAL_ACCOUNT_NAME } from './accounts/account.js';
import { clusterViewOf, type ClusterView } from './cluster-view.js';

export interface AccountJetStream {
  readonly account: string;
  readonly js: JetStreamService;
}

export function jetStreamsByAccount(server: FlotillaServer): AccountJetStream[] {
  const perAccount = server.accountJetStreams;
  if (perAccount === null) return server.jetstream === null ? [] : [{ account: GLOBAL_ACCOUNT_NAME, js: server.jetstream }];
  return [...perAccount.entries()].map(([account, js]) => ({ account, js })).sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
}

/** JetStream runs on this node: with accounts it does even when no account has it (then no JetStream at all). */
export function jetStreamRuns(server: FlotillaServer): boolean {
  return server.jetstream !== null || server.accountJetStreams !== null;
}

/** The distinct cluster views of those JetStreams (accounts of one node may share one meta group's view). */
export function clusterViewsOf(all: readonly AccountJetStream[]): ClusterView[] {
  const views = new Set<ClusterView>();
  for (const { js } of all) {
    const view = clusterViewOf(js);
    if (view !== null) views.add(view);
  }
  return [...views];
}
