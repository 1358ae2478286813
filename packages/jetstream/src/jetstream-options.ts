// What the server configures JetStream with (`new JetStreamService(bus, options, log)`).
import type { SyncPolicy } from '@flotilla/store';
import type { ClusterEnvironment } from './cluster/cluster-contracts.js';
import type { AccountLimits } from './catalogue/account-limits.js';
import type { ServerStreams } from './catalogue/server-streams.js';

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
  /** Every account's streams on this node, shared by each account's JetStream: the server's storage limits count them all. */
  serverStreams?: ServerStreams;
  /** Clustered JetStream (meta group, replicated streams); absent on a single node. */
  cluster?: ClusterEnvironment;
}
