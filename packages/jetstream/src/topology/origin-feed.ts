// One mirror's or source's link to its origin stream, run on the sourcing stream's leader as nats-server's
// setupMirrorConsumer / setupSourceConsumer do: an ephemeral push consumer on the origin created through the
// JetStream API (`<api prefix>.CONSUMER.CREATE.<origin>`, so an `external` prefix reaches another account or
// domain), ack none, flow control and 1 s idle heartbeats, delivering to `<deliver prefix>.<M|S>.<random>`.
// Each delivery is handed to the sink in order; a gap in the consumer's delivery sequence, a refused
// message or a silent origin re-creates the consumer from the last position held, after a back-off
// (nats-server's: 2 s between requests, plus 10 s per failure up to 2 min — counted from the second failure
// here, so a mirror loaded before its origin after a restart retries after 2 s). Flow-control answers wait until
// the window before the previous one is stored (durable, committed), so the origin never runs more than a
// few windows ahead of the replicated state.
import { ApiError } from '../api/api-error.js';

/** An error as stream info shows it: ours, or the origin's answer as it was sent. */
type ErrorJson = { code: number; err_code: number; description: string };
import { jsError } from '../api/js-error-table.js';
import { randomId } from '../consumer/random-id.js';
import type { JetStreamLogger, MessageBus, BusMessage } from '../message-bus.js';
import type { StreamSourceConfig } from '../stream/stream-config-types.js';
import type { IngestResult } from '../stream/stream-writer.js';
import { compileTransform, transformSubject, type CompiledTransform } from './subject-transform.js';

export interface OriginMsg {
  originSeq: number;
  /** After the feed's subject transforms. */
  subject: string;
  /** As the origin delivered it. */
  originSubject: string;
  header: Buffer | null;
  data: Buffer;
  timestampNs: bigint;
}

export interface FeedSink {
  /** Stores one message in order; throws when refused at once. */
  ingest(m: OriginMsg): Promise<IngestResult>;
  /** The last origin sequence held (0: none); asked at each (re)start, once nothing is in flight. */
  position(): number;
}

const NS_PER_MS = 1_000_000;
/** nats-server: sourceHealthHB, sourceHealthCheckInterval, sourceConsumerRetryThreshold, srcConsumerWaitTime. */
const HEARTBEAT_MS = 1_000;
const INACTIVE_THRESHOLD_MS = 10_000;
const RETRY_THRESHOLD_MS = 2_000;
const CREATE_WAIT_MS = 30_000;
const BACKOFF_STEP_MS = 5_000;
const BACKOFF_MAX_MS = 120_000;
/** No heartbeat or message for this long: the consumer is gone (origin leader moved, restarted): re-create. */
const SILENT_MS = 3 * HEARTBEAT_MS + 2_000;
const HEALTH_CHECK_MS = 1_000;

const CONTROL_PREFIX = 'NATS/1.0 100';
const EMPTY = Buffer.alloc(0);

interface AckTokens {
  consumer: string;
  dc: number;
  sseq: number;
  dseq: number;
  tsNs: bigint;
  pending: number;
}

/**
 * Tokens of a `$JS.ACK` reply, v1 (`$JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending>`) or v2
 * (domain and account hash first, a random token last): read from the dots, without splitting (per message).
 */
function readAckReply(reply: string): AckTokens | null {
  if (!reply.startsWith('$JS.ACK.')) return null;
  const dots: number[] = [];
  for (let i = reply.indexOf('.'); i >= 0 && dots.length < 13; i = reply.indexOf('.', i + 1)) dots.push(i);
  const tokens = dots.length + 1;
  // v1: 9 tokens, consumer is token 3; v2: 12 (or more), consumer is token 5.
  const c = tokens === 9 ? 3 : tokens >= 11 ? 5 : -1;
  if (c < 0) return null;
  const tok = (i: number): string => reply.slice(dots[i - 1]! + 1, i < dots.length ? dots[i]! : reply.length);
  const sseq = Number(tok(c + 2));
  const dseq = Number(tok(c + 3));
  if (!Number.isSafeInteger(sseq) || !Number.isSafeInteger(dseq)) return null;
  const ts = tok(c + 4);
  return { consumer: tok(c), dc: Number(tok(c + 1)), sseq, dseq, tsNs: /^\d+$/.test(ts) ? BigInt(ts) : 0n, pending: Number(tok(c + 5)) || 0 };
}

const DOT = 0x2e;
const ZERO = 0x30;

/** Reused by every call of readAckNumbers: its caller reads it before the next delivery. */
const ACK_SCRATCH: AckTokens = { consumer: '', dc: 0, sseq: 0, dseq: 0, tsNs: 0n, pending: 0 };

