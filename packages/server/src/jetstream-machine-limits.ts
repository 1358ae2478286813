// JetStream's server limits when the config sets none, sized from the machine as nats-server's
// dynJetStreamConfig does at start: max_memory_store 75% of the machine's memory (256 MiB when unknown),
// max_file_store 75% of the store directory's available disk (1 TiB when statfs fails). A configured value
// (0 included) is kept. The sizes are taken once, when JetStream starts, and then fixed, as nats-server's.
import { statfsSync } from 'node:fs';
import { totalmem } from 'node:os';
import type { JetStreamOptions } from './config/options.js';

export const DEFAULT_MAX_FILE_STORE_BYTES = 1024 ** 4;
export const DEFAULT_MAX_MEMORY_STORE_BYTES = 256 * 1024 ** 2;

export interface JetStreamServerLimits {
  memoryBytes: number;
  fileBytes: number;
}

export function machineSizedLimits(o: Pick<JetStreamOptions, 'maxMemoryStoreBytes' | 'maxFileStoreBytes' | 'storeDir'>): JetStreamServerLimits {
  return {
    memoryBytes: o.maxMemoryStoreBytes >= 0 ? o.maxMemoryStoreBytes : memorySized(),
    fileBytes: o.maxFileStoreBytes >= 0 ? o.maxFileStoreBytes : diskSized(o.storeDir),
  };
}

function memorySized(): number {
  const total = totalmem();
  return total > 0 ? Math.floor(total / 4) * 3 : DEFAULT_MAX_MEMORY_STORE_BYTES;
}

function diskSized(storeDir: string): number {
  try {
    const fs = statfsSync(storeDir);
    return Math.floor((fs.bavail * fs.bsize) / 4) * 3;
  } catch {
    return DEFAULT_MAX_FILE_STORE_BYTES;
  }
}
