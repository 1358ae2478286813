// One leafnode connection, accepted on the leafnode port or solicited to a remote: the INFO/CONNECT
// handshake, the account it is bound to, interest both ways (LS+ / LS-) and messages both ways (LMSG/HMSG).
// The remote side's interest becomes subscriptions of this link in the account's router, so local publishes
// reach it through ordinary matching; the account's own subscriptions are told to the remote side.
import type { Socket } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { MessageRouter, InterestObserver } from '../message-router.js';
import { Subscription, type SubscriptionOwner } from '../subscription.js';
import { LeafProtocolParser, LeafProtocolError, type LeafOp } from './leaf-protocol-parser.js';
import { LeafInterest, interestKey } from './leaf-interest.js';
import { LOOP_RECONNECT_DELAY_MS, loopDetectedError, type LoopDetection } from './loop-detection.js';
import type { LeafUserOptions } from './leafnode-options.js';
import { interestDenied, messageDenied } from './jetstream-deny.js';

export interface LeafLinkHost {
  readonly serverId: string;
  readonly serverName: string;
  readonly version: string;
  readonly maxPayloadBytes: number;
  readonly loops: LoopDetection;
  /** JetStream domain of this server ('' for none) */
  readonly domain: string;
  routerOf(account: string): MessageRouter | undefined;
  /** the INFO this server sends to a leaf that connects */
  /** the INFO this server sends to a leaf that connects (`cid`: the link's, which nats-server requires) */
  acceptInfo(cid: number): Record<string, unknown>;
  /** true when an accepted link from the same remote server into the same account is already up */
  isDuplicate(link: LeafLink): boolean;
  linkUp(link: LeafLink): void;
  linkDown(link: LeafLink, reason: string, retryAfterMs: number): void;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

export interface SolicitParams {
  url: URL;
  account: string;
}

export interface AcceptParams {
  users: readonly LeafUserOptions[];
  defaultAccount: string;
  /** `leafnodes { authorization { timeout } }`: an accepted leaf that has not sent CONNECT by then is refused. */
  authTimeoutMs?: number;
}

const HANDSHAKE_TIMEOUT_MS = 10_000;
const JS_ACK_PREFIX = '$JS.ACK.';
const CRLF = Buffer.from('\r\n');

let nextLeafCid = 1 << 30; // apart from client cids (echo suppression compares cids)

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class LeafLink implements SubscriptionOwner, InterestObserver {
  readonly cid = nextLeafCid++;
  readonly remoteLeaf = true;
  readonly startMs = Date.now();
  account = '';
  remoteName = '';
  remoteId = '';
  remoteAccount = '';
  remoteDomain = '';
  inMsgs = 0;
  outMsgs = 0;
  inBytes = 0;
  outBytes = 0;
  private router: MessageRouter | null = null;
  private readonly parser: LeafProtocolParser;
  private readonly remoteSubs = new Map<string, Subscription>();
  private interest: LeafInterest | null = null;
  private connected = false;
  private closed = false;
  private waitConnectInfo = false;
  private readonly handshakeTimer: NodeJS.Timeout;
  /** The last message written and its subject: one publish that matched several of this link's subs goes once. */
  private lastMessage: Buffer | null = null;
  private lastSubject = '';

  constructor(
    private readonly host: LeafLinkHost,
    private readonly socket: Socket,
    readonly solicited: SolicitParams | null,
    private readonly accept: AcceptParams | null,
  ) {
    this.parser = new LeafProtocolParser(host.maxPayloadBytes);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => this.close('Read Error'));
    socket.on('close', () => this.close('Client Closed'));
    // An accepted leaf's configured auth timeout is nats-server's authTimeout (its -ERR); otherwise our own bound.
    const authTimeoutMs = accept?.authTimeoutMs;
    this.handshakeTimer = setTimeout(() => {
      if (!this.connected) this.fail(authTimeoutMs !== undefined ? 'Authentication Timeout' : 'Stale Leaf Node Connection - Closing');
    }, authTimeoutMs ?? HANDSHAKE_TIMEOUT_MS);
    if (accept !== null) this.write(`INFO ${JSON.stringify(host.acceptInfo(this.cid))}\r\n`);
  }

  get remoteAddress(): { ip: string; port: number } {
    return { ip: this.socket.remoteAddress ?? '', port: this.socket.remotePort ?? 0 };
  }

  get isConnected(): boolean {
    return this.connected;
  }

  get subscriptionCount(): number {
    return this.remoteSubs.size;
  }

  remoteSubjects(): string[] {
    return [...this.remoteSubs.keys()];
  }

  /** Output of this turn, written at its end in one socket write (a publish burst is one syscall). */
  private pending: Buffer[] = [];
  private flushQueued = false;

  private write(s: string | Buffer): void {
    if (this.closed) return;
    this.pending.push(typeof s === 'string' ? Buffer.from(s) : s);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    this.lastMessage = null;
    const out = this.pending;
    this.pending = [];
    if (this.closed || out.length === 0) return;
    this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
  };