/**
 * The numbers after `prefix` (`<dc>.<sseq>.<dseq>.<ts>.<pending>` of the current consumer's v1 replies),
 * digit by digit into one reused object: the per-message path allocates nothing but the timestamp (only a
 * mirror keeps it).
 */
function readAckNumbers(reply: string, prefix: string, wantTs: boolean): AckTokens | null {
  let i = prefix.length;
  const out = ACK_SCRATCH;
  for (let n = 0; n < 5; n++) {
    const start = i;
    let v = 0;
    for (; i < reply.length; i++) {
      const c = reply.charCodeAt(i);
      if (c === DOT) break;
      const d = c - ZERO;
      if (d < 0 || d > 9) return null;
      v = v * 10 + d;
    }
    if (i === start || (n < 4 && i >= reply.length)) return null;
    if (n === 0) out.dc = v;
    else if (n === 1) out.sseq = v;
    else if (n === 2) out.dseq = v;
    else if (n === 3) out.tsNs = wantTs ? BigInt(reply.slice(start, i)) : 0n;
    else out.pending = v;
    i++;
  }
  if (!Number.isSafeInteger(out.sseq) || !Number.isSafeInteger(out.dseq)) return null;
  return out;
}

function headerLine(block: Buffer, key: string): string | undefined {
  const text = block.toString('latin1');
  const at = text.indexOf(`\r\n${key}:`);
  if (at < 0) return undefined;
  const start = at + key.length + 3;
  const end = text.indexOf('\r\n', start);
  return text.slice(start, end < 0 ? undefined : end).trim();
}

export interface FeedInfo {
  name: string;
  external?: { api: string; deliver: string };
  lag: number;
  /** ns since the origin was last heard from, -1 when never. */
  active: number;
  error?: { code: number; err_code: number; description: string };
  filter_subject?: string;
  subject_transforms?: Array<{ src: string; dest: string }>;
}

export class OriginFeed {
  private running = false;
  /** Bumped by every (re)start and stop: deliveries and responses of an older consumer are ignored. */
  private generation = 0;
  private unsubscribes: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;
  private health: NodeJS.Timeout | null = null;
  private consumerName = '';
  /** `$JS.ACK.<origin>.<consumer>.` of the current consumer's (v1) replies: the fast path of each delivery. */
  private ackPrefix = '';
  /** Last delivery and origin sequences taken from the current consumer. */
  private dseq = 0;
  private sseq = 0;
  private lag = 0;
  private lastHeardMs = 0;
  private lastRequestMs = 0;
  private fails = 0;
  private error: ErrorJson | null = null;
  /** Resolves once every message handed to the sink so far has settled (ingests settle in order). */
  private tail: Promise<unknown> = Promise.resolve();
  /** `tail` when the previous flow-control request came: the next answer waits for it (one window pipelined). */
  private paceTail: Promise<unknown> = Promise.resolve();
  private lastStored: Promise<IngestResult> | null = null;
  private readonly transforms: CompiledTransform[];
  private readonly apiPrefix: string;
  private readonly deliverPrefix: string;

  constructor(
    private readonly kind: 'mirror' | 'source',
    private readonly cfg: StreamSourceConfig,
    private readonly bus: MessageBus,
    private readonly log: JetStreamLogger,
    private readonly sink: FeedSink,
    /** The sourcing stream, for logs. */
    private readonly streamName: string,
  ) {
    this.transforms = (cfg.subject_transforms ?? []).map((t) => compileTransform(t)).filter((t): t is CompiledTransform => !('kind' in t));
    const ext = cfg.external;
    this.apiPrefix = ext !== undefined && ext.api !== '' ? ext.api : '$JS.API';
    const letter = kind === 'mirror' ? 'M' : 'S';
    this.deliverPrefix = ext !== undefined && ext.deliver !== '' ? `${ext.deliver}.${letter}` : `$JS.${letter}`;
  }

  get config(): StreamSourceConfig {
    return this.cfg;
  }

