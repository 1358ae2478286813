// Core NATS routing: the one Sublist of this server, and delivery of a published message to each matching
// subscription (every plain one, one member per queue group, picked at random). Clustering and JetStream plug
// in here as further subscription owners.
import { EMPTY_RESULT, Sublist, encodeStatusHeaders, type SublistResult } from '@flotilla/protocol';
import type { Subscription, SubscriptionOwner } from './subscription.js';
import { isClusterVisible } from './cluster/cluster-visible.js';
import { randomBelow } from './random-below.js';
import type { SubjectMappings } from './accounts/subject-mappings.js';

const NO_RESPONDERS_HEADERS = encodeStatusHeaders(503);
const NO_QUEUES: readonly string[] = [];
const UNCACHED_PREFIXES: readonly string[] = ['$JS.ACK.'];
/**
 * Published straight to (not routed to, as JetStream deliveries to a pull inbox are), an inbox subject is a
 * reply to one request: caching its match would only evict subjects that repeat.
 */
const REPLY_PREFIX = '_INBOX.';

/** The cluster's side of routing (packages/server/src/cluster): interest propagation and forwarding. */
export interface ClusterRoute {
  subscribed(sub: Subscription): void;
  unsubscribed(sub: Subscription): void;
  /** true when some peer has a subscription matching `subject`. */
  hasRemoteInterest(subject: string): boolean;
  /** true when some peer has a client subscription matching `subject` (its internal ones do not count). */
  hasRemoteClientInterest(subject: string): boolean;
  /** How many members queue group `queue` has on peers for `subject` (0: none); allocation-free. */
  remoteQueueWeight(subject: string, queue: string): number;
  /** Sends a locally published message to peers with interest; returns how many peers it went to. */
  forward(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    servedQueues: readonly string[],
    route: string | null,
    /** A traced message (message-trace/): each peer's copy carries its own trace hop. */
    trace?: RoutedTrace,
  ): number;
}

/** What forward asks of a traced message for each peer it goes to (MessageTrace.toPeer). */
export interface RoutedTrace {
  toPeer(peerName: string, headerBytes: number, message: Buffer): { headerBytes: number; message: Buffer };
}

