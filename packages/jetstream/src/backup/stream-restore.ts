// `$JS.API.STREAM.RESTORE.<stream>` as nats-server 2.14 (jsStreamRestoreRequest, processStreamRestore): the
// request `{config, state}` is checked first (10003, 10025, 10056, path separators, the config, account limits,
// 10130 when the stream exists), the reply names `$JS.SNAPSHOT.RESTORE.<stream>.<id>`; the client sends the
// archive there in chunks, each with a reply (answered empty once the chunk was taken, or with a 10062 error),
// and an empty message last, answered with a stream create response (the restored stream's info, or 10062).
// 5 s without a chunk ends the restore, as nats-server's stall watchdog.
import { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { isEmptyRequest, parseRequestBody } from '../api/request-body.js';
import { randomId } from '../consumer/random-id.js';
import type { BusMessage } from '../message-bus.js';
import { checkCreateRequest, normaliseStreamConfig, parseStreamConfigRequest } from '../stream/stream-config.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import type { Stream } from '../stream/stream.js';
import { formatTimeNs, nowNs } from '../api/time-format.js';
import { restoreCompleted, restoreCreated } from './backup-advisories.js';
import { ChunkQueue } from './chunk-queue.js';
import type { StoredConsumerFiles } from './restored-consumers.js';
import { ArchiveError, ArchiveReader } from './snapshot-archive.js';
import { s2Unframe } from './s2-framing.js';
import type { BackupContext } from './stream-snapshot.js';

export const RESTORE_RESPONSE = 'io.nats.jetstream.api.v1.stream_restore_response';
const CREATE_RESPONSE = 'io.nats.jetstream.api.v1.stream_create_response';
/** Chunks taken but not yet read by the restore; a client waits for each ack, so one is the norm. */
const MAX_QUEUED_CHUNKS = 64;
/** nats-server's restore watchdog (activityInterval). */
const RESTORE_TIMING = { stallMs: 5000 } as const;

/** What a restore needs from the catalogue (local/local-catalogue.ts). */
export interface RestoreTarget {
  restore(cfg: StreamConfig, created: string, storeBytes: AsyncIterable<Uint8Array>, consumers: readonly StoredConsumerFiles[]): Promise<Stream>;
  /** Removes a stream the restore made before it failed. */
  delete(name: string): Promise<void>;
}

function parseRestoreRequest(ctx: BackupContext, name: string, data: Uint8Array, checkLimits: (cfg: StreamConfig) => void): StreamConfig {
  if (isEmptyRequest(data)) throw JsErrors.badRequest();
  const body = parseRequestBody(data);
  if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) throw JsErrors.invalidJson();
  const raw = (body as Record<string, unknown>).config ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw JsErrors.invalidJson();
  const withName = (raw as Record<string, unknown>).name === undefined || (raw as Record<string, unknown>).name === '' ? { ...raw, name } : raw;
  if ((withName as Record<string, unknown>).name !== name) throw JsErrors.streamNameMismatch();
  if (/[\\/]/.test(name)) throw JsErrors.nameHasPathSeparators();
  const req = parseStreamConfigRequest(withName);
  checkCreateRequest(req);
  const cfg = normaliseStreamConfig(req);
  if (cfg.num_replicas > 1) throw JsErrors.replicasNotSupported();
  checkLimits(cfg);
  if (ctx.streams.get(name) !== undefined) throw JsErrors.streamNameExistRestoreFailed();
  return cfg;
}

/** nats-server's NewJSStreamRestoreError(err, Unless(err)): an API error as itself, anything else 10062. */
function restoreError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return jsError('JSStreamRestoreErrF', { err: err instanceof Error ? err.message : String(err) });
}

export interface RestoreLimits {
  checkConfig(cfg: StreamConfig): void;
  bytesError(cfg: StreamConfig, bytes: number): ApiError | null;
}

