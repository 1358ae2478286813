import { describe, it, expect } from 'vitest';
import { mkdtempSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogStore } from '@flotilla/raft';
import { removeOrphanReplicas } from '../src/cluster/clustered-jetstream-cleanup.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('orphaned replica data', () => {
  it('removes replica directories and Raft logs of groups no longer assigned here, nothing else', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'meta-orphans-'));
    for (const d of ['S-GONE-0123abcd', 'S-KEPT-89abcdef', 'ORDERS', 'S-odd']) mkdirSync(join(storeDir, 'streams', d, 'messages'), { recursive: true });
    const raftStore = new MemoryLogStore();
    const dropped: string[] = [];
    raftStore.drop = async (group: string) => void dropped.push(group);
    const removed = await removeOrphanReplicas({ storeDir, raftStore, log: quiet, keptGroups: () => new Set(['S-KEPT-89abcdef']) });
    expect(removed).toEqual(['S-GONE-0123abcd']);
    expect(dropped).toEqual(['S-GONE-0123abcd']);
    expect(readdirSync(join(storeDir, 'streams')).sort()).toEqual(['ORDERS', 'S-KEPT-89abcdef', 'S-odd']);
  });

  it('does nothing without a streams directory', async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'meta-orphans-'));
    expect(await removeOrphanReplicas({ storeDir, raftStore: new MemoryLogStore(), log: quiet, keptGroups: () => new Set() })).toEqual([]);
  });
});
