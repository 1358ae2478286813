// Pull requests (`CONSUMER.MSG.NEXT`, §12): parsing the body and the bounded waiting queue.

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
}

export interface ParsedPullRequest {
  batch: number;
  maxBytes: number;
  noWait: boolean;
  expiresNs: number;
  heartbeatNs: number;
}

/**
 * 2.11+ priority-group fields of a pull request. Every Flotilla consumer has priority policy none (the policy
 * is refused at creation, stream/unsupported-config-fields.ts), and 2.14 answers these fields on such a
 * consumer as below (processNextMsgRequest); `group` alone it ignores.
 */
function priorityFieldsRefusal(raw: Record<string, unknown>, num: (k: string) => number): string | null {
  if (num('min_pending') !== 0 || num('min_ack_pending') !== 0) return 'Not a Overflow Priority consumer';
  const id = raw['id'];
  if (id !== undefined && id !== null && typeof id !== 'string') {
    throw new TypeError(`json: cannot unmarshal ${typeof id} into Go struct field .id`);
  }
  if (id) return 'Not a Pinned Client Priority consumer';
  const priority = num('priority');
  if (priority < 0 || priority > 9) return 'Priority must be between 0 and 9';
  return null;
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
      const priorityRefusal = priorityFieldsRefusal(raw, num);
      if (priorityRefusal !== null) return { error: priorityRefusal };
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
  peek(): PullRequest | undefined {
    return this.items[0];
  }
  /** Takes one delivery from the head request: counts it and rotates or removes it. */
  popOne(): PullRequest | undefined {
    const req = this.items.shift();
    if (req === undefined) return undefined;
    req.batch--;
    req.delivered++;
    if (req.batch > 0) this.items.push(req);
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