  private onData(chunk: Buffer): void {
    let ops: LeafOp[];
    try {
      ops = this.parser.feed(chunk);
    } catch (err) {
      for (const op of err instanceof LeafProtocolError ? err.parsed : []) {
        if (this.closed) return;
        this.handle(op);
      }
      if (this.closed) return;
      // before CONNECT, nats-server answers anything it cannot parse as an authorization failure
      if (!this.connected && this.accept !== null) this.fail('Authorization Violation');
      else this.fail(err instanceof LeafProtocolError ? err.errText : 'Unknown Protocol Operation');
      return;
    }
    for (const op of ops) {
      if (this.closed) return;
      this.handle(op);
    }
  }

  /** Sends nats-server's -ERR and closes. */
  fail(errText: string, retryAfterMs = 0): void {
    if (!this.closed) this.host.log.warn({ account: this.account, remote: this.remoteName, err: errText }, 'leafnode protocol error');
    this.write(`-ERR '${errText}'\r\n`);
    this.close(errText, retryAfterMs);
  }

  private handle(op: LeafOp): void {
    switch (op.op) {
      case 'PING':
        this.write('PONG\r\n');
        return;
      case 'PONG':
      case 'OK':
        return;
      case 'ERR': {
        this.host.log.warn({ account: this.account, err: op.text }, 'leafnode error');
        this.close(op.text, op.text.includes('Loop detected') ? LOOP_RECONNECT_DELAY_MS : 0);
        return;
      }
      case 'INFO':
        return this.onInfo(op.json);
      case 'CONNECT':
        return this.onConnect(op.json);
      case 'LS+':
        return this.onSub(op.subject, op.queue);
      case 'LS-':
        return this.onUnsub(op.subject, op.queue);
      case 'LMSG':
        return this.onMessage(op.subject, op.reply, op.headerBytes, op.message);
    }
  }

  private onInfo(json: string): void {
    let info: Record<string, unknown>;
    try {
      info = JSON.parse(json) as Record<string, unknown>;
    } catch {
      this.fail('Unknown Protocol Operation');
      return;
    }
    if (this.solicited === null) return; // an accepting side takes no INFO
    if (!this.connected && !this.waitConnectInfo) {
      this.remoteId = String(info['server_id'] ?? '');
      this.remoteName = String(info['name'] ?? this.remoteId);
      this.remoteDomain = String(info['domain'] ?? '');
      const url = this.solicited.url;
      const connect: Record<string, unknown> = {
        version: this.host.version,
        server_id: this.host.serverId,
        name: this.host.serverName,
        headers: true,
        remote_account: this.solicited.account,
        protocol: 1,
        ...(this.host.domain !== '' ? { domain: this.host.domain } : {}),
      };
      if (url.username !== '' && url.password !== '') {
        connect['user'] = decodeURIComponent(url.username);
        connect['pass'] = decodeURIComponent(url.password);
      } else if (url.username !== '') connect['auth_token'] = decodeURIComponent(url.username);
      this.write(`CONNECT ${JSON.stringify(connect)}\r\n`);
      // A newer hub confirms CONNECT with a second INFO (connect_info) before interest flows.
      if (info['info_on_connect'] === true) this.waitConnectInfo = true;
      else this.bind(this.solicited.account);
      return;
    }
    if (this.waitConnectInfo && info['connect_info'] === true) {
      this.waitConnectInfo = false;
      this.bind(this.solicited.account);
    }
  }

  private onConnect(json: string): void {
    if (this.accept === null || this.connected) return;
    let c: Record<string, unknown>;
    try {
      c = JSON.parse(json) as Record<string, unknown>;
    } catch {
      this.fail('Unknown Protocol Operation');
      return;
    }
    if (c['lang'] !== undefined) {
      this.fail('Attempted To Connect To Leafnode Port');
      return;
    }
    let account = this.accept.defaultAccount;
    const users = this.accept.users;
    if (users.length > 0) {
      const user = typeof c['user'] === 'string' ? c['user'] : '';
      const pass = typeof c['pass'] === 'string' ? c['pass'] : '';
      const found = users.find((u) => safeEqual(u.user, user) && safeEqual(u.password, pass));
      if (found === undefined) {
        this.fail('Authorization Violation');
        return;
      }
      if (found.account !== undefined) account = found.account;
    }
    this.remoteId = String(c['server_id'] ?? '');
    this.remoteName = String(c['name'] ?? this.remoteId);
    this.remoteAccount = String(c['remote_account'] ?? '');
    this.remoteDomain = String(c['domain'] ?? '');
    this.bind(account);
  }

  /** Bound to `account`: its subscriptions go to the other side, the loop-detection subject first. */
  private bind(account: string): void {
    const router = this.host.routerOf(account);
    if (router === undefined) {
      this.fail('Authorization Violation');
      return;
    }
    this.account = account;
    if (this.accept !== null && this.host.isDuplicate(this)) {
      this.fail('Duplicate Remote LeafNode Connection');
      return;
    }
    clearTimeout(this.handshakeTimer);
    this.router = router;
    this.connected = true;
    const lines: string[] = [];
    const interest = new LeafInterest((l) => lines.push(l));
    interest.add(this.host.loops.subjectFor(account), null);
    for (const sub of router.sublist.all()) if (this.announces(sub)) interest.addSub(sub);
    this.interest = interest;
    if (lines.length > 0) this.write(lines.join(''));
    // From now on every change is written as it happens.
    interest.write = (l: string) => this.write(l);
    router.interestObservers.add(this);
    this.host.linkUp(this);
  }

