// One client TCP connection: the handshake (INFO, CONNECT, auth), its subscriptions, keep-alive pings,
// and its outbound buffer, flushed once per event-loop turn by the server. Permissions, limits and the
// write deadline are enforced here; a connection without permissions pays one null check per message.
import { TLSSocket } from 'node:tls';
import {
  ClientParser,
  type ClientOpHandler,
  type ParseErrorKind,
  type SubjectOp,
  encodeErr,
  isValidPublishSubject,
  isValidLiteralSubject,
  isValidQueueName,
  isValidSubject,
  OK_BYTES,
  PING_BYTES,
  PONG_BYTES,
  ERR_AUTH_TIMEOUT,
  ERR_AUTH_VIOLATION,
  ERR_AUTH_EXPIRED,
  ERR_ACCOUNT_EXPIRED,
  ERR_INVALID_PROTOCOL,
  ERR_INVALID_PUBLISH_SUBJECT,
  ERR_INVALID_SUBJECT,
  ERR_MAX_CONTROL_LINE,
  ERR_MAX_PAYLOAD,
  ERR_MAX_SUBSCRIPTIONS,
  ERR_MAX_ACCOUNT_CONNECTIONS,
  ERR_NO_RESPONDERS_NEEDS_HEADERS,
  ERR_STALE_CONNECTION,
  ERR_UNKNOWN_OP,
  permissionsViolationPublish,
  permissionsViolationSubscribe,
} from '@flotilla/protocol';
import type { AuthResult, ClientAuth, ConnectCredentials } from './client-auth.js';
import type { ClientTransport } from './client-transport.js';
import { certificateIdentities } from './security/certificate-identity.js';
import { redactedConnect } from './security/connect-redaction.js';
import { ErrorRateBound } from './security/error-rate-bound.js';
import { ResponsePermits } from './security/response-permits.js';
import type { UserPermissions } from './security/user-permissions.js';
import { OutboundBuffer } from './outbound-buffer.js';
import { Subscription, type SubscriptionOwner } from './subscription.js';
import type { ClientHost } from './client-host.js';
import type { MessageRouter } from './message-router.js';
import type { Account } from './accounts/account.js';
import { carriesTraceDest } from './message-trace/trace-headers.js';
import { startTrace, DROPPED, UNTRACED } from './message-trace/trace-start.js';
import { MessageTrace } from './message-trace/message-trace.js';
import { publishTraced } from './message-trace/traced-publish.js';
import { sendTraceEvent } from './message-trace/trace-event-send.js';

/** Why a connection ended, as /connz and the logs name it. */
export type CloseReason =
  | 'Client Closed'
  | 'Server Shutdown'
  | 'Slow Consumer (Pending Bytes)'
  | 'Slow Consumer (Write Deadline)'
  | 'TLS Handshake Failure'
  | 'Stale Connection'
  | 'Authentication Timeout'
  | 'Authentication Failure'
  | 'Authentication Expired'
  | 'Credentials Revoked'
  | 'Parse Error'
  | 'Protocol Violation'
  | 'Maximum Control Line Exceeded'
  | 'Maximum Message Payload Exceeded'
  | 'Maximum Connections Exceeded'
  | 'Maximum Account Connections Exceeded'
  | 'Write Error'
  // not a nats-server reason: an exception while handling this connection's input (a Flotilla bug)
  | 'Internal Error';

/**
 * Each parse error's -ERR (null: nats-server closes without one) and the reason /connz gives (nats-server's
 * readLoop closes a client's parse error as Protocol Violation; a WebSocket close frame carries that text).
 */
const PARSE_ERROR_REPLY: Record<ParseErrorKind, { text: string | null; reason: CloseReason }> = {
  'unknown-op': { text: ERR_UNKNOWN_OP, reason: 'Protocol Violation' },
  'control-line': { text: ERR_MAX_CONTROL_LINE, reason: 'Maximum Control Line Exceeded' },
  'max-payload': { text: ERR_MAX_PAYLOAD, reason: 'Maximum Message Payload Exceeded' },
  'connect-required': { text: ERR_AUTH_VIOLATION, reason: 'Authentication Failure' },
  'bad-args': { text: null, reason: 'Protocol Violation' },
};

/** Ops that arrive while a bcrypt check of CONNECT is running wait, up to this many. */
const MAX_DEFERRED_OPS = 1024;
/** Malformed ops that nats-server answers without closing (Invalid Subject, ...): more per second closes. */
const MAX_MALFORMED_OPS_PER_SECOND = 100;
/** Permission and limit errors are logged up to this many per second per connection. */
const MAX_VIOLATION_LOGS_PER_SECOND = 10;

