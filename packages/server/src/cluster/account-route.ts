// One account's core NATS across the cluster, as nats-server's routes carry the account in RS+/RMSG: the
// account's local interest goes to every peer under its name, peers' interest in it is kept apart from every
// other account's (its own RemoteInterestTable), and a message published in it goes to the peers with
// matching interest carrying the name, so each node delivers it in that account only. The global account
// ($G) names none: its frames are byte for byte what they were before accounts existed.
import { LocalInterest, RemoteInterestTable, type ClusterNode, type InterestEntry, type InterestFrame, type PeerView, type RoutedMessageFrame } from '@flotilla/cluster';
import type { ClusterRoute, MessageRouter, RoutedTrace } from '../message-router.js';
import type { Subscription } from '../subscription.js';
import { countsAsClient, isClusterVisible } from './cluster-visible.js';

/** Where the messages routed out are counted (ClusterRouting's routed_msgs_out, over every account). */
export interface RoutedCounter {
  routedOut: number;
}

export class AccountRoute implements ClusterRoute {
  readonly localInterest = new LocalInterest();
  readonly remoteInterest = new RemoteInterestTable();

  /** `wireName` is the account's name on the links; undefined for the global account. */
  constructor(
    readonly router: MessageRouter,
    private readonly node: ClusterNode,
    private readonly wireName: string | undefined,
    private readonly counter: RoutedCounter,
  ) {}

  /** Routes the account's subscriptions from now on, those made before (JetStream's, say) included. */
  attach(): void {
    for (const sub of this.router.sublist.all()) this.subscribed(sub);
    this.router.cluster = this;
  }

  detach(): void {
    if (this.router.cluster === this) this.router.cluster = null;
  }

  /** The full sync a peer gets when its link comes up (for a named account, only a peer that reads names). */
  syncTo(peer: PeerView): void {
    if (this.reaches(peer)) this.node.send(peer.serverId, { interest: this.interestFrame(true, this.localInterest.snapshot()) });
  }

  // ---- ClusterRoute (called by the account's router) ------------------------------------------

  subscribed(sub: Subscription): void {
    if (!isClusterVisible(sub)) return;
    this.announce(this.localInterest.add(sub.subject, sub.queue, countsAsClient(sub)));
  }

  unsubscribed(sub: Subscription): void {
    if (!isClusterVisible(sub)) return;
    const entry = this.localInterest.remove(sub.subject, sub.queue, countsAsClient(sub));
    if (entry !== null) this.announce(entry);
  }

  hasRemoteInterest(subject: string): boolean {
    return this.remoteInterest.sublist.hasInterest(subject);
  }

  hasRemoteClientInterest(subject: string): boolean {
    return this.remoteInterest.sublist.hasInterest(subject) && this.remoteInterest.hasClientInterest(subject);
  }

  remoteQueueWeight(subject: string, queue: string): number {
    return this.remoteInterest.queueWeight(subject, queue);
  }

  forward(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    servedQueues: readonly string[],
    route: string | null,
    trace?: RoutedTrace,
  ): number {
    const plan = this.remoteInterest.plan(route ?? subject, (q) => servedQueues.includes(q));
    if (plan === null) return 0;
    const account = this.wireName;
    let sent = 0;
    for (let i = 0; i < plan.length; i++) {
      const [peerId, queues] = plan[i]!;
      const out = trace === undefined ? null : trace.toPeer(this.node.peer(peerId)?.serverName ?? peerId, headerBytes, message);
      const msg: RoutedMessageFrame = {
        subject,
        reply: reply ?? '',
        message: out === null ? message : out.message,
        headerBytes: out === null ? headerBytes : out.headerBytes,
        queues: queues as string[],
        route: route ?? '',
      };
      if (account !== undefined) msg.account = account;
      if (this.node.send(peerId, { msg }, true)) sent++;
    }
    this.counter.routedOut += sent;
    return sent;
  }

  private announce(entry: InterestEntry): void {
    const frame = { interest: this.interestFrame(false, [entry]) };
    for (const p of this.node.peers()) if (this.reaches(p)) this.node.send(p.serverId, frame);
  }

  private interestFrame(full: boolean, entries: InterestEntry[]): InterestFrame {
    return this.wireName === undefined ? { full, entries } : { full, entries, account: this.wireName };
  }

  /**
   * A peer that does not read account names would take this account's interest for the global account's
   * (and a full sync would wipe what it knows of that): named accounts stay off such links.
   */
  private reaches(peer: PeerView): boolean {
    return this.wireName === undefined || peer.accounts;
  }
}
