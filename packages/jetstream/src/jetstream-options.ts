// What the server configures JetStream with (`new JetStreamService(bus, options, log)`).
import type { SyncPolicy } from '@flotilla/store';
import type { ClusterEnvironment } from './cluster/cluster-contracts.js';
import type { AccountLimits, AccountTiers } from './catalogue/account-limits.js';
import type { ServerStreams } from './catalogue/server-streams.js';
import type { MessageBus } from './message-bus.js';

export interface JetStreamServiceOptions {
  storeDir: string;
  /** -1 = unlimited */
  maxMemoryStoreBytes: number;
  /** -1 = unlimited */
  maxFileStoreBytes: number;
  domain?: string;
  /** Server's name and id for advisories and info responses. */
  serverName: string;
  serverId: string;
  /** File stores: `always` (default) fsyncs before an ack; `{intervalMs}` syncs periodically. */
  fileSync?: SyncPolicy;
  /** The account's limits (`accounts { A: { jetstream: {...} } }`); absent: unlimited, as the global account without accounts. */
  accountLimits?: AccountLimits;
  /** The account's tiered limits (an account JWT's tiered_limits), by tier name; when set, `accountLimits` is not used. */
  accountTiers?: AccountTiers;
  /** Every account's streams on this node, shared by each account's JetStream: the server's storage limits count them all. */
  serverStreams?: ServerStreams;
  /** Clustered JetStream (meta group, replicated streams); absent on a single node. */
  cluster?: ClusterEnvironment;
  /**
   * In a cluster with accounts: the system account's bus, where the account's usage reports travel (as
   * nats-server's `$JSC.ARU`), out of the account's own subject space; the account's bus when absent.
   */
  systemBus?: MessageBus;
}