export class ClientConnection implements ClientOpHandler, SubscriptionOwner {
  readonly parser: ClientParser;
  readonly out = new OutboundBuffer();
  readonly subs = new Map<string, Subscription>();
  readonly startMs = Date.now();
  lastActivityMs = this.startMs;
  /** Round trip of the last answered server PING, ms (0: none measured yet). */
  rttMs = 0;
  private rttStartMs = 0;
  // CONNECT options
  connected = false;
  // nats-server's defaults: verbose and pedantic are on until CONNECT turns them off (nats.js always does).
  verbose = true;
  pedantic = true;
  echo = true;
  headers = false;
  noResponders = false;
  name = '';
  lang = '';
  version = '';
  user = '';
  /** The subject space of this connection's account ($G until CONNECT names another): held, never looked up. */
  router: MessageRouter;
  /** The account whose connection count includes this one (after CONNECT). */
  private countedIn: Account | null = null;
  /** Subscriptions allowed (-1: any): the server's max_subscriptions, lowered by the account's limits. */
  private maxSubscriptions: number;
  account: string;
  /** the user's permissions; null when unrestricted */
  permissions: UserPermissions | null = null;
  /** CONNECT's credentials and certificate names, kept so a config reload can check them again (as nats-server's c.opts) */
  connectCredentials: ConnectCredentials | null = null;
  /**
   * False for a WebSocket client authenticated by the websocket block's own credentials: a reload re-checks
   * clients against the server's users, which are not the ones this client proved.
   */
  readonly usesServerAuth: boolean;
  /** the websocket block's ping_interval, when it differs from the server's */
  private ownPingIntervalMs: number | undefined = undefined;
  certIdentities: readonly string[] | null = null;
  /** allow_responses permits, when the user has them */
  private responsePermits: ResponsePermits | null = null;
  /** set once a wildcard subscription overlaps the subscribe deny list */
  private filterDeliveries = false;
  /** non-null while CONNECT waits for a bcrypt check: the ops that came after it */
  private deferred: Array<() => void> | null = null;
  private readonly malformed = new ErrorRateBound(MAX_MALFORMED_OPS_PER_SECOND);
  private readonly violationLogs = new ErrorRateBound(MAX_VIOLATION_LOGS_PER_SECOND);
  private writeDeadlineTimer: NodeJS.Timeout | null = null;
  // counters
  inMsgs = 0;
  inBytes = 0;
  outMsgs = 0;
  outBytes = 0;
  /** Set while queued for the end-of-turn flush. */
  dirty = false;
  closed = false;
  closeReason: CloseReason | null = null;
  private pingsOut = 0;
  private pingTimer: NodeJS.Timeout | null = null;
  private authTimer: NodeJS.Timeout | null = null;
  /** operator mode: the user JWT's subs/payload limits */
  private userLimits: AuthResult['userLimits'] | null = null;

  constructor(
    readonly cid: number,
    readonly socket: ClientTransport,
    private readonly host: ClientHost,
    /** what INFO asked an nkey user to sign; null when no nkeys are configured */
    readonly nonce: string | null = null,
    /** who may connect: the server's, or the websocket block's override for WebSocket clients */
    private readonly auth: ClientAuth = host.auth,
    /** /connz `type`: 'nats' (TCP) or 'websocket' */
    readonly type: 'nats' | 'websocket' = 'nats',
  ) {
    this.usesServerAuth = auth === host.auth;
    this.router = host.accounts.global.router;
    this.account = host.accounts.global.name;
    const o = host.options;
    this.maxSubscriptions = o.maxSubscriptions > 0 ? o.maxSubscriptions : -1;
    this.parser = new ClientParser(this, {
      maxControlLineBytes: o.maxControlLineBytes,
      maxPayloadBytes: o.maxPayloadBytes,
      connectFirst: auth.required,
    });
  }

  get remoteIp(): string {
    return this.socket.remoteAddress ?? '';
  }

  get remotePort(): number {
    return this.socket.remotePort ?? 0;
  }

  get pendingBytes(): number {
    return this.out.pendingBytes + this.socket.writableLength;
  }

