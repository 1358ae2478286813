// allow_responses: the reply subjects a connection received messages with, each of which it may then
// publish to `maxMsgs` times within `expiresMs` (nats-server's c.replies). Bounded like nats-server's
// replyPermLimit: expired permits are pruned, then the oldest go.
import type { ResponsePermission } from '../config/options.js';

const MAX_PERMITS = 4096;

interface Permit {
  atMs: number;
  used: number;
}

export class ResponsePermits {
  private readonly permits = new Map<string, Permit>();

  constructor(private readonly rule: ResponsePermission) {}

  get size(): number {
    return this.permits.size;
  }

  /** A message with this reply subject was delivered to the connection. */
  grant(reply: string, nowMs: number): void {
    const permits = this.permits;
    if (!permits.has(reply) && permits.size >= MAX_PERMITS) this.prune(nowMs);
    permits.set(reply, { atMs: nowMs, used: 0 });
  }

  /** Uses one response to `subject`; false when there is no live permit for it. */
  use(subject: string, nowMs: number): boolean {
    const p = this.permits.get(subject);
    if (p === undefined) return false;
    p.used++;
    const { maxMsgs, expiresMs } = this.rule;
    if ((maxMsgs > 0 && p.used > maxMsgs) || (expiresMs > 0 && nowMs - p.atMs > expiresMs)) {
      this.permits.delete(subject);
      return false;
    }
    if (maxMsgs > 0 && p.used === maxMsgs) this.permits.delete(subject);
    return true;
  }

  private prune(nowMs: number): void {
    const expiresMs = this.rule.expiresMs;
    if (expiresMs > 0) {
      for (const [reply, p] of this.permits) if (nowMs - p.atMs > expiresMs) this.permits.delete(reply);
    }
    // Still full: drop the oldest quarter (Map keeps insertion order).
    if (this.permits.size >= MAX_PERMITS) {
      let drop = MAX_PERMITS / 4;
      for (const reply of this.permits.keys()) {
        if (drop-- <= 0) break;
        this.permits.delete(reply);
      }
    }
  }
}
