// What each peer has told us about its subscriptions, in one Sublist so a published subject is matched once
// for all peers; and the forwarding decision built on it.
import { Sublist, type SublistEntry } from '@flotilla/protocol';
import { interestKey } from './local-interest.js';
import type { InterestEntry, InterestFrame } from './wire.js';

/** One peer's interest in (subject, queue): `count` subscriptions there, `clients` of them client connections'. */
export class RemoteInterest implements SublistEntry {
  constructor(
    readonly peerId: string,
    readonly subject: string,
    readonly queue: string | null,
    public count: number,
    public clients: number,
  ) {}
}

/** Where one published message must go: each peer once, with the queue groups it must serve (often none). */
export type ForwardPlan = ReadonlyArray<readonly [peerId: string, queues: readonly string[]]>;

const NO_QUEUES: readonly string[] = [];

export class RemoteInterestTable {
  readonly sublist = new Sublist<RemoteInterest>();
  private readonly byPeer = new Map<string, Map<string, RemoteInterest>>();
  /** Plans without queue groups depend only on the match result, which the Sublist caches: reuse them. */
  private plainPlans = new WeakMap<object, ForwardPlan>();

  /** Applies an InterestUpdate from `peerId`; a full update replaces what we knew. Invalid entries are skipped. */
  apply(peerId: string, update: InterestFrame): void {
    if (update.full) this.removePeer(peerId);
    for (const e of update.entries) this.applyEntry(peerId, e);
  }

  removePeer(peerId: string): void {
    const entries = this.byPeer.get(peerId);
    if (entries === undefined) return;
    for (const ri of entries.values()) this.sublist.remove(ri);
    this.byPeer.delete(peerId);
  }

  /** Number of (subject, queue) entries known for a peer; for tests and monitoring. */
  entriesOf(peerId: string): number {
    return this.byPeer.get(peerId)?.size ?? 0;
  }

  /** The (subject, queue) entries known for a peer, for monitoring (/routez subscription lists). */
  interestOf(peerId: string): ReadonlyArray<{ readonly subject: string; readonly queue: string | null }> {
    return [...(this.byPeer.get(peerId)?.values() ?? [])];
  }

  /**
   * Peers to forward `subject` to. `servedLocally(queue)` says whether a local member took the message for
   * that queue group (or drew a peer's: see queueWeight); otherwise one peer with members is picked at random,
   * weighted by its member count, and told to serve it.
   */
  plan(subject: string, servedLocally: (queue: string) => boolean): ForwardPlan | null {
    const result = this.sublist.match(subject);
    if (result.queues.length === 0) {
      if (result.plain.length === 0) return null;
      let plan = this.plainPlans.get(result);
      if (plan === undefined) {
        const peers = new Set<string>();
        for (const ri of result.plain) peers.add(ri.peerId);
        plan = [...peers].map((p) => [p, NO_QUEUES] as const);
        this.plainPlans.set(result, plan);
      }
      return plan;
    }
    const targets = new Map<string, string[]>();
    for (const ri of result.plain) if (!targets.has(ri.peerId)) targets.set(ri.peerId, []);
    for (const members of result.queues) {
      const queue = members[0]!.queue!;
      if (servedLocally(queue)) continue;
      const chosen = this.pickPeer(members);
      let queues = targets.get(chosen);
      if (queues === undefined) targets.set(chosen, (queues = []));
      queues.push(queue);
    }
    return targets.size === 0 ? null : [...targets];
  }

  /**
   * true when a peer has a client subscription matching `subject`. Its internal ones (a stream's capture)
   * still get messages forwarded (plan), but are no subscriber a JetStream push consumer may deliver to.
   */
  hasClientInterest(subject: string): boolean {
    const result = this.sublist.match(subject);
    const plain = result.plain;
    for (let i = 0; i < plain.length; i++) if (plain[i]!.clients > 0) return true;
    const groups = result.queues;
    for (let g = 0; g < groups.length; g++) {
      const members = groups[g]!;
      for (let i = 0; i < members.length; i++) if (members[i]!.clients > 0) return true;
    }
    return false;
  }

  /**
   * How many members queue group `queue` has on all peers for `subject`: their weight when the publishing
   * node draws one member among its own and these. A cached match and a short scan; nothing allocated.
   */
  queueWeight(subject: string, queue: string): number {
    const groups = this.sublist.match(subject).queues;
    for (let g = 0; g < groups.length; g++) {
      const members = groups[g]!;
      if (members[0]!.queue !== queue) continue;
      let total = 0;
      for (let i = 0; i < members.length; i++) total += members[i]!.count;
      return total;
    }
    return 0;
  }

  private applyEntry(peerId: string, e: InterestEntry): void {
    let entries = this.byPeer.get(peerId);
    const key = interestKey(e.subject, e.queue);
    const existing = entries?.get(key);
    if (e.count <= 0) {
      if (existing !== undefined) {
        this.sublist.remove(existing);
        entries!.delete(key);
        if (entries!.size === 0) this.byPeer.delete(peerId);
      }
      return;
    }
    const clients = Math.min(Math.max(0, e.clients), e.count);
    if (existing !== undefined) {
      existing.count = e.count;
      existing.clients = clients;
      return;
    }
    const ri = new RemoteInterest(peerId, e.subject, e.queue === '' ? null : e.queue, e.count, clients);
    try {
      this.sublist.insert(ri);
    } catch {
      return; // a peer's invalid subject must not break routing for the rest
    }
    if (entries === undefined) this.byPeer.set(peerId, (entries = new Map()));
    entries.set(key, ri);
  }

  /**
   * One peer per message, at random weighted by how many members each has, so members share the load evenly;
   * each group draws on its own (one shared cursor would lock a group to one peer when groups share a subject).
   */
  private pickPeer(members: readonly RemoteInterest[]): string {
    if (members.length === 1) return members[0]!.peerId;
    let total = 0;
    for (const m of members) total += m.count;
    let slot = Math.floor(Math.random() * total);
    for (const m of members) {
      if (slot < m.count) return m.peerId;
      slot -= m.count;
    }
    return members[0]!.peerId;
  }
}
