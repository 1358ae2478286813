// The catalogue port: which streams exist and how they are created, changed and removed. On a single node
// it is the stream records under storeDir (local/local-catalogue.ts); in a cluster, the meta group's stream
// assignments (cluster/clustered-catalogue.ts). The API layer talks to this interface only.
import type { StreamConfig } from '../stream/stream-config-types.js';

/** The account's usage over every stream of the catalogue, as `$JS.API.INFO` reports it. */
export interface AccountUsage {
  memory: number;
  storage: number;
  streams: number;
  consumers: number;
  /** The same per tier (tierName of each stream's replicas), for `$JS.API.INFO`'s `tiers`. */
  tiers?: Record<string, TierUsage>;
}

export interface TierUsage {
  memory: number;
  storage: number;
  streams: number;
  consumers: number;
}

/** Adds one stream's figures to `usage` and to its tier's. */
export function addStreamUsage(usage: AccountUsage, tier: string, storageKind: 'file' | 'memory', bytes: number, consumers: number): void {
  const t = ((usage.tiers ??= {})[tier] ??= { memory: 0, storage: 0, streams: 0, consumers: 0 });
  if (storageKind === 'memory') {
    usage.memory += bytes;
    t.memory += bytes;
  } else {
    usage.storage += bytes;
    t.storage += bytes;
  }
  usage.streams++;
  t.streams++;
  usage.consumers += consumers;
  t.consumers += consumers;
}

export interface Catalogue {
  /**
   * STREAM.CREATE of a parsed, checked config: creates the stream, or finds an identical one (10058 when the
   * name is taken by another config). Resolves with the StreamInfo to answer with.
   */
  create(cfg: StreamConfig): Promise<object>;
  /** STREAM.UPDATE of a parsed config (checked here against the current one); resolves with the StreamInfo. */
  update(requested: StreamConfig): Promise<object>;
  /** STREAM.DELETE (10059 when there is no such stream). */
  delete(name: string): Promise<void>;
  /** STREAM.PEER.REMOVE: moves the stream off the named peer (refused on a single node). */
  removePeer(name: string, peerName: string): Promise<void>;
  /** Names of the streams whose subjects overlap `subject` (every stream when absent or ''), in listing order. */
  names(subject: string | undefined): string[];
  /** The StreamInfo of each of `names` (taken from `names()` in the same turn), in that order: a LIST page. */
  infos(names: readonly string[]): Promise<object[]>;
  /** The account's usage over the catalogue. */
  usage(): Promise<AccountUsage>;
}
