// Replica data left behind by catalogue changes made while this node was down (a stream deleted, or moved
// to other nodes): once this node has followed a meta leader for a while, every `<storeDir>/streams/S-…`
// directory whose group is neither in the catalogue for this node nor open is deleted, with its Raft log.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RaftLogStore } from '@flotilla/raft';
import type { JetStreamLogger } from '../message-bus.js';

/** Group ids as the meta leader makes them (`S-<name>-<8 hex>`); other directories are never touched. */
const GROUP_DIR = /^S-.+-[0-9a-f]{8}$/;

export interface OrphanCleanupHost {
  storeDir: string;
  raftStore: RaftLogStore;
  log: JetStreamLogger;
  /** Groups that must stay: assigned to this node, or open here. */
  keptGroups(): Set<string>;
}

/** Deletes orphaned replica directories and Raft logs; returns the groups removed. */
export async function removeOrphanReplicas(host: OrphanCleanupHost): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(join(host.storeDir, 'streams'));
  } catch {
    return [];
  }
  const kept = host.keptGroups();
  const removed: string[] = [];
  for (const group of entries) {
    if (!GROUP_DIR.test(group) || kept.has(group)) continue;
    // Re-checked per directory: the catalogue may have moved on while earlier ones were removed.
    if (host.keptGroups().has(group)) continue;
    try {
      await host.raftStore.drop(group);
      await rm(join(host.storeDir, 'streams', group), { recursive: true, force: true });
      removed.push(group);
    } catch (err) {
      host.log.warn({ group, err: String(err) }, 'orphaned stream replica could not be removed');
    }
  }
  if (removed.length > 0) host.log.info({ groups: removed }, 'removed stream replicas the catalogue no longer assigns here');
  return removed;
}