/** An owner that writes a header block and body held apart (client connections): nothing is joined for it. */
interface PartsOwner extends SubscriptionOwner {
  deliverParts(sub: Subscription, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void;
}

function writesParts(owner: SubscriptionOwner): owner is PartsOwner {
  return (owner as Partial<PartsOwner>).deliverParts !== undefined;
}

/** Header block and body as one Buffer with the header length (-1 for none), for owners that take that form. */
export interface JoinedMessage {
  headerBytes: number;
  message: Buffer;
}

export function joinParts(header: Uint8Array | null, data: Uint8Array): JoinedMessage {
  if (header === null || header.length === 0) return { headerBytes: -1, message: asBuffer(data) };
  const message = Buffer.allocUnsafe(header.length + data.length);
  message.set(header, 0);
  message.set(data, header.length);
  return { headerBytes: header.length, message };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function hasClientSubscriber(result: SublistResult<Subscription>, subject: string): boolean {
  const plain = result.plain;
  for (let i = 0; i < plain.length; i++) if (isClientFor(plain[i]!, subject)) return true;
  const queues = result.queues;
  for (let q = 0; q < queues.length; q++) {
    const members = queues[q]!;
    for (let i = 0; i < members.length; i++) if (isClientFor(members[i]!, subject)) return true;
  }
  return false;
}

/** A client's subscription, or an import's that leads to one in the importing account. */
function isClientFor(sub: Subscription, subject: string): boolean {
  const owner = sub.owner;
  return owner.cid !== 0 || (owner.clientInterest !== undefined && owner.clientInterest(subject));
}

export interface RouterStats {
  inMsgs: number;
  inBytes: number;
  outMsgs: number;
  outBytes: number;
}

/** Told of every subscription added or removed (leafnode interest propagation, packages/server/src/leafnode). */
export interface InterestObserver {
  subscribed(sub: Subscription): void;
  unsubscribed(sub: Subscription): void;
}

export class MessageRouter {
  // Every JetStream ack has its own subject: caching those would only evict the subjects that repeat.
  readonly sublist = new Sublist<Subscription>({ uncachedPrefixes: UNCACHED_PREFIXES });
  readonly stats: RouterStats = { inMsgs: 0, inBytes: 0, outMsgs: 0, outBytes: 0 };
  /** Set while this node is part of a cluster. */
  cluster: ClusterRoute | null = null;
  /** The account's subject mappings, applied to its clients' publishes (ClientConnection.publish); null: none. */
  mappings: SubjectMappings | null = null;
  /** The connection whose publish is being delivered (0: the server or a peer); read by system requests. */
  publisherCid = 0;
  /** Subscriptions ever added and removed (/subsz num_inserts, num_removes). */
  inserts = 0;
  removes = 0;

  /** Leaf links of this account; empty without leafnodes. */
  readonly interestObservers = new Set<InterestObserver>();

  subscribe(sub: Subscription): void {
    this.sublist.insert(sub);
    this.inserts++;
    this.cluster?.subscribed(sub);
    for (const o of this.interestObservers) o.subscribed(sub);
  }

  unsubscribe(sub: Subscription): void {
    if (this.sublist.remove(sub)) {
      this.removes++;
      this.cluster?.unsubscribed(sub);
      for (const o of this.interestObservers) o.unsubscribed(sub);
    }
  }

  /** Interest anywhere in the cluster: a local subscription, or a peer's. */
  hasInterest(subject: string): boolean {
    return this.sublist.hasInterest(subject) || (this.cluster?.hasRemoteInterest(subject) ?? false);
  }

  /**
   * Interest a JetStream push consumer may deliver to: a client connection's subscription, here or on a peer.
   * Internal subscribers (cid 0: a stream capturing its subjects, say) do not count on any node, so a consumer
   * never feeds another stream on its own and two streams cannot deliver into each other without a client.
   */
  hasClientInterest(subject: string): boolean {
    if (this.sublist.hasInterest(subject) && hasClientSubscriber(this.sublist.match(subject), subject)) return true;
    return this.cluster?.hasRemoteClientInterest(subject) ?? false;
  }

  /**
   * Delivers to every matching subscription. `publisherCid` with `echo` false suppresses delivery back
   * to the publishing connection. Returns how many subscriptions received the message.
   */
  publish(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    publisherCid: number,
    echo: boolean,
  ): number {
    return this.publishMatching(subject, null, subject, reply, headerBytes, message, publisherCid, echo, false);
  }

  /**
   * publish() for a client's subject that was not checked yet: -1, and nothing counted or delivered, when it
   * is not a valid publish subject (isValidPublishSubject); the match does that check on the way.
   */
  publishUnchecked(subject: string, reply: string | null, headerBytes: number, message: Buffer, publisherCid: number, echo: boolean): number {
    return this.publishMatching(subject, null, subject, reply, headerBytes, message, publisherCid, echo, true);
  }

  /**
   * Delivers to the subscribers of `route` (a JetStream deliver subject or pull inbox, say) while the message
   * carries `subject`, as nats-server delivers JetStream messages; peers subscribed to `route` get it too.
   */
  publishTo(route: string, subject: string, reply: string | null, headerBytes: number, message: Buffer): number {
    return this.publishMatching(route, route, subject, reply, headerBytes, message, 0, true, false);
  }

  private publishMatching(
    matchSubject: string,
    route: string | null,
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    publisherCid: number,
    echo: boolean,
    invalidIsMinusOne: boolean,
  ): number {
    let result = this.sublist.matchPublished(matchSubject, route !== null || !matchSubject.startsWith(REPLY_PREFIX));
    if (result === null) {
      if (invalidIsMinusOne) return -1;
      result = EMPTY_RESULT;
    }
    const stats = this.stats;
    stats.inMsgs++;
    stats.inBytes += message.length;
    this.publisherCid = publisherCid;
    let delivered = 0;
    const plain = result.plain;
    for (let i = 0; i < plain.length; i++) {
      const sub = plain[i]!;
      if (!echo && sub.owner.cid === publisherCid) continue;
      this.deliver(sub, subject, reply, headerBytes, message, route);
      delivered++;
    }
    const queues = result.queues;
    const cluster = this.cluster;
    let served: string[] | null = null;
    for (let q = 0; q < queues.length; q++) {
      const chosen = this.drawMember(queues[q]!, matchSubject, echo ? -1 : publisherCid);
      if (chosen === null) continue; // a peer's member serves it (forward picks which), or nobody can
      this.deliver(chosen, subject, reply, headerBytes, message, route);
      delivered++;
      if (cluster !== null) (served ??= []).push(chosen.queue!);
    }
    if (cluster !== null) delivered += cluster.forward(subject, reply, headerBytes, message, served ?? NO_QUEUES, route);
    return delivered;
  }

  /**
   * A server-originated message (JetStream deliveries, statuses, API replies) with its header block and
   * body apart: matched on `route` (the subject itself when null), it carries `subject`. Client connections
   * write the parts as they are; a joined Buffer is made once, only for internal subscribers and peers.
   * Same deliveries as publish / publishTo with the joined message.
   */
  publishParts(route: string | null, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): number {
    if (header !== null && header.length === 0) header = null;
    const size = (header === null ? 0 : header.length) + data.length;
    const stats = this.stats;
    stats.inMsgs++;
    stats.inBytes += size;
    this.publisherCid = 0;
    const matchSubject = route ?? subject;
    const result = route !== null ? this.sublist.match(route) : this.sublist.match(subject, !subject.startsWith(REPLY_PREFIX));
    let joined: JoinedMessage | null = null;
    let delivered = 0;
    const plain = result.plain;
    for (let i = 0; i < plain.length; i++) {
      const sub = plain[i]!;
      if (writesParts(sub.owner)) this.deliverPartsTo(sub, sub.owner, subject, reply, header, data, size);
      else {
        joined ??= joinParts(header, data);
        this.deliver(sub, subject, reply, joined.headerBytes, joined.message, route);
      }
      delivered++;
    }
    const queues = result.queues;
    const cluster = this.cluster;
    let served: string[] | null = null;
    for (let q = 0; q < queues.length; q++) {
      const chosen = this.drawMember(queues[q]!, matchSubject, -1);
      if (chosen === null) continue;
      if (writesParts(chosen.owner)) this.deliverPartsTo(chosen, chosen.owner, subject, reply, header, data, size);
      else {
        joined ??= joinParts(header, data);
        this.deliver(chosen, subject, reply, joined.headerBytes, joined.message, route);
      }
      delivered++;
      if (cluster !== null) (served ??= []).push(chosen.queue!);
    }
    if (cluster !== null) {
      joined ??= joinParts(header, data);
      delivered += cluster.forward(subject, reply, joined.headerBytes, joined.message, served ?? NO_QUEUES, route);
    }
    return delivered;
  }

  /**
   * A message a peer forwarded: only local subscriptions the cluster knows of get it (plain ones, and one
   * member of each queue group in `queues`); it is never forwarded again. With `route`, subscriptions are
   * matched on `route` and the message carries `subject` (see publishTo).
   */
  deliverRouted(
    subject: string,
    reply: string | null,
    headerBytes: number,
    message: Buffer,
    queues: readonly string[],
    route: string | null = null,
    /** The sending node's server id (internal subscribers learn where the message entered the cluster). */
    fromPeer?: string,
  ): number {
    const stats = this.stats;
    stats.inMsgs++;
    stats.inBytes += message.length;
    this.publisherCid = 0;
    const result = this.sublist.match(route ?? subject);
    let delivered = 0;
    const plain = result.plain;
    for (let i = 0; i < plain.length; i++) {
      const sub = plain[i]!;
      if (!isClusterVisible(sub)) continue;
      // The route goes on with it: an import's response mapping (`_R_`) finds its requester by it.
      this.deliver(sub, subject, reply, headerBytes, message, route, fromPeer);
      delivered++;
    }
    if (queues.length === 0) return delivered;
    const groups = result.queues;
    for (let q = 0; q < groups.length; q++) {
      const members = groups[q]!;
      if (!queues.includes(members[0]!.queue!)) continue;
      const chosen = pickMember(members, -1, true, 0); // the sender chose this node: a local member serves it
      if (chosen === null) continue;
      this.deliver(chosen, subject, reply, headerBytes, message, route);
      delivered++;
    }
    return delivered;
  }

  /** The 503 status a requester that negotiated no_responders gets when nobody received its request. */
  publishNoResponders(reply: string): void {
    this.publish(reply, null, NO_RESPONDERS_HEADERS.length, NO_RESPONDERS_HEADERS, 0, true);
  }

  /** drawMember and deliver for a traced publish (message-trace/traced-publish.ts), which routes on its own. */
  drawQueueMember(members: readonly Subscription[], matchSubject: string, excludeCid: number): Subscription | null {
    return this.drawMember(members, matchSubject, excludeCid);
  }

  deliverOne(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, route: string | null = null, fromPeer?: string): void {
    this.deliver(sub, subject, reply, headerBytes, message, route, fromPeer);
  }

  /** The member of a group a locally published message goes to; null when a peer's is drawn (or none can). */
  private drawMember(members: readonly Subscription[], matchSubject: string, excludeCid: number): Subscription | null {
    const cluster = this.cluster;
    const remote = cluster === null ? 0 : cluster.remoteQueueWeight(matchSubject, members[0]!.queue!);
    const chosen = pickMember(members, excludeCid, false, remote);
    // As nats-server: a member across a leaf link serves only when no member here can.
    if (chosen !== null && chosen.owner.remoteLeaf === true) return localMemberOr(members, excludeCid, chosen);
    return chosen;
  }

  private deliverPartsTo(
    sub: Subscription,
    owner: PartsOwner,
    subject: string,
    reply: string | null,
    header: Uint8Array | null,
    data: Uint8Array,
    size: number,
  ): void {
    sub.delivered++;
    this.stats.outMsgs++;
    this.stats.outBytes += size;
    owner.deliverParts(sub, subject, reply, header, data);
  }

  /** `route`: what the message was matched on when that is not `subject` (publishTo / publishParts). */
  private deliver(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer, route: string | null = null, fromPeer?: string): void {
    sub.delivered++;
    this.stats.outMsgs++;
    this.stats.outBytes += message.length;
    const owner = sub.owner;
    if (route !== null && owner.deliverRouted !== undefined) owner.deliverRouted(sub, route, subject, reply, headerBytes, message);
    else owner.deliverMessage(sub, subject, reply, headerBytes, message, fromPeer);
  }
}

/**
 * One member of a queue group, uniformly at random as nats-server picks, so every group on a subject spreads
 * its load on its own. `remoteWeight` members of the group are on peers: they are part of the draw, and null
 * (a peer serves it) is the answer when one of them is drawn, so members on every node get an equal share.
 * Null too when no local member is eligible: the publisher itself with echo off, or one the cluster cannot see
 * (`clusterVisibleOnly`, for a routed message).
 */
export function pickMember(
  members: readonly Subscription[],
  excludeCid: number,
  clusterVisibleOnly: boolean,
  remoteWeight: number,
): Subscription | null {
  const n = members.length;
  const slot = n === 1 && remoteWeight === 0 ? 0 : randomBelow(n + remoteWeight);
  if (slot >= n) return null;
  const drawn = members[slot]!;
  if (eligible(drawn, excludeCid, clusterVisibleOnly)) return drawn;
  // Drawn one cannot take it: draw again among those that can (peers' too), so none gets a double share.
  let count = 0;
  for (let i = 0; i < n; i++) if (eligible(members[i]!, excludeCid, clusterVisibleOnly)) count++;
  if (count === 0) return null;
  let k = randomBelow(count + remoteWeight);
  if (k >= count) return null;
  for (let i = 0; i < n; i++) {
    const sub = members[i]!;
    if (eligible(sub, excludeCid, clusterVisibleOnly) && k-- === 0) return sub;
  }
  return null;
}

function localMemberOr(members: readonly Subscription[], excludeCid: number, fallback: Subscription): Subscription {
  let count = 0;
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    if (m.owner.remoteLeaf !== true && m.owner.cid !== excludeCid) count++;
  }
  if (count === 0) return fallback;
  let k = randomBelow(count);
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    if (m.owner.remoteLeaf !== true && m.owner.cid !== excludeCid && k-- === 0) return m;
  }
  return fallback;
}

function eligible(sub: Subscription, excludeCid: number, clusterVisibleOnly: boolean): boolean {
  return sub.owner.cid !== excludeCid && (!clusterVisibleOnly || isClusterVisible(sub));
}
