// How a node enters the meta group. With a meta log on disk it restarts from it. With none it waits until it
// sees the expected number of nodes and that view has been stable briefly, then founds the group with every
// node it sees as voters (sorted raft ids: every founder writes the same first entry). Past a bounded wait it
// founds with the nodes seen — but only with a quorum of the configured cluster: a minority (one side of a
// partition at first start) never founds a catalogue of its own and waits, answering 10008, as nats-server.
// If a meta leader contacts it meanwhile, a group already exists: it joins (no founding voters) and is added.
import { MessageType, type NodeId } from '@flotilla/raft';
import type { ClusterEnvironment } from './cluster-contracts.js';
import type { JetStreamLogger } from '../message-bus.js';

export const META_GROUP = '_meta_';

/**
 * The meta group of the JetStream account `env.account` serves: `_meta_` without accounts (unchanged), else
 * `_meta_.<account>` — each JetStream account has its own catalogue, so stream names are unique per account.
 */
export function metaGroupOf(env: Pick<ClusterEnvironment, 'account'>): string {
  return env.account === undefined ? META_GROUP : `${META_GROUP}.${env.account}`;
}

export type MetaStart = { kind: 'restart' } | { kind: 'found'; voters: NodeId[] } | { kind: 'join' };

export interface BootstrapTiming {
  /** Give up waiting for the expected nodes after this long and found with those seen (a quorum at least). */
  maxWaitMs: number;
  /** The seen set must be unchanged this long (gossip completing the mesh) before founding. */
  settleMs: number;
  /** A node that knows no routes may be the seed others dial: it waits at least this long. */
  seedMinWaitMs: number;
  pollMs: number;
}

export const DEFAULT_BOOTSTRAP_TIMING: BootstrapTiming = { maxWaitMs: 10_000, settleMs: 1_000, seedMinWaitMs: 2_500, pollMs: 50 };

/** While waiting below a quorum, said this often. */
const WAITING_LOG_EVERY_MS = 30_000;

export async function decideMetaStart(
  env: ClusterEnvironment,
  log: JetStreamLogger,
  timing: BootstrapTiming = DEFAULT_BOOTSTRAP_TIMING,
  isStopped: () => boolean = () => false,
): Promise<MetaStart> {
  const persisted = await env.raftStore.load(metaGroupOf(env));
  if (persisted.snapshot !== null || persisted.entries.length > 0) return { kind: 'restart' };
  let contacted = false;
  // Only a leader (or a candidate of an existing group) sends these; the messages themselves are dropped
  // here and resent by Raft once this node's RaftNode listens.
  const unlisten = env.transport.listen(metaGroupOf(env), env.self.raftNodeId, (m) => {
    if (m.type === MessageType.Append || m.type === MessageType.Heartbeat || m.type === MessageType.SnapshotChunk) contacted = true;
  });
  try {
    const startMs = Date.now();
    const minWaitMs = env.expectedClusterSize <= 1 ? timing.seedMinWaitMs : 0;
    let seen = activeIds(env);
    let stableSinceMs = startMs;
    // Past maxWaitMs the seen set must still be stable for settleMs (nodes founding with different voters
    // would write different first entries), up to this hard bound — once a quorum is seen.
    const hardMaxMs = timing.maxWaitMs + 3 * timing.settleMs;
    const quorum = Math.floor(env.expectedClusterSize / 2) + 1;
    let warnedMs = -Infinity;
    // Ends when founding or joining, or when stopped: below a quorum the wait has no end by design.
    for (;;) {
      if (isStopped()) break;
      if (contacted) {
        log.info({}, 'meta group exists: joining it');
        return { kind: 'join' };
      }
      const now = Date.now();
      const current = activeIds(env);
      if (current.join(',') !== seen.join(',')) {
        seen = current;
        stableSinceMs = now;
      }
      const elapsed = now - startMs;
      if (seen.length >= env.expectedClusterSize && elapsed >= minWaitMs && now - stableSinceMs >= timing.settleMs) break;
      if (seen.length < quorum) {
        if (elapsed >= timing.maxWaitMs && now - warnedMs >= WAITING_LOG_EVERY_MS) {
          warnedMs = now;
          log.warn({ expected: env.expectedClusterSize, seen: seen.length, quorum, waitedMs: elapsed }, 'meta group bootstrap: waiting for a quorum of the configured cluster');
        }
      } else if ((elapsed >= timing.maxWaitMs && now - stableSinceMs >= timing.settleMs) || elapsed >= hardMaxMs) {
        log.warn(
          { expected: env.expectedClusterSize, seen: seen.length, waitedMs: elapsed },
          'meta group bootstrap: expected nodes not all seen, founding with the nodes seen',
        );
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, timing.pollMs));
    }
    if (contacted) return { kind: 'join' };
    log.info({ voters: seen }, 'founding the meta group');
    return { kind: 'found', voters: seen };
  } finally {
    unlisten();
  }
}

function activeIds(env: ClusterEnvironment): NodeId[] {
  const ids = new Set<NodeId>([env.self.raftNodeId]);
  for (const p of env.peers()) if (p.active) ids.add(p.raftNodeId);
  return [...ids].sort((a, b) => a - b);
}
