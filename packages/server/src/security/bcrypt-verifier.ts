// bcrypt password checks off the event loop: bcryptjs is pure JavaScript (~100 ms per check at cost 11)
// and would stall every client, so checks run in one worker thread with a bounded queue. Verified
// (hash, password) pairs are remembered by digest so a user's reconnects cost nothing.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** nats-server's isBcrypt: `$2a$`, `$2b$`, `$2x$` or `$2y$` followed by a two-digit cost. */
export function isBcryptHash(text: string): boolean {
  return /^\$2[abxy]\$\d{2}\$/.test(text);
}

const MAX_QUEUED_CHECKS = 256;
const VERIFIED_CACHE_MAX_ENTRIES = 1024;

// Eval workers are CommonJS: hand them bcryptjs's resolved path so this works from src and from dist.
const BCRYPT_PATH = createRequire(import.meta.url).resolve('bcryptjs');
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const bcrypt = require(${JSON.stringify(BCRYPT_PATH)});
parentPort.on('message', ({ id, password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage({ id, ok });
});
`;

export class BcryptVerifier {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, (ok: boolean) => void>();
  private readonly verified = new Set<string>();

  /** Pending checks, for tests and monitoring. */
  get queued(): number {
    return this.waiting.size;
  }

  /** Resolves true when `password` matches the bcrypt `hash`; false when wrong or the queue is full. */
  verify(password: string, hash: string): Promise<boolean> | boolean {
    // bcryptjs knows $2a$/$2b$/$2y$; $2x$ hashes use the same rounds.
    const normalised = hash.startsWith('$2x$') ? `$2a$${hash.slice(4)}` : hash;
    const key = createHash('sha256').update(normalised).update('\0').update(password).digest('base64');
    if (this.verified.has(key)) return true;
    if (this.waiting.size >= MAX_QUEUED_CHECKS) return false;
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<boolean>((resolve) => {
      this.waiting.set(id, (ok) => {
        if (ok) {
          if (this.verified.size >= VERIFIED_CACHE_MAX_ENTRIES) this.verified.clear();
          this.verified.add(key);
        }
        resolve(ok);
      });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ id, password, hash: normalised });
    });
  }

  /** Starts the worker ahead of the first check (loading bcryptjs there takes a few hundred ms). */
  warm(): void {
    this.ensureWorker();
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    for (const done of this.waiting.values()) done(false);
    this.waiting.clear();
    if (w !== null) await w.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref(); // referenced only while checks are pending
    worker.on('message', ({ id, ok }: { id: number; ok: boolean }) => {
      const done = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
      done?.(ok);
    });
    worker.on('error', () => {
      // A crashed worker fails its pending checks; the next check starts a new one.
      for (const done of this.waiting.values()) done(false);
      this.waiting.clear();
      if (this.worker === worker) this.worker = null;
    });
    this.worker = worker;
    return worker;
  }
}
