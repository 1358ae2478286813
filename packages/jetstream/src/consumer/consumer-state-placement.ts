// The consumer-state placement port: where one stream's consumers keep their config and state
// (delivered, ack floor, pending, redeliveries), how those are written, restored and removed, and when this
// node runs the consumers. The ConsumerService owns the consumer table and the API and asks its stream's
// placement for everything that depends on how JetStream runs here:
//   - local files (`local/local-consumer-files.ts`): this node alone runs the consumers, from the files
//     under `<stream.dir>/consumers/` (nothing for memory streams);
//   - the stream's Raft group (`cluster/consumer-replication-placement.ts`): the stream leader runs them,
//     from what the group committed; every replica applies the same entries.
import type { StreamHandle } from '../stream/stream-handle.js';
import type { ConsumerConfig } from './consumer-config.js';
import type { ConsumerStateSnapshot } from './consumer-state.js';
import type { Consumer } from './consumer.js';

/** What identifies and configures a consumer (meta.json, the `meta` replication entry). */
export interface ConsumerMeta {
  stream_name: string;
  name: string;
  created: string;
  config: ConsumerConfig;
}

/** One consumer's writer: where its config and state changes go. */
export interface ConsumerStorage {
  saveMeta(meta: ConsumerMeta): Promise<void>;
  /** Marks the state dirty; `read` is called when the write happens. */
  stateChanged(): void;
  /** Resolves when every state change so far is durable (cluster: committed). */
  flush(): Promise<void>;
  /** Stops writing and deletes everything stored. */
  remove(): Promise<void>;
  /** Final flush; no writes after. */
  close(): Promise<void>;
  /** Stops at once, writing nothing more (cluster: leadership lost, or the stream goes away). */
  abandon(): void;
}

/** A consumer as stored: its config and, once one was written, its state. */
export interface StoredConsumer {
  meta: ConsumerMeta;
  state: ConsumerStateSnapshot | null;
}

/**
 * A new runner waits this long at most for the stream's earlier consumer work (an earlier leadership's
 * create, delete or resync, which may wait on a commit that never comes) before it starts its consumers anyway.
 */
export const LEADERSHIP_START_WAIT_MS = 1_000;

/** The ConsumerService's side of one stream, as its placement drives it. */
export interface ConsumerRunner {
  /**
   * Makes and starts `stored` on this node (one that cannot be made is logged and skipped). Resolves with
   * the names started; null, starting nothing more, once `current()` is false or the stream left the service.
   */
  startStored(stored: readonly StoredConsumer[], current: () => boolean): Promise<string[] | null>;
  /** The consumers running here now. */
  running(): Consumer[];
  readonly runningCount: number;
  isRunning(name: string): boolean;
  /** Forgets every running consumer (the placement closed or released them). */
  forgetAll(): void;
  /**
   * Runs `fn` in turn with the stream's consumer create/delete work; with `waitAtMostMs`, after that long
   * even if the earlier work has not finished.
   */
  inTurn<T>(fn: () => Promise<T>, waitAtMostMs?: number): Promise<T>;
}

/** Where one stream's consumers live and whether this node runs them. */
export interface ConsumerStatePlacement {
  /**
   * The stream was registered with the ConsumerService under this placement: load what this node stored.
   * Local files start their consumers here; the Raft group starts them when this node leads the stream.
   */
  open(runner: ConsumerRunner): Promise<void>;
  /** The writer for one consumer's config and state; `read` gives its current state. */
  storageFor(name: string, config: ConsumerConfig, read: () => ConsumerStateSnapshot): ConsumerStorage;
  /**
   * A new consumer: sets its start position (`initPosition(null)`) and stores its config and state, all
   * before the create is answered. Rejects, having released the consumer, when it cannot be stored here.
   */
  storeNew(consumer: Consumer): Promise<void>;
  /** Removes a running consumer's config and state; `unlist` takes it out of the table (when, is the placement's). */
  remove(consumer: Consumer, unlist: () => void): Promise<void>;
  /** This node serves the stream's consumer requests now. */
  readonly serving: boolean;
  /** Consumers may have num_replicas > 1, and LEADER.STEPDOWN moves them to another node. */
  readonly acceptsReplicas: boolean;
  /** Consumers stored for the stream, whether they run here or not. */
  consumerCount(): number;
  /** Their config and state as this node last applied them (a follower's /jsz lists them); absent: none kept. */
  storedConsumers?(): Array<{ meta: ConsumerMeta; state: ConsumerStateSnapshot | null }>;
  /** A consumer of this name is stored (it may not run here). */
  isStored(name: string): boolean;
  /** ConsumerInfo's `cluster` block; undefined: none is shown. */
  clusterInfo(): object | undefined;
  /** CONSUMER.LEADER.STEPDOWN: another node takes the consumers over. */
  stepDown(): Promise<void>;
  /**
   * Interest retention while the consumers are not running yet (a new leader starting them): whether a
   * stored consumer would take `subject`; undefined when the running consumers decide.
   */
  interestWhileStarting(subject: string): boolean | undefined;
  /** A message was stored in the stream in sequence. */
  messageStored(seq: number): void;
  /** Messages left the stream (purge, delete), or a snapshot replaced its store. */
  messagesRemoved(): void;
  /** The stream is deleted: its consumers stop and their config and state go. */
  streamDeleted(): Promise<void>;
  /** Another placement takes the stream's consumers over on this node: stop them here, keep what is stored. */
  handOver(): Promise<void>;
  /** The node stops: the consumers stop, with their last state stored. */
  close(): Promise<void>;
}

/** The placement of streams that do not bring their own (a single node: local files). */
export interface ConsumerStatePlacements {
  forStream(stream: StreamHandle): ConsumerStatePlacement;
}
