// Cluster: pull requests a follower saw go to the stream (= consumer) leader. Every node receives
// `CONSUMER.MSG.NEXT`; when this node becomes leader (the old one crashed or stepped down), it tells the
// clients still waiting on those requests `409 Leadership Change`, as nats-server's new consumer leader does,
// instead of leaving them to wait out `expires`.
import { nsToMs } from '@flotilla/store';
import { parsePullRequest } from './pull-request.js';

/** Requests remembered per consumer; the oldest are forgotten beyond this. */
const MAX_PER_CONSUMER = 512;
/** Consumers tracked per stream; requests for more are not remembered. */
const MAX_CONSUMERS = 1024;

interface Observed {
  reply: string;
  /** 0: no expiry */
  expiresAtMs: number;
}

export class ObservedPulls {
  private readonly byConsumer = new Map<string, Observed[]>();

  /** A MSG.NEXT seen while not serving; malformed and no_wait requests without expires end at once: skipped. */
  observe(consumer: string, reply: string | null, body: Uint8Array, nowMs: number): void {
    if (reply === null) return;
    const parsed = parsePullRequest(body);
    if ('error' in parsed || (parsed.noWait && parsed.expiresNs === 0)) return;
    let list = this.byConsumer.get(consumer);
    if (!list) {
      if (this.byConsumer.size >= MAX_CONSUMERS) return;
      list = [];
      this.byConsumer.set(consumer, list);
    }
    list.push({ reply, expiresAtMs: parsed.expiresNs > 0 ? nowMs + nsToMs(parsed.expiresNs) : 0 });
    if (list.length > MAX_PER_CONSUMER) list.splice(0, list.length - MAX_PER_CONSUMER);
  }

  /** The unexpired requests' reply subjects for `consumer`, forgetting all of them. */
  take(consumer: string, nowMs: number): string[] {
    const list = this.byConsumer.get(consumer) ?? [];
    this.byConsumer.delete(consumer);
    const replies = new Set<string>();
    for (const o of list) if (o.expiresAtMs === 0 || o.expiresAtMs > nowMs) replies.add(o.reply);
    return [...replies];
  }

  clear(): void {
    this.byConsumer.clear();
  }
}
