// One decision point per `$JS.API` request in a cluster (issue 24): the node where a client's request enters
// the cluster (its ingress) forwards it to every JetStream node under FORWARDED_PREFIX, with a reply subject
// of its own, and relays to the client only the first answer that comes back; any later one is dropped here.
// Each node still applies the routing rule to the forwarded copy (clustered-jetstream.ts), so the answerer is
// the same node as before — but two nodes that both believe they answer (a leader change seen at different
// moments) can no longer give a client two replies. The reply path is the one it always was: an answer from
// another node reaches the client through its ingress node anyway.
//
// The original request reaches the other nodes over routes too (their `$JS.API.>` interest): they leave it to
// the ingress node when that node relays (it announces its relay subject), and decide it as it comes from a
// node that does not (no JetStream, or JetStream not started yet).
import type { BusMessage, MessageBus } from '../message-bus.js';

/** Forwarded copies: the original subject after this prefix. */
export const FORWARDED_PREFIX = '$JSC.FWD.';
/** Relay inboxes: `$JSC.RLY.<server id>.<request number>`. */
const RELAY_PREFIX = '$JSC.RLY.';

/** An answer later than this is dropped (the longest a node holds a request: settling, deferrals, leaderless). */
const RELAY_KEEP_MS = 15_000;
/** At most this many requests awaiting their first answer; beyond it the oldest is forgotten (its answer dropped). */
const MAX_RELAYED = 16_384;

/** A forwarded copy, seen with the client's subject (its reply subject is the ingress node's relay inbox). */
export interface ForwardedMessage extends BusMessage {
  readonly forwarded: true;
}

export function isForwarded(msg: BusMessage): msg is ForwardedMessage {
  return (msg as Partial<ForwardedMessage>).forwarded === true;
}

/** The forwarded subjects a node serves, for the API subjects it serves. */
export function forwardedSubjectOf(apiSubject: string): string {
  return FORWARDED_PREFIX + apiSubject;
}

/** A message on a forwarded subject as the request it carries; null for any other message. */
export function forwardedOriginal(msg: BusMessage): ForwardedMessage | null {
  if (!msg.subject.startsWith(FORWARDED_PREFIX)) return null;
  return { subject: msg.subject.slice(FORWARDED_PREFIX.length), reply: msg.reply, header: msg.header, data: msg.data, forwarded: true };
}

/** The subject a (re-)published copy of `msg` goes out on: forwarded stays forwarded. */
export function publishSubjectOf(msg: BusMessage): string {
  return isForwarded(msg) ? forwardedSubjectOf(msg.subject) : msg.subject;
}

export interface IngressStats {
  /** Requests forwarded from this node. */
  forwarded: number;
  /** First answers relayed to a client. */
  relayed: number;
  /** Later answers (or answers past RELAY_KEEP_MS) dropped. */
  dropped: number;
}

export class ApiIngress {
  private readonly inbox: string;
  private nextId = 1;
  /** Request number → the client's reply subject and when it was forwarded (insertion order = age). */
  private readonly pending = new Map<number, { reply: string; atMs: number }>();
  private unsubscribe: (() => void) | null = null;
  readonly stats: IngressStats = { forwarded: 0, relayed: 0, dropped: 0 };

  constructor(
    private readonly bus: MessageBus,
    selfServerId: string,
    private readonly keepMs = RELAY_KEEP_MS,
    private readonly maxPending = MAX_RELAYED,
  ) {
    this.inbox = `${RELAY_PREFIX}${selfServerId}.`;
  }

  /** Subscribes the relay inbox (announced to the cluster: other nodes leave this node's originals to it). */
  start(): void {
    if (this.unsubscribe !== null) return;
    this.unsubscribe = this.bus.subscribe(`${this.inbox}*`, (m) => this.answered(m));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.pending.clear();
  }

  /** The node `serverId` forwards its clients' requests itself (its relay inbox is announced). */
  relaysFor(serverId: string): boolean {
    return this.bus.hasInterest(`${RELAY_PREFIX}${serverId}.0`);
  }

  /** Forwards a client's request (with a reply subject) to every node, this one included. */
  forward(msg: BusMessage & { reply: string }): void {
    const now = performance.now();
    this.expire(now);
    const id = this.nextId++;
    this.pending.set(id, { reply: msg.reply, atMs: now });
    this.stats.forwarded++;
    this.bus.publish(forwardedSubjectOf(msg.subject), `${this.inbox}${id}`, msg.header, msg.data);
  }

  private answered(m: BusMessage): void {
    const id = Number(m.subject.slice(this.inbox.length));
    const entry = this.pending.get(id);
    if (entry === undefined) {
      this.stats.dropped++;
      return;
    }
    this.pending.delete(id);
    this.stats.relayed++;
    this.bus.publish(entry.reply, null, m.header, m.data);
  }

  /** Forgets requests unanswered past keepMs, and the oldest beyond maxPending (bounded). */
  private expire(now: number): void {
    for (const [id, e] of this.pending) {
      if (now - e.atMs < this.keepMs && this.pending.size < this.maxPending) break;
      this.pending.delete(id);
    }
  }
}