  /**
   * Sends INFO (null when it went out before a TLS upgrade) and arms the auth and ping timers
   * (`pingIntervalMs`: the websocket block's ping_interval for WebSocket clients).
   */
  start(info: Buffer | null, pingIntervalMs = this.host.options.pingIntervalMs): void {
    if (info !== null) this.enqueue(info);
    if (this.auth.required) {
      this.authTimer = setTimeout(() => this.fail(ERR_AUTH_TIMEOUT, 'Authentication Timeout'), this.auth.timeoutMs);
      this.authTimer.unref();
    }
    if (pingIntervalMs !== this.host.options.pingIntervalMs) this.ownPingIntervalMs = pingIntervalMs;
    this.armPingTimer();
  }

  /**
   * Server PINGs every ping_interval; a reload's new interval re-arms it (nats-server reads it at each ping).
   * A WebSocket client with the websocket block's own ping_interval keeps it.
   */
  armPingTimer(): void {
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    this.pingTimer = null;
    const intervalMs = this.ownPingIntervalMs ?? this.host.options.pingIntervalMs;
    if (this.closed || intervalMs <= 0) return;
    this.pingTimer = setInterval(() => this.onPingTimer(), intervalMs);
    this.pingTimer.unref();
  }

  onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastActivityMs = Date.now();
    try {
      this.parser.parse(chunk);
    } catch (err) {
      this.closeOnInternalError(err, 'input');
    }
  }

  /**
   * The last-resort guard: an exception while handling this connection's input or output is a bug, but it
   * ends this connection only, never the process.
   */
  closeOnInternalError(err: unknown, during: 'input' | 'output'): void {
    const e = err instanceof Error ? err : new Error(String(err));
    this.host.log.error({ cid: this.cid, ip: this.remoteIp, err: e.message, stack: e.stack }, `internal error handling client ${during}; closing the connection`);
    this.close('Internal Error');
  }

  // ---- client ops ----------------------------------------------------------------------------

  onConnect(json: string): void {
    if (this.deferred !== null) return this.defer(() => this.onConnect(json));
    let opts: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(json);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      opts = parsed as Record<string, unknown>;
    } catch {
      // nats-server closes on unparsable CONNECT without an -ERR.
      return this.close('Protocol Violation');
    }
    const defaults = this.socket.connectDefaults;
    if (defaults !== undefined) for (const [k, v] of Object.entries(defaults)) if (opts[k] === undefined || opts[k] === '') opts[k] = v;
    // Secrets never reach the log, not even at trace level.
    if (this.host.traceEnabled) this.host.log.trace({ cid: this.cid, op: 'CONNECT', json: redactedConnect(opts) }, 'client op');
    const protocol = opts['protocol'];
    if (protocol !== undefined && protocol !== 0 && protocol !== 1) {
      return this.fail(ERR_INVALID_PROTOCOL, 'Protocol Violation');
    }
    const identities = this.auth.mapsCertificates
      ? certificateIdentities(this.socket instanceof TLSSocket ? this.socket.getPeerX509Certificate() : this.socket.peerCertificate?.())
      : null;
    this.connectCredentials = opts;
    this.certIdentities = identities;
    const auth = this.auth.check(opts, identities, this.remoteIp, this.nonce, this.type === 'websocket' ? 'WEBSOCKET' : 'STANDARD', this.cid);
    if (auth instanceof Promise) {
      // A bcrypt check runs off the event loop: hold back later ops (and reads) until it answers.
      this.deferred = [];
      this.socket.pause();
      auth
        .then(
          (result) => this.resumeAfterAuth(result, opts),
          () => this.resumeAfterAuth(null, opts),
        )
        .catch((err: unknown) => this.closeOnInternalError(err, 'input'));
      return;
    }
    this.completeConnect(auth, opts);
  }

  private resumeAfterAuth(auth: AuthResult | null, opts: Record<string, unknown>): void {
    const ops = this.deferred ?? [];
    this.deferred = null;
    if (this.closed) return;
    this.completeConnect(auth, opts);
    for (let i = 0; i < ops.length && !this.closed; i++) ops[i]!();
    if (!this.closed) this.socket.resume();
  }

  private defer(op: () => void): void {
    const ops = this.deferred!;
    if (ops.length >= MAX_DEFERRED_OPS) return this.close('Protocol Violation');
    ops.push(op);
  }

  private completeConnect(auth: AuthResult | null, opts: Record<string, unknown>): void {
    if (auth === null) {
      const user = typeof opts['user'] === 'string' ? opts['user'] : undefined;
      this.host.log.info({ cid: this.cid, ip: this.remoteIp, user }, 'authorization violation');
      this.host.onAuthFailed(this);
      return this.fail(ERR_AUTH_VIOLATION, 'Authentication Failure');
    }
    const user = auth.user;
    // Before CONNECT no subscription can exist when auth is required, so nothing is left in $G's router.
    const account = auth.account === undefined ? this.host.accounts.global : this.host.accounts.named(auth.account);
    // A later CONNECT may not move live subscriptions into another account's subject space.
    if (account.router !== this.router && this.subs.size > 0) {
      this.host.log.info({ cid: this.cid, ip: this.remoteIp, user: auth.user }, 'authorization violation: CONNECT changes account');
      return this.fail(ERR_AUTH_VIOLATION, 'Authentication Failure');
    }
    if (this.countedIn !== account) {
      const maxConns = account.limits?.maxConnections ?? -1;
      if (maxConns >= 0 && account.clientConnections >= maxConns) {
        this.host.log.info({ cid: this.cid, ip: this.remoteIp, user: auth.user, account: account.name }, 'maximum account active connections exceeded');
        return this.fail(ERR_MAX_ACCOUNT_CONNECTIONS, 'Maximum Account Connections Exceeded');
      }
      if (this.countedIn !== null) this.countedIn.clientConnections--;
      account.clientConnections++;
      this.countedIn = account;
    }
    this.userLimits = auth.userLimits ?? null;
    this.applyLimits(account);
    this.router = account.router;
    this.account = account.name;
    this.permissions = auth.permissions;
    const responses = auth.permissions?.responses ?? null;
    this.responsePermits = responses === null ? null : new ResponsePermits(responses);
    this.headers = opts['headers'] === true;
    this.noResponders = opts['no_responders'] === true;
    if (this.noResponders && !this.headers) return this.fail(ERR_NO_RESPONDERS_NEEDS_HEADERS, 'Protocol Violation');
    this.user = user;
    if (opts['verbose'] !== undefined) this.verbose = opts['verbose'] === true;
    if (opts['pedantic'] !== undefined) this.pedantic = opts['pedantic'] === true;
    this.echo = opts['echo'] !== false;
    this.name = typeof opts['name'] === 'string' ? opts['name'] : '';
    this.lang = typeof opts['lang'] === 'string' ? opts['lang'] : '';
    this.version = typeof opts['version'] === 'string' ? opts['version'] : '';
    this.connected = true;
    if (this.authTimer !== null) {
      clearTimeout(this.authTimer);
      this.authTimer = null;
    }
    if (auth.expiresAtMs !== undefined) this.expireAt(auth.expiresAtMs, auth.accountExpires === true ? ERR_ACCOUNT_EXPIRED : ERR_AUTH_EXPIRED);
    if (this.verbose) this.enqueue(OK_BYTES);
    this.host.onClientConnected(this);
  }

  onPub(subject: string, reply: string | null, payload: Buffer): void {
    if (this.deferred !== null) {
      const copy = Buffer.from(payload); // the parser's view is only valid during this call
      return this.defer(() => this.onPub(subject, reply, copy));
    }
    if (!this.authorized()) return;
    this.publish(subject, reply, -1, payload);
  }

  onHpub(subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (this.deferred !== null) {
      const copy = Buffer.from(message);
      return this.defer(() => this.onHpub(subject, reply, headerBytes, copy));
    }
    if (!this.authorized()) return;
    // HPUB without negotiated headers: nats-server drops the connection without an -ERR.
    if (!this.headers) return this.close('Protocol Violation');
    // An empty header block means "no headers": the message travels as a plain MSG.
    this.publish(subject, reply, headerBytes === 0 ? -1 : headerBytes, message);
  }

  onSub(subject: string, queue: string | null, sid: string): void {
    if (this.deferred !== null) return this.defer(() => this.onSub(subject, queue, sid));
    if (!this.authorized()) return;
    if (this.host.traceEnabled) this.host.log.trace({ cid: this.cid, op: 'SUB', subject, queue, sid }, 'client op');
    // nats-server answers an invalid subject or queue group (its Sublist refuses both) the same way.
    if (!isValidSubject(subject) || (queue !== null && !isValidQueueName(queue))) {
      this.malformedOp(ERR_INVALID_SUBJECT);
      return;
    }
    const perms = this.permissions;
    if (perms !== null) {
      if (!perms.canSubscribe(subject, queue)) return this.subscribeViolation(subject, queue, sid);
      if (!this.filterDeliveries && perms.subscriptionNeedsDeliveryFilter(subject)) this.filterDeliveries = true;
    }
    const existing = this.subs.get(sid);
    if (existing === undefined) {
      const max = this.maxSubscriptions;
      if (max >= 0 && this.subs.size >= max) {
        if (!this.violationLogs.exceeded(Date.now())) this.host.log.error({ cid: this.cid, user: this.user, max }, 'maximum subscriptions exceeded');
        this.enqueue(encodeErr(ERR_MAX_SUBSCRIPTIONS));
        return;
      }
      const sub = new Subscription(this, subject, queue, sid);
      this.subs.set(sid, sub);
      this.router.subscribe(sub);
    }
    if (this.verbose) this.enqueue(OK_BYTES);
  }

  onUnsub(sid: string, maxMsgs: number | null): void {
    if (this.deferred !== null) return this.defer(() => this.onUnsub(sid, maxMsgs));
    if (!this.authorized()) return;
    if (this.host.traceEnabled) this.host.log.trace({ cid: this.cid, op: 'UNSUB', sid, maxMsgs }, 'client op');
    const sub = this.subs.get(sid);
    if (sub !== undefined) {
      if (maxMsgs !== null && maxMsgs > 0 && sub.delivered < maxMsgs) sub.maxMsgs = maxMsgs;
      else this.removeSub(sub);
    }
    if (this.verbose) this.enqueue(OK_BYTES);
  }

  onPing(): void {
    if (this.deferred !== null) return this.defer(() => this.onPing());
    // Before CONNECT with auth required, anything but CONNECT is a violation.
    if (!this.authorized()) return;
    this.enqueue(PONG_BYTES);
  }

  onPong(): void {
    this.pingsOut = 0;
    // /connz `rtt`: the server's keep-alive PING to this PONG (nats-server also measures it at connect).
    if (this.rttStartMs > 0) {
      this.rttMs = performance.now() - this.rttStartMs;
      this.rttStartMs = 0;
    }
  }

  onInvalidSubject(op: SubjectOp): void {
    if (this.deferred !== null) return this.defer(() => this.onInvalidSubject(op));
    if (!this.authorized()) return;
    if (op === 'SUB') return this.malformedOp(ERR_INVALID_SUBJECT);
    if (op === 'HPUB' && !this.headers) return this.close('Protocol Violation');
    this.inMsgs++;
    // As an invalid publish subject: nothing can subscribe to it, so it is dropped (-ERR in pedantic mode).
    if (this.pedantic) this.malformedOp(ERR_INVALID_PUBLISH_SUBJECT);
    if (this.verbose) this.enqueue(OK_BYTES);
  }

  onParseError(kind: ParseErrorKind, detail: string): void {
    this.host.log.debug({ cid: this.cid, kind, detail }, 'client parse error');
    const { text, reason } = PARSE_ERROR_REPLY[kind];
    if (text === null) this.close(reason);
    else this.fail(text, reason);
  }

  // ---- delivery ------------------------------------------------------------------------------

  deliverMessage(sub: Subscription, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    if (this.closed) return;
    if (this.permissions !== null && !this.admitDelivery(subject, reply)) return;
    if (headerBytes >= 0 && !this.headers) {
      // A client without header support gets the body only, as nats-server does.
      message = message.subarray(headerBytes);
      headerBytes = -1;
    }
    this.out.writeMsg(sub.framePrefix(subject, headerBytes >= 0), reply, headerBytes, message);
    this.outMsgs++;
    this.outBytes += message.length;
    this.delivered(sub);
  }

  /**
   * deliverMessage for a server-originated message whose header block and body are separate buffers
   * (MessageRouter.publishParts): written as they are, the same bytes as the joined form.
   */
  deliverParts(sub: Subscription, subject: string, reply: string | null, header: Uint8Array | null, data: Uint8Array): void {
    if (this.closed) return;
    if (this.permissions !== null && !this.admitDelivery(subject, reply)) return;
    // A client without header support gets the body only, as nats-server does.
    if (header !== null && !this.headers) header = null;
    // A reply to one request (a PubAck, an API answer) reaches a wildcard inbox subscription once: no
    // cached MSG prefix is made for it. Deliveries (with an ack reply) and a subscription's own subject keep it.
    if (reply === null && subject !== sub.subject) this.out.writeMsgPartsNamed(subject, sub.sid, null, header, data);
    else this.out.writeMsgParts(sub.framePrefix(subject, header !== null), reply, header, data);
    this.outMsgs++;
    this.outBytes += (header === null ? 0 : header.length) + data.length;
    this.delivered(sub);
  }

  /** After a delivery: auto-unsubscribe, the end-of-turn flush, the pending-bytes limit. */
  private delivered(sub: Subscription): void {
    if (sub.maxMsgs > 0 && sub.delivered >= sub.maxMsgs) this.removeSub(sub);
    this.markDirty();
    if (this.out.pendingBytes + this.socket.writableLength > this.host.options.maxPendingBytes) {
      this.host.log.info({ cid: this.cid, pendingBytes: this.pendingBytes }, 'slow consumer detected');
      this.host.countSlowConsumer();
      this.close('Slow Consumer (Pending Bytes)');
    }
  }

  /** Writes buffered output to the socket; called by the server once per event-loop turn. */
  flush(): void {
    this.dirty = false;
    if (this.closed) return;
    this.out.flushTo(this.socket);
    // The socket's buffer is full: the peer must drain it within write_deadline or it is a slow consumer.
    if (this.writeDeadlineTimer === null && this.socket.writableNeedDrain) this.armWriteDeadline();
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /** Sends `-ERR '<text>'`, flushes, and closes. */
  /** An operator-mode user's JWT (or its account's) expires: the connection ends then (the auth timer's slot, unused once connected). */
  private expireAt(atMs: number, errText: string): void {
    const waitMs = Math.max(0, atMs - Date.now());
    const MAX_TIMER_MS = 2 ** 31 - 1;
    this.authTimer = setTimeout(() => (waitMs > MAX_TIMER_MS ? this.expireAt(atMs, errText) : this.fail(errText, 'Authentication Expired')), Math.min(waitMs, MAX_TIMER_MS));
    this.authTimer.unref();
  }

  fail(errText: string, reason: CloseReason): void {
    if (this.closed) return;
    this.enqueue(encodeErr(errText));
    this.close(reason);
  }

  close(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    if (this.countedIn !== null) this.countedIn.clientConnections--;
    this.closeReason = reason;
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    if (this.writeDeadlineTimer !== null) clearTimeout(this.writeDeadlineTimer);
    this.deferred = null;
    for (const sub of this.subs.values()) this.router.unsubscribe(sub);
    this.subs.clear();
    // Whatever is buffered (e.g. the -ERR) still goes out before the FIN, except for a slow consumer,
    // whose socket is dropped at once so its backlog is freed, and after an internal error, when the
    // output is not to be trusted.
    const drop = reason === 'Slow Consumer (Pending Bytes)' || reason === 'Slow Consumer (Write Deadline)' || reason === 'Internal Error';
    if (!drop) this.out.flushTo(this.socket);
    this.out.clear();
    if (drop) this.socket.destroy();
    else {
      // Nothing more is read: a peer still sending (a flood that hit a limit) fills its own buffers, not ours.
      this.socket.pause();
      this.socket.end();
      // A peer that never reads would hold the socket open: destroy after a grace period.
      setTimeout(() => this.socket.destroy(), 1000).unref();
    }
    this.host.onClientClosed(this);
  }

  enqueue(bytes: Buffer): void {
    if (this.closed) return;
    this.out.writeBytes(bytes);
    this.markDirty();
  }

  private publish(subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    this.inMsgs++;
    this.inBytes += message.length;
    const host = this.host;
    const router = this.router;
    // The one check an untraced message pays: a Nats-Trace-Dest line in its header block (ADR-41).
    const trace = headerBytes > 0 && carriesTraceDest(message, headerBytes) ? this.traceOf(subject, headerBytes, message) : null;
    if (trace === DROPPED) return;
    // Mapped before anything else looks at the subject (permissions see the mapped one), as nats-server's parser.
    if (router.mappings !== null) {
      const mapped = router.mappings.map(subject);
      if (mapped === null) return;
      if (trace !== null && mapped !== subject) trace.mapped(mapped);
      subject = mapped;
    }
    if (trace !== null) return this.publishWithTrace(trace, subject, reply, headerBytes, message);
    // Nothing to check or answer before routing (no pedantic, permissions, verbose or trace): the router's
    // match validates the subject (-1: invalid, dropped silently as below), so it is not scanned twice.
    if (!this.pedantic && this.permissions === null && !this.verbose && !host.traceEnabled) {
      const delivered = router.publishUnchecked(subject, reply, headerBytes, message, this.cid, this.echo);
      if (delivered === 0 && reply !== null && this.noResponders) router.publishNoResponders(reply);
      return;
    }
    if (this.pedantic && !(isValidLiteralSubject(subject) && (reply === null || isValidLiteralSubject(reply)))) {
      this.malformedOp(ERR_INVALID_PUBLISH_SUBJECT);
      if (this.verbose) this.enqueue(OK_BYTES); // nats-server still acknowledges the op
      return;
    }
    if (!isValidPublishSubject(subject)) {
      // Nothing can subscribe to it; nats-server drops it silently outside pedantic mode.
      if (this.verbose) this.enqueue(OK_BYTES);
      return;
    }
    // The JetStream API is subjects too, so this also governs $JS.API.*.
    if (this.permissions !== null && !this.mayPublish(subject)) return this.publishViolation(subject);
    if (this.verbose) this.enqueue(OK_BYTES);
    if (host.traceEnabled) host.log.trace({ cid: this.cid, op: 'PUB', subject, reply, bytes: message.length }, 'client op');
    const delivered = router.publish(subject, reply, headerBytes, message, this.cid, this.echo);
    if (delivered === 0 && reply !== null && this.noResponders) router.publishNoResponders(reply);
  }

  /** A message with a Nats-Trace-Dest header: its trace, or DROPPED (the publish is not processed), or null. */
  private traceOf(subject: string, headerBytes: number, message: Buffer): MessageTrace | typeof DROPPED | null {
    const from = { kind: 0, cid: this.cid, name: this.name, account: this.account, subject };
    const start = startTrace(message, headerBytes, from, this.permissions === null ? null : (s) => this.mayPublish(s));
    if (start === UNTRACED) return null;
    if (start === DROPPED || start instanceof MessageTrace) return start;
    this.publishViolation(start.deniedDest);
    return DROPPED;
  }

  /** publish() for a traced message: the same checks, then its deliveries recorded and its event sent. */
  private publishWithTrace(trace: MessageTrace, subject: string, reply: string | null, headerBytes: number, message: Buffer): void {
    const router = this.router;
    if (this.pedantic && !(isValidLiteralSubject(subject) && (reply === null || isValidLiteralSubject(reply)))) {
      this.malformedOp(ERR_INVALID_PUBLISH_SUBJECT);
      if (this.verbose) this.enqueue(OK_BYTES);
    } else if (!isValidPublishSubject(subject)) {
      if (this.verbose) this.enqueue(OK_BYTES);
    } else if (this.permissions !== null && !this.mayPublish(subject)) {
      trace.ingressError(`Permissions Violation for Publish to ${JSON.stringify(subject)}`);
      this.publishViolation(subject);
    } else {
      if (this.verbose) this.enqueue(OK_BYTES);
      const delivered = publishTraced(router, trace, subject, reply, headerBytes, message, this.cid, this.echo);
      if (delivered === 0 && reply !== null && this.noResponders) router.publishNoResponders(reply);
    }
    const host = this.host;
    trace.finish((t) => sendTraceEvent(router, t, host.traceServerInfo()));
  }

  private mayPublish(subject: string): boolean {
    if (this.permissions!.canPublish(subject)) return true;
    return this.responsePermits !== null && this.responsePermits.use(subject, Date.now());
  }

  /** Subscribe deny lists hidden behind wildcards, and allow_responses bookkeeping. */
  private admitDelivery(subject: string, reply: string | null): boolean {
    if (this.filterDeliveries && this.permissions!.deniesDelivery(subject)) return false;
    if (reply !== null && this.responsePermits !== null) this.responsePermits.grant(reply, Date.now());
    return true;
  }

  private publishViolation(subject: string): void {
    if (!this.violationLogs.exceeded(Date.now())) {
      this.host.log.error({ cid: this.cid, user: this.user, subject }, 'publish violation');
    }
    this.enqueue(encodeErr(permissionsViolationPublish(subject)));
  }

  private subscribeViolation(subject: string, queue: string | null, sid: string): void {
    if (!this.violationLogs.exceeded(Date.now())) {
      this.host.log.error({ cid: this.cid, user: this.user, subject, queue, sid }, 'subscription violation');
    }
    // nats-server 2.9 names the queue group when there is one.
    const text = permissionsViolationSubscribe(subject) + (queue === null ? '' : ` using queue "${queue}"`);
    this.enqueue(encodeErr(text));
  }

  /** An -ERR that keeps the connection open, unless such errors keep coming. */
  private malformedOp(errText: string): void {
    if (this.malformed.exceeded(Date.now())) {
      this.host.log.info({ cid: this.cid, maxPerSecond: MAX_MALFORMED_OPS_PER_SECOND }, 'too many malformed operations; closing');
      return this.fail(errText, 'Protocol Violation');
    }
    this.enqueue(encodeErr(errText));
  }

  private armWriteDeadline(): void {
    const deadlineMs = this.host.options.writeDeadlineMs;
    if (deadlineMs <= 0) return;
    this.writeDeadlineTimer = setTimeout(this.onWriteDeadline, deadlineMs);
    this.writeDeadlineTimer.unref();
    this.socket.once('drain', this.onDrained);
  }

  private readonly onDrained = (): void => {
    if (this.writeDeadlineTimer !== null) clearTimeout(this.writeDeadlineTimer);
    this.writeDeadlineTimer = null;
  };

  private readonly onWriteDeadline = (): void => {
    this.writeDeadlineTimer = null;
    if (this.closed) return;
    this.host.log.info({ cid: this.cid, writeDeadlineMs: this.host.options.writeDeadlineMs, pendingBytes: this.pendingBytes }, 'slow consumer detected: write deadline exceeded');
    this.host.countSlowConsumer();
    this.close('Slow Consumer (Write Deadline)');
  };

  private authorized(): boolean {
    if (this.connected || !this.auth.required) return true;
    this.fail(ERR_AUTH_VIOLATION, 'Authentication Failure');
    return false;
  }

  /** The account's per-connection limits, under the server's. */
  private applyLimits(account: Account): void {
    const accountSubs = tighter(account.limits?.maxSubscriptions ?? -1, this.userLimits?.maxSubscriptions ?? -1);
    const serverSubs = this.host.options.maxSubscriptions > 0 ? this.host.options.maxSubscriptions : -1;
    this.maxSubscriptions = accountSubs >= 0 && (serverSubs < 0 || accountSubs < serverSubs) ? accountSubs : serverSubs;
    const accountPayload = tighter(account.limits?.maxPayloadBytes ?? -1, this.userLimits?.maxPayloadBytes ?? -1);
    this.parser.setMaxPayloadBytes(accountPayload >= 0 ? Math.min(accountPayload, this.host.options.maxPayloadBytes) : this.host.options.maxPayloadBytes);
  }

  /** A config reload changed max_payload / max_subscriptions (config-reload.ts): what is parsed and subscribed from now on. */
  reloadLimits(): void {
    this.applyLimits(this.countedIn ?? this.host.accounts.global);
    this.parser.setMaxControlLineBytes(this.host.options.maxControlLineBytes);
  }

  /**
   * A config reload gave this user new permissions: they apply to the next publish, and each subscription
   * they no longer allow is removed with nats-server's -ERR (processSubsOnConfigReload). Returns the removed ones.
   */
  reloadPermissions(permissions: UserPermissions | null): Subscription[] {
    this.permissions = permissions;
    const responses = permissions?.responses ?? null;
    this.responsePermits = responses === null ? null : new ResponsePermits(responses);
    this.filterDeliveries = false;
    const removed: Subscription[] = [];
    if (permissions === null) return removed;
    for (const sub of [...this.subs.values()]) {
      if (!permissions.canSubscribe(sub.subject, sub.queue)) {
        removed.push(sub);
        this.removeSub(sub);
        const queue = sub.queue !== null ? ` using queue "${sub.queue}"` : '';
        this.enqueue(encodeErr(`Permissions Violation for Subscription to "${sub.subject}"${queue} (sid "${sub.sid}")`));
      } else if (permissions.subscriptionNeedsDeliveryFilter(sub.subject)) this.filterDeliveries = true;
    }
    return removed;
  }

  private removeSub(sub: Subscription): void {
    if (this.subs.get(sub.sid) === sub) this.subs.delete(sub.sid);
    this.router.unsubscribe(sub);
  }

  private markDirty(): void {
    if (!this.dirty) {
      this.dirty = true;
      this.host.scheduleFlush(this);
    }
  }

  private onPingTimer(): void {
    if (this.closed) return;
    if (this.pingsOut + 1 > this.host.options.pingMax) {
      this.host.log.debug({ cid: this.cid }, 'stale connection');
      this.fail(ERR_STALE_CONNECTION, 'Stale Connection');
      return;
    }
    this.pingsOut++;
    this.rttStartMs = performance.now();
    this.enqueue(PING_BYTES);
  }
}

/** The stricter of two limits where -1 is none. */
function tighter(a: number, b: number): number {
  if (a < 0) return b;
  if (b < 0) return a;
  return Math.min(a, b);
}
