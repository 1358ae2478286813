// `$JS.API.STREAM.SNAPSHOT.<stream>` as nats-server 2.14 (jetstream_api.go jsStreamSnapshotRequest and
// streamSnapshot): the reply `{config, state}`, then the archive in chunks to `deliver_subject`, each but the
// last with the reply `$JS.SNAPSHOT.ACK.<stream>.<id>.<bytes>.<index>`; at most window/chunk chunks are
// unacknowledged, the next chunk waits for an ack (5 s without one ends it: `408 No Flow Response`), and
// the end is an empty message with the header `NATS/1.0 204` (`408 No Interest` when the receiver left,
// `500 <error>` when reading the store failed). The archive is pulled from the store chunk by chunk.
import { isValidLiteralSubject } from '@flotilla/protocol';
import { checkSnapshotRecords } from '@flotilla/store';
import { randomId } from '../consumer/random-id.js';
import type { BusMessage, JetStreamLogger, MessageBus } from '../message-bus.js';
import type { AdvisorySink } from '../catalogue/stream-advisory.js';
import type { OpenStreams } from '../catalogue/open-streams.js';
import type { ConsumerService } from '../consumer/consumer-service.js';
import type { OpenStreamInfo } from '../api/open-stream-info.js';
import { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { RequestFields, isEmptyRequest, parseRequestBody } from '../api/request-body.js';
import { encodeArchive, fixedChunks, type ArchiveMeta } from './snapshot-archive.js';
import { snapshotCompleted, snapshotCreated } from './backup-advisories.js';
import { s2Frame } from './s2-framing.js';

export const SNAPSHOT_RESPONSE = 'io.nats.jetstream.api.v1.stream_snapshot_response';
const DEFAULT_CHUNK_BYTES = 128 * 1024;
const DEFAULT_WINDOW_BYTES = 8 * 1024 * 1024;
/** nats-server's snapshotAckTimeout and its wait for the receiver's interest. */
const SNAPSHOT_TIMING = { ackTimeoutMs: 5000, interestWaitMs: 2000 } as const;

export interface BackupContext {
  readonly bus: MessageBus;
  readonly log: JetStreamLogger;
  readonly streams: OpenStreams;
  readonly consumers: ConsumerService;
  readonly infos: OpenStreamInfo;
  readonly advisories: AdvisorySink;
  respond(reply: string | null, type: string, body: object): void;
  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void;
}

interface SnapshotRequest {
  deliverSubject: string;
  noConsumers: boolean;
  chunkBytes: number;
  windowBytes: number;
  /** `jsck`: every message's checksum is checked before the snapshot (a failure answers 10064). */
  checkMsgs: boolean;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(Math.max(lo, v), hi);
}

/** nats-server's error order: empty request, stream, JSON, deliver subject. */
function parseSnapshotRequest(ctx: BackupContext, name: string, data: Uint8Array): SnapshotRequest {
  if (isEmptyRequest(data)) throw JsErrors.badRequest();
  if (ctx.streams.get(name) === undefined) throw JsErrors.streamNotFound();
  const body = parseRequestBody(data);
  if (body === undefined) throw JsErrors.invalidJson();
  const f = new RequestFields(body);
  const deliverSubject = f.string('deliver_subject') ?? '';
  const noConsumers = f.bool('no_consumers') === true;
  const chunk = f.int('chunk_size') ?? 0;
  const window = f.int('window_size') ?? 0;
  const checkMsgs = f.bool('jsck') === true;
  // nats-server's IsValidPublishSubject: a valid subject without wildcards.
  if (!isValidLiteralSubject(deliverSubject)) throw jsError('JSSnapshotDeliverSubjectInvalidErr');
  const chunkBytes = clamp(chunk === 0 ? DEFAULT_CHUNK_BYTES : chunk, 1024, 1024 * 1024);
  const windowBytes = Math.max(clamp(window === 0 ? DEFAULT_WINDOW_BYTES : window, 1024, 32 * 1024 * 1024), chunkBytes);
  return { deliverSubject, noConsumers, chunkBytes, windowBytes, checkMsgs };
}

export async function serveSnapshot(ctx: BackupContext, name: string, msg: BusMessage): Promise<void> {
  let req: SnapshotRequest;
  try {
    req = parseSnapshotRequest(ctx, name, msg.data);
  } catch (err) {
    ctx.respondError(msg.reply, SNAPSHOT_RESPONSE, err instanceof ApiError ? err : JsErrors.invalidJson());
    return;
  }
  const stream = ctx.streams.get(name)!;
  // nats-server's memory store has no snapshot (memstore.go: `no impl`); Flotilla answers the same.
  if (stream.config.storage === 'memory') {
    ctx.respondError(msg.reply, SNAPSHOT_RESPONSE, jsError('JSStreamSnapshotErrF', { err: 'no impl' }));
    return;
  }
  const start = new Date();
  let archive: AsyncIterator<Buffer>;
  let info: { config: object; state: object };
  try {
    await stream.store.flush();
    if (req.checkMsgs) await checkSnapshotRecords(stream.store.snapshot());
    // One cut: the store's snapshot takes its set of sequences when first asked (synchronously), and the
    // consumers and the state are read in the same turn, before anything else can run.
    const storeCut = stream.store.snapshot()[Symbol.asyncIterator]();
    const storeFirst = storeCut.next();
    storeFirst.catch(() => undefined);
    const consumers = req.noConsumers ? [] : ctx.consumers.consumersOf(name).map((c) => ({ meta: c.meta(), state: c.state.snapshot() }));
    const full = ctx.infos.of(stream);
    info = { config: full.config, state: full.state };
    const meta: ArchiveMeta = { config: stream.config, created: stream.created, state: full.state, consumers };
    archive = fixedChunks(s2Frame(encodeArchive(meta, continued(storeFirst, storeCut))), req.chunkBytes)[Symbol.asyncIterator]();
  } catch (err) {
    ctx.respondError(msg.reply, SNAPSHOT_RESPONSE, jsError('JSStreamSnapshotErrF', { err: String((err as Error).message ?? err) }));
    return;
  }
  const first = archive.next();
  ctx.respond(msg.reply, SNAPSHOT_RESPONSE, info);
  snapshotCreated(ctx.advisories, name, info.state);
  const endHeader = await streamChunks(ctx, name, req, archive, first);
  ctx.bus.publish(req.deliverSubject, null, Buffer.from(endHeader), Buffer.alloc(0));
  if (endHeader.startsWith('NATS/1.0 204')) snapshotCompleted(ctx.advisories, name, start, new Date());
  else ctx.log.warn({ stream: name, end: endHeader.trim() }, 'stream snapshot ended early');
}

/** Sends the chunks under flow control; returns the header of the final empty message. */
async function streamChunks(
  ctx: BackupContext,
  name: string,
  req: SnapshotRequest,
  archive: AsyncIterator<Buffer>,
  first: Promise<IteratorResult<Buffer>>,
): Promise<string> {
  const maxInflight = Math.floor(req.windowBytes / req.chunkBytes);
  let slots = maxInflight;
  let wake: (() => void) | null = null;
  const ackSubject = `$JS.SNAPSHOT.ACK.${name}.${randomId(22)}`;
  const unsubscribe = ctx.bus.subscribe(`${ackSubject}.>`, () => {
    if (slots < maxInflight) slots++;
    wake?.();
  });
  try {
    if (!(await waitForInterest(ctx.bus, req.deliverSubject))) return 'NATS/1.0 408 No Interest\r\n\r\n';
    let next = first;
    for (let index = 1; index < Number.MAX_SAFE_INTEGER; index++) {
      if (slots === 0) {
        const acked = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), SNAPSHOT_TIMING.ackTimeoutMs);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        wake = null;
        if (!acked) return 'NATS/1.0 408 No Flow Response\r\n\r\n';
      }
      if (!ctx.bus.hasInterest(req.deliverSubject)) return 'NATS/1.0 408 No Interest\r\n\r\n';
      let r: IteratorResult<Buffer>;
      try {
        r = await next;
      } catch (err) {
        return `NATS/1.0 500 ${String((err as Error).message ?? err).replace(/[\r\n]/g, ' ')}\r\n\r\n`;
      }
      if (r.done === true) return 'NATS/1.0 204\r\n\r\n';
      next = archive.next();
      // A short chunk is the last one (nats-server's ReadFull): it goes without an ack reply.
      const last = r.value.length < req.chunkBytes;
      if (last) {
        ctx.bus.publish(req.deliverSubject, null, null, r.value);
        const after = await next.catch(() => ({ done: true as const, value: undefined }));
        if (after.done !== true) return 'NATS/1.0 500 archive chunking\r\n\r\n';
        return 'NATS/1.0 204\r\n\r\n';
      }
      slots--;
      ctx.bus.publish(req.deliverSubject, `${ackSubject}.${r.value.length}.${index}`, null, r.value);
    }
    return 'NATS/1.0 204\r\n\r\n';
  } finally {
    unsubscribe();
    await archive.return?.(undefined).catch(() => undefined);
  }
}

/** The rest of an iterator whose first step was already asked for. */
async function* continued<T>(first: Promise<IteratorResult<T>>, it: AsyncIterator<T>): AsyncGenerator<T> {
  for (let r = await first; r.done !== true; r = await it.next()) yield r.value;
}

/** nats-server allows the receiver about 2 s to subscribe. */
async function waitForInterest(bus: MessageBus, subject: string): Promise<boolean> {
  const until = Date.now() + SNAPSHOT_TIMING.interestWaitMs;
  while (!bus.hasInterest(subject)) {
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
