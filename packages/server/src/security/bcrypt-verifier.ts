// bcrypt password checks off the event loop: bcryptjs is pure JavaScript (tens to hundreds of ms per check
// at cost 11) and would stall every client, so checks run in a small pool of worker threads. A flood of
// wrong passwords must not lock out the user who knows the right one, so the queue is scheduled, not FIFO:
// - one lane per client address, served round-robin, and one address never holds every worker (with 2+
//   workers one is kept for the other addresses): one source cannot starve the others;
// - newest first within a lane, and a check whose connection's auth deadline has passed is dropped
//   unworked: after a burst the latest attempt is served next and the burst ages out by itself;
// - bounded (256 checks): when full, the oldest check of the longest lane is refused at once;
// - identical (hash, password) checks share one run, and verified / refused pairs are remembered by
//   digest, so reconnects and repeated guesses cost nothing.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** nats-server's isBcrypt: `$2a$`, `$2b$`, `$2x$` or `$2y$` followed by a two-digit cost. */
export function isBcryptHash(text: string): boolean {
  return /^\$2[abxy]\$\d{2}\$/.test(text);
}

const MAX_QUEUED_CHECKS = 256;
const REMEMBERED_PAIRS_MAX = 1024;
/** nats-server checks on every core; one worker per core, at most 4 (a worker holds ~10 MB). */
export const DEFAULT_BCRYPT_WORKERS = Math.max(1, Math.min(availableParallelism(), 4));