  /**
   * Interest told to the other side: not the link's own. A hub (accepted link) passes on everything; a spoke
   * (solicited link) only local subscribers' and those of its other hubs (nats-server's localSubs with leaf
   * hubs), so its own leafs' interest stays below it — and a ring still brings a `$LDS.` subject back.
   */
  private announces(sub: Subscription): boolean {
    if (sub.owner === this || interestDenied(sub.subject)) return false;
    if (this.solicited !== null && sub.owner instanceof LeafLink) return sub.owner.solicited !== null;
    return true;
  }

  subscribed(sub: Subscription): void {
    if (this.interest !== null && this.announces(sub)) this.interest.addSub(sub);
  }

  unsubscribed(sub: Subscription): void {
    if (this.interest !== null && this.announces(sub)) this.interest.removeSub(sub);
  }

  private onSub(subject: string, queue: string | null): void {
    if (!this.connected || this.router === null) {
      this.fail('Authorization Violation');
      return;
    }
    if (this.host.loops.isOwn(this.account, subject)) {
      this.host.log.warn({ account: this.account }, 'leafnode loop detected');
      this.fail(loopDetectedError(this.account, LOOP_RECONNECT_DELAY_MS), LOOP_RECONNECT_DELAY_MS);
      return;
    }
    if (interestDenied(subject)) return;
    const key = interestKey(subject, queue);
    if (this.remoteSubs.has(key)) return; // a queue weight update: one member stands for them here
    const sub = new Subscription(this, subject, queue, key);
    this.remoteSubs.set(key, sub);
    try {
      this.router.subscribe(sub);
    } catch {
      this.remoteSubs.delete(key);
      this.write(`-ERR 'Invalid Subscription'\r\n`);
    }
  }

  private onUnsub(subject: string, queue: string | null): void {
    if (!this.connected || this.router === null) {
      this.fail('Authorization Violation');
      return;
    }
    const key = interestKey(subject, queue);
    const sub = this.remoteSubs.get(key);
    if (sub === undefined) return;
    this.remoteSubs.delete(key);
    this.router.unsubscribe(sub);
  }

  private onMessage(subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (!this.connected || this.router === null) {
      this.fail('Authorization Violation');
      return;
    }
    this.inMsgs++;
    this.inBytes += message.length;
    if (messageDenied(subject)) return;
    // A JetStream delivery: sent on its deliver subject with `@<subject>` after the ack reply (nats-server).
    const at = reply !== null && reply.startsWith(JS_ACK_PREFIX) ? reply.indexOf('@') : -1;
    if (at > 0) {
      this.router.publishTo(subject, reply!.substring(at + 1), reply!.substring(0, at), headerBytes, message);
      return;
    }
    // echo off with this link's cid: nothing goes back the way it came
    this.router.publish(subject, reply, headerBytes, message, this.cid, false);
  }

  /** A message matched on `route` (a JetStream deliver subject) carrying `subject`: it crosses on `route`. */
  deliverRouted(sub: Subscription, route: string, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (reply !== null && reply.startsWith(JS_ACK_PREFIX) && !reply.includes('@')) this.deliverMessage(sub, route, `${reply}@${subject}`, headerBytes, message);
    else this.deliverMessage(sub, route, reply, headerBytes, message);
  }

  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (!this.connected || messageDenied(subject)) return;
    if (this.lastMessage === message && this.lastSubject === subject) return;
    this.lastMessage = message; // cleared when the turn's output is flushed
    this.lastSubject = subject;
    this.outMsgs++;
    this.outBytes += message.length;
    const queuePart = sub.queue === null ? (reply === null ? '' : `${reply} `) : reply === null ? `| ${sub.queue} ` : `+ ${reply} ${sub.queue} `;
    const head = headerBytes >= 0 ? `HMSG ${subject} ${queuePart}${headerBytes} ${message.length}\r\n` : `LMSG ${subject} ${queuePart}${message.length}\r\n`;
    this.write(head);
    this.write(message);
    this.write(CRLF);
  }

  close(reason: string, retryAfterMs = 0): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.handshakeTimer);
    const router = this.router;
    if (router !== null) {
      router.interestObservers.delete(this);
      for (const sub of this.remoteSubs.values()) router.unsubscribe(sub);
    }
    this.remoteSubs.clear();
    const out = this.pending;
    this.pending = [];
    if (out.length > 0) this.socket.write(Buffer.concat(out));
    // end() lets the -ERR out first; a peer that never reads is cut off shortly after
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1_000).unref();
    this.host.linkDown(this, reason, retryAfterMs);
  }
}
