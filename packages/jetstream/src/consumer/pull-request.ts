// Pull requests (`CONSUMER.MSG.NEXT`, §12): parsing the body and the bounded waiting queue.
import type { PullPriority } from './priority-groups.js';

export interface PullRequest {
  reply: string;
  /** Messages still to deliver. */
  batch: number;
  /** Bytes still allowed; 0 = no byte limit. */
  maxBytes: number;
  noWait: boolean;
  /** Absolute deadline (ms on the consumer's clock); 0 = none. */
  expiresAtMs: number;
  heartbeatMs: number;
  nextHeartbeatAtMs: number;
  /** Messages delivered to this request so far. */
  delivered: number;
  receivedAtMs: number;
  /** A JSON request's priority-group fields (priority-groups.ts). */
  priority?: PullPriority;
}

export interface ParsedPullRequest {
  batch: number;
  maxBytes: number;
  noWait: boolean;
  expiresNs: number;
  heartbeatNs: number;
  /** Present for every JSON request, as nats-server decodes its PriorityGroup (checked against the consumer). */
  priority?: PullPriority;
}

function strOf(raw: Record<string, unknown>, k: string): string {
  const v = raw[k];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new TypeError(`json: cannot unmarshal ${typeof v} into Go struct field .${k}`);
  return v;
}

/** nats-server's nextReqFromMsg; an error string becomes `400 Bad Request - <text>`. */
export function parsePullRequest(body: Uint8Array): ParsedPullRequest | { error: string } {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').trim();
  const dflt: ParsedPullRequest = { batch: 1, maxBytes: 0, noWait: false, expiresNs: 0, heartbeatNs: 0 };
  if (text.length === 0) return dflt;
  if (text[0] === '{') {
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      return { error: (err as Error).message };
    }
    const num = (k: string): number => {
      const v = raw[k];
      if (v === undefined || v === null) return 0;
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`json: cannot unmarshal ${typeof v} into Go struct field .${k}`);
      return v;
    };
    try {
      const req: ParsedPullRequest = {
        batch: num('batch'),
        maxBytes: num('max_bytes'),
        noWait: raw['no_wait'] === true,
        expiresNs: num('expires'),
        heartbeatNs: num('idle_heartbeat'),
      };
      if (req.heartbeatNs > 0 && req.heartbeatNs * 2 > req.expiresNs) return { error: 'heartbeat value too large' };
      req.priority = {
        group: strOf(raw, 'group'),
        minPending: num('min_pending'),
        minAckPending: num('min_ack_pending'),
        id: strOf(raw, 'id'),
        priority: num('priority'),
      };
      return req;
    } catch (err) {
      return { error: (err as Error).message };
    }
  }
  const n = Number(text);
  if (Number.isInteger(n)) return { ...dflt, batch: n };
  return dflt;
}

/**
 * FIFO of waiting requests, bounded by max_waiting. Like nats-server's waitQueue, a request that still
 * wants more after a delivery goes to the back, so concurrent requests are served round-robin.
 */
export class PullRequestQueue {
  private items: PullRequest[] = [];

  constructor(private readonly maxWaiting: number) {}

  get length(): number {
    return this.items.length;
  }
  isFull(): boolean {
    return this.items.length >= this.maxWaiting;
  }
  /** False when the queue is full. */
  add(req: PullRequest): boolean {
    if (this.isFull()) return false;
    this.items.push(req);
    return true;
  }
  /**
   * Prioritized policy: queued after every request of the same or a lower `priority` number (nats-server's
   * insertSorted), so lower numbers are served first and equal ones in arrival order. False when full.
   */
  addSorted(req: PullRequest): boolean {
    if (this.isFull()) return false;
    this.insertByPriority(req);
    return true;
  }
  private insertByPriority(req: PullRequest): void {
    const p = req.priority?.priority ?? Number.MAX_SAFE_INTEGER;
    let i = this.items.length;
    while (i > 0 && (this.items[i - 1]!.priority?.priority ?? Number.MAX_SAFE_INTEGER) > p) i--;
    this.items.splice(i, 0, req);
  }
  /** The head request is passed over for now (overflow / pin rules): it goes to the back. */
  cycle(): void {
    const req = this.items.shift();
    if (req !== undefined) this.items.push(req);
  }
  peek(): PullRequest | undefined {
    return this.items[0];
  }
  /** Takes one delivery from the head request: counts it and rotates or removes it. */
  popOne(prioritized = false): PullRequest | undefined {
    const req = this.items.shift();
    if (req === undefined) return undefined;
    req.batch--;
    req.delivered++;
    if (req.batch > 0) {
      if (prioritized) this.insertByPriority(req);
      else this.items.push(req);
    }
    return req;
  }
  removeHead(): void {
    this.items.shift();
  }
  remove(req: PullRequest): void {
    const i = this.items.indexOf(req);
    if (i >= 0) this.items.splice(i, 1);
  }
  /** Requests still waiting, oldest first. */
  all(): readonly PullRequest[] {
    return this.items;
  }
  /** Sum of unfilled batches (for no_wait "Requests Pending"). */
  pendingBatch(): number {
    let n = 0;
    for (const r of this.items) n += r.batch;
    return n;
  }
  clear(): PullRequest[] {
    const out = this.items;
    this.items = [];
    return out;
  }
}
