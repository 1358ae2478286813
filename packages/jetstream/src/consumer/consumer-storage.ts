// A consumer's config and state as files under `<stream.dir>/consumers/<name>/` — both placements write this
// format: local files as the truth, each replica of a Raft group what it applied — and the storage of memory
// streams and mem_storage consumers (nothing). State writes are coalesced: many changes in one tick cost one
// write (temp file, fdatasync, rename, directory fsync) at most every 20 ms, and flush() — which ack-sync
// replies wait for — writes at once and resolves once everything so far is on disk.
import * as fs from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { scheduleWrite } from './coalesced-timer.js';
import type { ConsumerStateSnapshot } from './consumer-state.js';
import type { ConsumerMeta, ConsumerStorage } from './consumer-state-placement.js';

export type { ConsumerMeta, ConsumerStorage } from './consumer-state-placement.js';

/** Memory streams and mem_storage consumers: state lives only in the consumer object. */
export class MemoryConsumerStorage implements ConsumerStorage {
  async saveMeta(): Promise<void> {}
  stateChanged(): void {}
  async flush(): Promise<void> {}
  async remove(): Promise<void> {}
  async close(): Promise<void> {}
  abandon(): void {}
}

/** Minimum gap between two state writes unless someone waits for durability (ack-sync, shutdown). */
const STATE_WRITE_INTERVAL_MS = 20;

export class FileConsumerStorage implements ConsumerStorage {
  private dirty = false;
  private writing: Promise<void> | null = null;
  private cancelScheduled: (() => void) | null = null;
  private lastWriteMs = 0;
  private dirReady = false;
  private closed = false;
  private waiters: Array<() => void> = [];

  constructor(
    readonly dir: string,
    private readonly read: () => ConsumerStateSnapshot,
    private readonly onError: (err: unknown) => void,
  ) {}

  async saveMeta(meta: ConsumerMeta): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    this.dirReady = true;
    await writeDurably(join(this.dir, 'meta.json'), JSON.stringify(meta));
  }

  stateChanged(): void {
    if (this.closed) return;
    this.dirty = true;
    this.schedule(false);
  }

  flush(): Promise<void> {
    if (!this.dirty && this.writing === null) return Promise.resolve();
    const p = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.schedule(true);
    return p;
  }

  /** One write at a time; `urgent` skips the interval (a caller waits). */
  private schedule(urgent: boolean): void {
    if (this.writing !== null || this.closed) return;
    // Already scheduled: every delivery and ack lands here, so this is checked before reading the clock.
    if (this.cancelScheduled !== null) {
      if (!urgent) return;
      this.cancelScheduled();
    }
    const waitMs = urgent ? 0 : Math.max(0, this.lastWriteMs + STATE_WRITE_INTERVAL_MS - Date.now());
    this.cancelScheduled = scheduleWrite(waitMs, () => this.startWrite());
  }

  private startWrite(): void {
    this.cancelScheduled = null;
    if (this.writing !== null || this.closed) return;
    this.writing = (async () => {
      // Each pass writes the newest state; waiters that came during a write are served by the next pass.
      for (let pass = 0; this.dirty && !this.closed && pass < 1_000_000; pass++) {
        this.dirty = false;
        const waiters = this.waiters;
        this.waiters = [];
        try {
          if (!this.dirReady) await mkdir(this.dir, { recursive: true });
          this.dirReady = true;
          await writeDurably(join(this.dir, 'state.json'), JSON.stringify(this.read()));
        } catch (err) {
          this.onError(err);
        }
        this.lastWriteMs = Date.now();
        for (const w of waiters) w();
        if (this.waiters.length === 0) break;
      }
    })().finally(() => {
      this.writing = null;
      if (this.closed || !this.dirty) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w();
      } else {
        this.schedule(this.waiters.length > 0);
      }
    });
  }

  async remove(): Promise<void> {
    this.closed = true;
    this.cancelScheduled?.();
    await this.writing;
    await rm(this.dir, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    // A write in progress does not include changes made meanwhile: write again until nothing is dirty.
    for (let pass = 0; pass < 100 && (this.dirty || this.writing !== null); pass++) {
      this.cancelScheduled?.();
      this.cancelScheduled = null;
      if (this.writing === null) this.startWrite();
      await this.writing;
    }
    this.cancelScheduled?.();
    this.cancelScheduled = null;
    this.closed = true;
  }

  abandon(): void {
    this.closed = true;
    this.cancelScheduled?.();
    this.cancelScheduled = null;
  }
}

/**
 * Temp file, fdatasync, rename. On fs's callback API: a state write happens up to 50 times a second per busy
 * consumer, and fs/promises' FileHandle (an object with a finalizer per open) cost several times as much.
 */
function writeDurably(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const bytes = Buffer.from(text, 'utf8');
  return new Promise<void>((resolve, reject) => {
    fs.open(tmp, 'w', (openErr, fd) => {
      if (openErr) return reject(openErr);
      // Closes the file whatever happened, then reports the first error (or renames).
      const finish = (err: Error | null): void => {
        fs.close(fd, (closeErr) => {
          const first = err ?? closeErr;
          if (first) return reject(first);
          fs.rename(tmp, path, (renameErr) => {
            if (renameErr) return reject(renameErr);
            // The rename is durable only once the directory is: before, a power cut brings back the old file.
            syncDirectory(dirname(path), (syncErr) => (syncErr ? reject(syncErr) : resolve()));
          });
        });
      };
      writeAll(fd, bytes, 0, (writeErr) => {
        if (writeErr) return finish(writeErr);
        fs.fdatasync(fd, (syncErr) => finish(syncErr));
      });
    });
  });
}

/** fsync of a directory, making the entries created or renamed in it durable. */
function syncDirectory(dir: string, done: (err: Error | null) => void): void {
  fs.open(dir, 'r', (openErr, fd) => {
    if (openErr) return done(openErr);
    fs.fsync(fd, (syncErr) => fs.close(fd, (closeErr) => done(syncErr ?? closeErr)));
  });
}

/** fs.write until every byte is written (a short write continues where it stopped). */
function writeAll(fd: number, bytes: Buffer, from: number, done: (err: Error | null) => void): void {
  if (from >= bytes.length) return done(null);
  fs.write(fd, bytes, from, bytes.length - from, null, (err, written) => {
    if (err) return done(err);
    if (written <= 0) return done(new Error(`short write to consumer state at ${from} of ${bytes.length}`));
    writeAll(fd, bytes, from + written, done);
  });
}

/** Every consumer stored under `consumersDir`, read one at a time as the caller asks (a missing directory: none). */
export async function* storedConsumers(consumersDir: string): AsyncGenerator<{ meta: ConsumerMeta; state: ConsumerStateSnapshot | null }> {
  let names: string[];
  try {
    names = await readdir(consumersDir);
  } catch {
    return;
  }
  for (const dirName of names) {
    const files = await readConsumerFiles(join(consumersDir, dirName));
    if (files !== null) yield files;
  }
}

export async function readConsumerFiles(dir: string): Promise<{ meta: ConsumerMeta; state: ConsumerStateSnapshot | null } | null> {
  let meta: ConsumerMeta;
  try {
    meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as ConsumerMeta;
  } catch {
    return null;
  }
  let state: ConsumerStateSnapshot | null = null;
  try {
    state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as ConsumerStateSnapshot;
  } catch {
    state = null;
  }
  return { meta, state };
}
