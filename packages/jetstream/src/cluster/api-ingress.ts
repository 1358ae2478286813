// One reply per `$JS.API` request in a cluster, by construction (issue 24): every answer goes through the node
// the client's request entered the cluster by (its ingress), which relays the first to the client and drops any
// later one. Each node still decides by the routing rule whether it answers the copy it got
// (clustered-jetstream.ts), but it answers to `$JSC.RLY.<ingress server id>.<client's reply subject>` instead of
// the client's reply subject; so two nodes that both believe they answer (a leader change seen at different
// moments, a re-ask or deferred copy answered by a new leader after the old one answered) cannot give a client
// two replies. No extra message crosses the routes: the copies are the ones core routing delivers anyway
// (`BusMessage.fromPeer` names the ingress), and an answer from another node took the ingress hop before too.
//
// A node relays only while its relay inbox is announced; a request from a node that does not relay (no JetStream,
// or JetStream not started yet) is answered straight to the client, as before.
import type { BusMessage, MessageBus } from '../message-bus.js';

/** Relay inboxes: `$JSC.RLY.<server id>.<client's reply subject>`. */
const RELAY_PREFIX = '$JSC.RLY.';

/** An answer later than this is dropped (the longest a node holds a request: settling, deferrals, leaderless). */
const RELAY_KEEP_MS = 15_000;
/** At most this many requests awaiting their first answer; beyond it the oldest is forgotten (its answer dropped). */
const MAX_RELAYED = 16_384;

export interface IngressStats {
  /** Requests that entered the cluster here. */
  entered: number;
  /** First answers relayed to a client. */
  relayed: number;
  /** Later answers (or answers past RELAY_KEEP_MS) dropped. */
  dropped: number;
}

/** The relay inbox on node `serverId` for a request with reply subject `reply`. */
export function relayInboxOf(serverId: string, reply: string): string {
  return `${RELAY_PREFIX}${serverId}.${reply}`;
}

export class ApiIngress {
  private readonly inbox: string;
  /** Client reply subject → when its request entered (insertion order = age). */
  private readonly pending = new Map<string, number>();
  private unsubscribe: (() => void) | null = null;
  readonly stats: IngressStats = { entered: 0, relayed: 0, dropped: 0 };
  /** Sees each answer relayed to a client (the `$JS.EVENT.ADVISORY.API` audit is raised here, at the ingress). */
  relayObserver: ((reply: string, data: Buffer) => void) | undefined;

  constructor(
    private readonly bus: MessageBus,
    private readonly selfServerId: string,
    private readonly keepMs = RELAY_KEEP_MS,
    private readonly maxPending = MAX_RELAYED,
  ) {
    this.inbox = relayInboxOf(selfServerId, '');
  }

  /** Subscribes the relay inbox (announced to the cluster: the other nodes answer this node's requests through it). */
  start(): void {
    if (this.unsubscribe !== null) return;
    this.unsubscribe = this.bus.subscribe(`${this.inbox}>`, (m) => this.answered(m));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.pending.clear();
  }

  /** The node `serverId` relays its clients' answers (its relay inbox is announced). */
  relaysFor(serverId: string): boolean {
    return this.bus.hasInterest(relayInboxOf(serverId, '_'));
  }

  /**
   * A client's request entered here: the copy this node decides, answered through the relay. Two requests
   * with one reply subject at once (a reused inbox) share one entry: the first answer is relayed.
   */
  entered(msg: BusMessage & { reply: string }): BusMessage {
    const now = performance.now();
    this.expire(now);
    this.pending.delete(msg.reply);
    this.pending.set(msg.reply, now);
    this.stats.entered++;
    return { ...msg, reply: relayInboxOf(this.selfServerId, msg.reply) };
  }

  private answered(m: BusMessage): void {
    const reply = m.subject.slice(this.inbox.length);
    if (!this.pending.delete(reply)) {
      this.stats.dropped++;
      return;
    }
    this.stats.relayed++;
    this.bus.publish(reply, null, m.header, m.data);
    this.relayObserver?.(reply, m.data);
  }

  /** Forgets requests unanswered past keepMs, and the oldest beyond maxPending (bounded). */
  private expire(now: number): void {
    for (const [reply, atMs] of this.pending) {
      if (now - atMs < this.keepMs && this.pending.size < this.maxPending) break;
      this.pending.delete(reply);
    }
  }
}
