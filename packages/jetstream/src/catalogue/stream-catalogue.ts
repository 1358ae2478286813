// Which streams exist, on disk: `<storeDir>/streams/<name>/meta.json` holds the config and created
// time. Written atomically (temp file, fsync, rename, fsync of the directory) so a kill -9 leaves the
// old or the new file, never a torn one. The message store lives beside it in `<dir>/messages/`.
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StreamConfig } from '../stream/stream-config-types.js';

const META_FILE = 'meta.json';
const META_VERSION = 1;

export interface StreamRecord {
  config: StreamConfig;
  /** RFC 3339, as StreamInfo.created. */
  created: string;
}

export interface LoadedStream extends StreamRecord {
  dir: string;
}

export function streamsRoot(storeDir: string): string {
  return join(storeDir, 'streams');
}

export function streamDir(storeDir: string, name: string): string {
  return join(streamsRoot(storeDir), name);
}

export function messagesDir(dir: string): string {
  return join(dir, 'messages');
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Creates the stream directory if needed and writes its record durably. */
export async function saveStream(dir: string, record: StreamRecord): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${META_FILE}.tmp`);
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(JSON.stringify({ version: META_VERSION, ...record }));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, join(dir, META_FILE));
  await fsyncPath(dir);
}

/**
 * Removes a stream: its record first (durably), so a crash part-way leaves a directory without a
 * record, which loading ignores and clears.
 */
export async function removeStream(dir: string): Promise<void> {
  await rm(join(dir, META_FILE), { force: true });
  await fsyncPath(join(dir, '..')).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}

/** Every stream with a readable record; directories without one (interrupted create/delete) are removed. */
export async function loadStreams(storeDir: string, warn: (obj: object, msg: string) => void): Promise<LoadedStream[]> {
  const root = streamsRoot(storeDir);
  await mkdir(root, { recursive: true });
  const out: LoadedStream[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, entry.name);
    let text: string;
    try {
      text = await readFile(join(dir, META_FILE), 'utf8');
    } catch {
      warn({ dir }, 'stream directory without a record: removing it');
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    try {
      const parsed = JSON.parse(text) as { version: number } & StreamRecord;
      if (parsed.version !== META_VERSION || parsed.config?.name !== entry.name) throw new Error('bad record');
      out.push({ dir, config: parsed.config, created: parsed.created });
    } catch (err) {
      // Never delete data we cannot read: leave it for an operator.
      warn({ dir, err: String(err) }, 'unreadable stream record: stream not loaded');
    }
  }
  return out;
}