  /** This node now runs the stream (its leader): connect to the origin. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.fails = 0;
    this.lastHeardMs = 0;
    this.health = setInterval(() => this.checkHealth(), HEALTH_CHECK_MS);
    this.health.unref();
    this.schedule(0);
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.cancelConsumer();
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.health !== null) clearInterval(this.health);
    this.timer = this.health = null;
  }

  info(): FeedInfo {
    // StreamSourceInfo's field order.
    const out = { name: this.cfg.name } as FeedInfo;
    if (this.cfg.external !== undefined) out.external = { api: this.cfg.external.api, deliver: this.cfg.external.deliver };
    out.lag = this.lag;
    out.active = this.lastHeardMs === 0 ? -1 : Math.max(0, Date.now() - this.lastHeardMs) * NS_PER_MS;
    if (this.error !== null) out.error = this.error;
    if (this.cfg.filter_subject !== undefined) out.filter_subject = this.cfg.filter_subject;
    if (this.cfg.subject_transforms !== undefined) out.subject_transforms = this.cfg.subject_transforms;
    return out;
  }

  // ---- consumer lifecycle -------------------------------------------------------------------------

  private schedule(extraMs: number): void {
    if (!this.running) return;
    if (this.timer !== null) clearTimeout(this.timer);
    const sinceLast = Date.now() - this.lastRequestMs;
    const wait = Math.max(0, RETRY_THRESHOLD_MS - sinceLast) + extraMs + (extraMs > 0 ? 100 + Math.floor(Math.random() * 100) : 0);
    this.timer = setTimeout(() => {
      this.timer = null;
      // Start from what is held: nothing may still be on its way into the store.
      void this.tail.then(() => this.createConsumer());
    }, wait);
    this.timer.unref();
  }

  /** Something went wrong with the current consumer: drop it and try again after the back-off. */
  private retry(error: ApiError | ErrorJson | null, backOff = true): void {
    if (!this.running) return;
    if (error !== null) {
      this.error = error instanceof ApiError ? error.toJSON() : error;
      if (backOff) this.fails++;
    }
    this.cancelConsumer();
    this.schedule(error === null || this.fails <= 1 ? 0 : Math.min(BACKOFF_STEP_MS * (this.fails - 1) * 2, BACKOFF_MAX_MS));
  }

  private cancelConsumer(): void {
    this.generation++;
    for (const u of this.unsubscribes.splice(0)) u();
    if (this.consumerName !== '') {
      // Best effort: an abandoned consumer also goes by itself after inactive_threshold.
      this.bus.publish(`${this.apiPrefix}.CONSUMER.DELETE.${this.cfg.name}.${this.consumerName}`, null, null, EMPTY);
      this.consumerName = '';
      this.ackPrefix = '';
    }
  }

  private createConsumer(): void {
    if (!this.running) return;
    this.cancelConsumer();
    const gen = this.generation;
    this.lastRequestMs = Date.now();
    const held = this.sink.position();
    const deliver = `${this.deliverPrefix}.${randomId(22)}`;
    const reply = `$JSC.SRC.${randomId(22)}`;
    const config: Record<string, unknown> = {
      deliver_subject: deliver,
      deliver_policy: 'all',
      ack_policy: 'none',
      ack_wait: 22 * 3600 * 1000 * NS_PER_MS,
      max_deliver: 1,
      idle_heartbeat: HEARTBEAT_MS * NS_PER_MS,
      flow_control: true,
      inactive_threshold: INACTIVE_THRESHOLD_MS * NS_PER_MS,
      num_replicas: 1,
      mem_storage: true,
    };
    if (held > 0) {
      config['deliver_policy'] = 'by_start_sequence';
      config['opt_start_seq'] = held + 1;
    } else if (this.cfg.opt_start_seq !== undefined) {
      config['deliver_policy'] = 'by_start_sequence';
      config['opt_start_seq'] = this.cfg.opt_start_seq;
    } else if (this.cfg.opt_start_time !== undefined) {
      config['deliver_policy'] = 'by_start_time';
      config['opt_start_time'] = this.cfg.opt_start_time;
    }
    if (this.cfg.filter_subject !== undefined) config['filter_subject'] = this.cfg.filter_subject;
    else if (this.transforms.length === 1) config['filter_subject'] = this.transforms[0]!.src;
    else if (this.transforms.length > 1) config['filter_subjects'] = this.transforms.map((t) => t.src);
    this.dseq = 0;
    this.sseq = held;
    this.paceTail = Promise.resolve();
    const setupError = (err: string): ApiError =>
      this.kind === 'mirror' ? jsError('JSMirrorConsumerSetupFailedErrF', { err }) : jsError('JSSourceConsumerSetupFailedErrF', { err });
    const waited = setTimeout(() => gen === this.generation && this.retry(setupError('timeout waiting for consumer create response')), CREATE_WAIT_MS);
    waited.unref();
    this.unsubscribes.push(() => clearTimeout(waited));
    this.unsubscribes.push(
      this.bus.subscribe(reply, (m) => {
        if (gen !== this.generation) return;
        clearTimeout(waited);
        this.created(gen, m, setupError);
      }),
    );
    this.unsubscribes.push(this.bus.subscribe(deliver, (m) => gen === this.generation && this.delivered(gen, m), undefined, { deliveryTarget: true }));
    const body = Buffer.from(JSON.stringify({ stream_name: this.cfg.name, config }));
    const subject = `${this.apiPrefix}.CONSUMER.CREATE.${this.cfg.name}`;
    // Nobody serves that API (yet: JetStream still starting, an import missing): ask again after the threshold.
    // Not a failure of the origin: no back-off beyond the 2 s between requests (a cluster still electing).
    if (!this.bus.hasInterest(subject)) return this.retry(setupError('no responders for the consumer create request'), false);
    this.bus.publish(subject, reply, null, body);
  }

