// Replies across an account boundary: a request that comes in through a service import carries a reply
// subject of the exporting account (`_R_.<account tag>.<id>`, as nats-server makes them) instead of the
// requester's inbox. Its responder answers on that subject here; the answer is delivered to the requester's
// own reply subject in the importing account, once for a singleton service, as often as it comes for a
// stream or chunked one, and only until the export's response threshold passes.
import { randomBytes } from 'node:crypto';
import type { MessageRouter } from '../message-router.js';
import type { ServiceResponseType } from '../config/options.js';
import { Subscription, type SubscriptionOwner } from '../subscription.js';

/** nats-server's default response_threshold. */
export const DEFAULT_RESPONSE_THRESHOLD_MS = 2 * 60_000;
/** How often, at most, expired entries are swept (on the way in of a new one). */
const SWEEP_INTERVAL_MS = 1000;
const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

interface OwedResponse {
  requester: MessageRouter;
  reply: string;
  once: boolean;
  expiresAtMs: number;
}

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let s = '';
  for (let i = 0; i < length; i++) s += ID_ALPHABET[bytes[i]! % ID_ALPHABET.length];
  return s;
}

export class ServiceResponses implements SubscriptionOwner {
  readonly cid = 0;
  /** In a cluster the responder may sit on another node: its answer must be routed back to this one. */
  readonly clusterVisible = true;
  private readonly prefix = `_R_.${randomToken(5)}.`;
  private readonly owed = new Map<string, OwedResponse>();
  private readonly sub: Subscription;
  private lastSweepMs = 0;

  constructor(private readonly exporter: MessageRouter) {
    this.sub = new Subscription(this, `${this.prefix}>`, null, '$sys.responses');
    exporter.subscribe(this.sub);
  }

  /** The reply subject, in the exporting account, standing for `reply` in `requester`'s account. */
  track(requester: MessageRouter, reply: string, type: ServiceResponseType, thresholdMs: number): string {
    const nowMs = Date.now();
    if (nowMs - this.lastSweepMs >= SWEEP_INTERVAL_MS) this.sweep(nowMs);
    let mapped = this.prefix + randomToken(8);
    while (this.owed.has(mapped)) mapped = this.prefix + randomToken(8);
    this.owed.set(mapped, { requester, reply, once: type === 'singleton', expiresAtMs: nowMs + thresholdMs });
    return mapped;
  }

  /** How many replies are still owed (tests, monitoring). */
  get pending(): number {
    return this.owed.size;
  }

  deliverMessage(_sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    const entry = this.take(subject);
    if (entry !== undefined) entry.requester.publish(entry.reply, reply, headerBytes, message, 0, true);
  }

  /** A JetStream delivery to the mapped reply (a pull's batch): it keeps its stored subject on the requester's inbox. */
  deliverRouted(_sub: Subscription, route: string, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    const entry = this.take(route);
    if (entry !== undefined) entry.requester.publishTo(entry.reply, subject, reply, headerBytes, message);
  }

  /** The entry a response on `mapped` goes to, if it is still owed (a singleton's is used up). */
  private take(mapped: string): OwedResponse | undefined {
    const entry = this.owed.get(mapped);
    if (entry === undefined) return undefined;
    if (Date.now() > entry.expiresAtMs) {
      this.owed.delete(mapped);
      return undefined;
    }
    if (entry.once) this.owed.delete(mapped);
    return entry;
  }

  close(): void {
    this.exporter.unsubscribe(this.sub);
    this.owed.clear();
  }

  private sweep(nowMs: number): void {
    this.lastSweepMs = nowMs;
    for (const [subject, entry] of this.owed) if (nowMs > entry.expiresAtMs) this.owed.delete(subject);
  }
}