export function serveRestore(ctx: BackupContext, target: RestoreTarget, limits: RestoreLimits, name: string, msg: BusMessage): void {
  let cfg: StreamConfig;
  try {
    cfg = parseRestoreRequest(ctx, name, msg.data, (c) => limits.checkConfig(c));
  } catch (err) {
    ctx.respondError(msg.reply, RESTORE_RESPONSE, err instanceof ApiError ? err : JsErrors.invalidJson());
    return;
  }
  const start = new Date();
  restoreCreated(ctx.advisories, name);
  const queue = new ChunkQueue(MAX_QUEUED_CHUNKS);
  const deliverSubject = `$JS.SNAPSHOT.RESTORE.${name}.${randomId(22)}`;
  let finalReply: string | null = null;
  let inputDone = false;
  let stall: NodeJS.Timeout | null = null;
  /** Set once the restore failed while the client still sends: its next chunk is answered with it. */
  let failedWith: ApiError | null = null;
  let unsubscribed = false;
  let stalled = false;
  const stop = (): void => {
    if (!unsubscribed) unsubscribe();
    unsubscribed = true;
  };
  const armStall = (): void => {
    if (stall !== null) clearTimeout(stall);
    // A stalled restore stops listening at once, as nats-server's watchdog: a late chunk gets no answer.
    stall = inputDone
      ? null
      : setTimeout(() => {
          stalled = true;
          stop();
          queue.fail(new Error(`restore for stream '${name}' is stalled`));
        }, RESTORE_TIMING.stallMs);
  };
  const unsubscribe = ctx.bus.subscribe(deliverSubject, (m) => {
    if (failedWith !== null) {
      ctx.respondError(m.reply, CREATE_RESPONSE, failedWith);
      stop();
      return;
    }
    if (inputDone) return;
    if (m.reply === null) {
      queue.fail(new Error(`restore for stream '${name}' requires reply subject for each chunk`));
      inputDone = true;
      return;
    }
    if (m.data.length === 0) {
      inputDone = true;
      finalReply = m.reply;
      queue.end();
      armStall();
      return;
    }
    const reply = m.reply;
    const data = Buffer.from(m.data);
    const over = limits.bytesError(cfg, queue.bytes + data.length);
    if (over !== null) {
      inputDone = true;
      finalReply = reply;
      queue.fail(over);
      armStall();
      return;
    }
    if (!queue.push(data, () => ctx.bus.publish(reply, null, null, Buffer.alloc(0)))) {
      inputDone = true;
      finalReply = reply;
      queue.fail(new Error(`restore for stream '${name}' received chunks faster than it could take them`));
    }
    armStall();
  });
  ctx.respond(msg.reply, RESTORE_RESPONSE, { deliver_subject: deliverSubject });
  armStall();

  void (async () => {
    let stream: Stream | null = null;
    let failure: unknown = null;
    try {
      const reader = new ArchiveReader(s2Unframe(queue));
      const meta = await reader.meta();
      if (meta.config?.name !== cfg.name) throw new ArchiveError('stream names do not match');
      const created = typeof meta.created === 'string' ? meta.created : formatTimeNs(nowNs());
      stream = await target.restore(cfg, created, reader.store(), meta.consumers);
      if (!reader.complete) throw new ArchiveError('archive ended before its end frame');
      // The client's final empty message ends the input.
      for await (const extra of queue) if (extra.length > 0) throw new ArchiveError('data after the end of the archive');
    } catch (err) {
      failure = err;
      queue.fail(err instanceof Error ? err : new Error(String(err)));
    }
    if (stall !== null) clearTimeout(stall);
    const end = new Date();
    // nats-server's watchdog returns without the complete advisory.
    if (!stalled) restoreCompleted(ctx.advisories, name, start, end, queue.bytes);
    if (failure !== null) {
      ctx.log.warn({ stream: name, err: String(failure) }, 'stream restore failed');
      // A stream made before the failure (archive trailer bad) does not stay.
      if (stream !== null) await target.delete(name).catch(() => undefined);
      const apiErr = restoreError(failure);
      if (stalled) return;
      if (finalReply !== null || inputDone) {
        ctx.respondError(finalReply, CREATE_RESPONSE, apiErr);
        stop();
      } else {
        // The client is still sending: its next chunk gets the error (bounded by the stall time).
        failedWith = apiErr;
        setTimeout(stop, RESTORE_TIMING.stallMs).unref();
      }
      return;
    }
    stop();
    ctx.respond(finalReply, CREATE_RESPONSE, ctx.infos.of(stream!));
  })();
}