  private created(gen: number, m: BusMessage, setupError: (err: string) => ApiError): void {
    let res: { error?: { code: number; err_code: number; description: string }; name?: string };
    try {
      res = JSON.parse(m.data.toString('utf8')) as typeof res;
    } catch {
      return this.retry(jsError('JSInvalidJSONErr'));
    }
    if (res.error !== undefined) {
      const e = res.error;
      this.log.warn({ stream: this.streamName, origin: this.cfg.name, err: e.description }, `${this.kind} consumer create failed`);
      return this.retry({ code: e.code, err_code: e.err_code, description: e.description });
    }
    if (typeof res.name !== 'string') return this.retry(setupError('invalid consumer create response'));
    if (gen !== this.generation) return;
    this.consumerName = res.name;
    this.ackPrefix = `$JS.ACK.${this.cfg.name}.${res.name}.`;
    this.error = null;
    this.fails = 0;
    this.lastHeardMs = Date.now();
  }

  // ---- deliveries -------------------------------------------------------------------------------

  private delivered(gen: number, m: BusMessage): void {
    const header = m.header;
    if (header !== null && header.length >= CONTROL_PREFIX.length && header.toString('latin1', 0, CONTROL_PREFIX.length) === CONTROL_PREFIX) {
      this.lastHeardMs = Date.now();
      if (m.reply !== null) return this.answerFlowControl(m.reply);
      const last = Number(headerLine(header, 'Nats-Last-Consumer') ?? '0');
      if (last > 0 && last !== this.dseq) return this.retry(null);
      const stalled = headerLine(header, 'Nats-Consumer-Stalled');
      if (stalled !== undefined && stalled !== '') this.answerWhenStored(stalled);
      return;
    }
    if (m.reply === null) return;
    const prefix = this.ackPrefix;
    const ack = prefix !== '' && m.reply.startsWith(prefix) ? readAckNumbers(m.reply, prefix, this.kind === 'mirror') : readAckReply(m.reply);
    if (ack === null || ack.dc > 1) return;
    if (ack.consumer !== '' && this.consumerName !== '' && ack.consumer !== this.consumerName) return;
    this.lastHeardMs = Date.now();
    if (ack.sseq <= this.sseq) {
      if (ack.dseq === this.dseq + 1) this.dseq++;
      return;
    }
    // A jump in the delivery sequence means something was lost on the way: start again from what is held.
    if (ack.dseq !== this.dseq + 1) return this.retry(null);
    this.dseq = ack.dseq;
    this.sseq = ack.sseq;
    this.lag = ack.pending > 0 ? ack.pending - 1 : 0;
    const subject = this.transforms.length > 0 ? transformSubject(this.transforms, m.subject) : m.subject;
    let stored: Promise<IngestResult>;
    try {
      stored = this.sink.ingest({ originSeq: ack.sseq, subject, originSubject: m.subject, header, data: m.data, timestampNs: ack.tsNs });
    } catch (err) {
      return this.refused(err);
    }
    // A batch of ingests shares one promise (one store flush): chain it once.
    if (stored !== this.lastStored) {
      this.lastStored = stored;
      this.tail = stored.then(
        () => undefined,
        (err: unknown) => gen === this.generation && this.refused(err),
      );
    }
  }

  private refused(err: unknown): void {
    const apiErr = isApiError(err) ? err : null;
    this.log.warn({ stream: this.streamName, origin: this.cfg.name, err: String(apiErr?.description ?? err) }, `${this.kind} message not stored`);
    this.retry(apiErr ?? jsError('JSStreamStoreFailedF', { err: String(err) }));
  }

  /**
   * A flow-control request: answered once the messages before the *previous* request are durable, so one
   * window is written while the next arrives (an fsync per window would otherwise stall the origin) and at
   * most two windows wait unsynced here besides the origin's own two.
   */
  private answerFlowControl(subject: string): void {
    const gen = this.generation;
    const wait = this.paceTail;
    this.paceTail = this.tail;
    void wait.then(() => gen === this.generation && this.bus.publish(subject, null, null, EMPTY));
  }

  private answerWhenStored(subject: string): void {
    const gen = this.generation;
    void this.tail.then(() => gen === this.generation && this.bus.publish(subject, null, null, EMPTY));
  }

  private checkHealth(): void {
    if (!this.running || this.timer !== null) return;
    if (this.lastRequestMs > 0 && Date.now() - Math.max(this.lastHeardMs, this.lastRequestMs) > SILENT_MS && this.consumerName !== '') {
      this.retry(null);
    }
  }
}

function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