// Eval workers are CommonJS: hand them bcryptjs's resolved path so this works from src and from dist.
const BCRYPT_PATH = createRequire(import.meta.url).resolve('bcryptjs');
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const bcrypt = require(${JSON.stringify(BCRYPT_PATH)});
parentPort.on('message', ({ password, hash }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  parentPort.postMessage(ok);
});
`;

export interface CheckContext {
  /** the client's address: checks are scheduled fairly across addresses */
  source?: string;
  /** epoch ms after which nobody waits for the answer (the connection's auth deadline) */
  deadlineMs?: number;
}

interface Check {
  key: string;
  password: string;
  hash: string;
  source: string;
  deadlineMs: number;
  waiters: Array<(ok: boolean) => void>;
}

interface PoolWorker {
  worker: Worker;
  running: Check | null;
}

/** A bounded set that forgets everything when full (an attacker cannot grow it). */
class RememberedPairs {
  private readonly keys = new Set<string>();
  has(key: string): boolean {
    return this.keys.has(key);
  }
  add(key: string): void {
    if (this.keys.size >= REMEMBERED_PAIRS_MAX) this.keys.clear();
    this.keys.add(key);
  }
}

export class BcryptVerifier {
  private readonly workers: PoolWorker[] = [];
  /** queued checks by source, in round-robin order (a served lane moves to the back) */
  private readonly lanes = new Map<string, Check[]>();
  /** queued or running checks by key, so identical checks share one run */
  private readonly byKey = new Map<string, Check>();
  private queuedCount = 0;
  private readonly verified = new RememberedPairs();
  private readonly refused = new RememberedPairs();
  private closed = false;

  /** workers one source may hold at once: all but one, so another address always finds one free */
  private readonly perSourceWorkers: number;

  constructor(private readonly poolSize = DEFAULT_BCRYPT_WORKERS) {
    this.perSourceWorkers = Math.max(1, poolSize - 1);
  }

  /** Checks queued or running, for tests and monitoring. */
  get queued(): number {
    return this.byKey.size;
  }

  /** The source of each running check, for tests and monitoring. */
  get runningSources(): string[] {
    return this.workers.flatMap((w) => (w.running === null ? [] : [w.running.source]));
  }

  /** Resolves true when `password` matches the bcrypt `hash`; false when wrong, refused early, or too late. */
  verify(password: string, hash: string, context: CheckContext = {}): Promise<boolean> | boolean {
    // bcryptjs knows $2a$/$2b$/$2y$; $2x$ hashes use the same rounds.
    const normalised = hash.startsWith('$2x$') ? `$2a$${hash.slice(4)}` : hash;
    const key = createHash('sha256').update(normalised).update('\0').update(password).digest('base64');
    if (this.verified.has(key)) return true;
    if (this.refused.has(key) || this.closed) return false;
    const deadlineMs = context.deadlineMs ?? Number.POSITIVE_INFINITY;
    const same = this.byKey.get(key);
    if (same !== undefined) {
      same.deadlineMs = Math.max(same.deadlineMs, deadlineMs);
      return new Promise((resolve) => same.waiters.push(resolve));
    }
    if (this.queuedCount >= MAX_QUEUED_CHECKS) this.refuseOldestOfLongestLane();
    const check: Check = { key, password, hash: normalised, source: context.source ?? '', deadlineMs, waiters: [] };
    const promise = new Promise<boolean>((resolve) => check.waiters.push(resolve));
    this.byKey.set(key, check);
    const lane = this.lanes.get(check.source);
    if (lane === undefined) this.lanes.set(check.source, [check]);
    else lane.push(check);
    this.queuedCount++;
    this.dispatch();
    return promise;
  }

  /**
   * Starts the pool ahead of the first check (loading bcryptjs takes a few hundred ms per worker), so the
   * worker kept for other addresses is ready when a flood has the rest.
   */
  warm(): void {
    while (this.workers.length < this.poolSize && !this.closed) this.startWorker();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const check of this.byKey.values()) this.settle(check, false);
    this.lanes.clear();
    this.queuedCount = 0;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }

  private refuseOldestOfLongestLane(): void {
    let longest: Check[] | undefined;
    for (const lane of this.lanes.values()) if (longest === undefined || lane.length > longest.length) longest = lane;
    const oldest = longest?.shift();
    if (oldest === undefined) return;
    this.queuedCount--;
    if (longest!.length === 0) this.lanes.delete(oldest.source);
    this.settle(oldest, false);
  }

  /** Hands queued checks to idle workers: next lane in turn, newest check first, expired ones dropped. */
  private dispatch(): void {
    while (this.queuedCount > 0) {
      const idle = this.workers.find((w) => w.running === null) ?? (this.workers.length < this.poolSize ? this.startWorker() : undefined);
      if (idle === undefined) return;
      const check = this.nextCheck();
      if (check === undefined) return;
      idle.running = check;
      idle.worker.ref(); // referenced only while a check runs
      idle.worker.postMessage({ password: check.password, hash: check.hash });
    }
  }

  private nextCheck(): Check | undefined {
    const now = Date.now();
    for (const [source, lane] of this.lanes) {
      if (this.runningFor(source) >= this.perSourceWorkers) continue;
      this.lanes.delete(source);
      let check: Check | undefined;
      while ((check = lane.pop()) !== undefined) {
        this.queuedCount--;
        if (check.deadlineMs > now) break;
        this.settle(check, false); // its connection has timed out already
      }
      if (lane.length > 0) this.lanes.set(source, lane); // to the back of the round
      if (check !== undefined) return check;
    }
    return undefined;
  }

  private runningFor(source: string): number {
    let n = 0;
    for (const w of this.workers) if (w.running?.source === source) n++;
    return n;
  }

  private settle(check: Check, ok: boolean): void {
    if (this.byKey.get(check.key) === check) this.byKey.delete(check.key);
    for (const done of check.waiters) done(ok);
  }

  private startWorker(): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    const entry: PoolWorker = { worker, running: null };
    worker.on('message', (ok: boolean) => {
      const check = entry.running;
      entry.running = null;
      worker.unref();
      if (check !== null) {
        if (ok) this.verified.add(check.key);
        else this.refused.add(check.key);
        this.settle(check, ok);
      }
      this.dispatch();
    });
    worker.on('error', () => {
      // A crashed worker fails its check; the pool starts a new one when needed.
      const i = this.workers.indexOf(entry);
      if (i >= 0) this.workers.splice(i, 1);
      if (entry.running !== null) this.settle(entry.running, false);
      entry.running = null;
      this.dispatch();
    });
    this.workers.push(entry);
    return entry;
  }
}
