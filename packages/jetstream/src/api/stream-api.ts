// `$JS.API.INFO` and `$JS.API.STREAM.*`: request parsing, error order and response shapes as
// nats-server 2.9/2.10 (reference §2-§7). Catalogue changes and listings go through the Catalogue port (local
// files on one node, the meta group in a cluster); a stream's own calls go to the stream open on this node.
import type { AccountLimits } from '../catalogue/account-limits.js';
import type { AccountUsage, Catalogue } from '../catalogue/catalogue.js';
import type { OpenStreams } from '../catalogue/open-streams.js';
import type { BusMessage, JetStreamLogger } from '../message-bus.js';
import { checkCreateRequest, normaliseStreamConfig, parseStreamConfigRequest } from '../stream/stream-config.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { applyOriginFacts } from '../topology/origin-facts.js';
import { pedanticFlag, pedanticStreamError } from '../stream/stream-pedantic.js';
import type { Stream } from '../stream/stream.js';
import { accountInfoJson, type ApiStats, type ReservedBytes, type TiersView } from './account-info.js';
import { ApiError } from './api-error.js';
import { JsErrors } from './api-errors.js';
import type { OpenStreamInfo } from './open-stream-info.js';
import { RequestFields, isEmptyRequest, parseRequestBody } from './request-body.js';
import { storedMessageJson, subjectsPage, SUBJECTS_PAGE_LIMIT } from './stream-info.js';
import { publicErrorText } from './error-text.js';

const T = 'io.nats.jetstream.api.v1.';
export const ResponseType = {
  accountInfo: `${T}account_info_response`,
  streamCreate: `${T}stream_create_response`,
  streamUpdate: `${T}stream_update_response`,
  streamDelete: `${T}stream_delete_response`,
  streamInfo: `${T}stream_info_response`,
  streamNames: `${T}stream_names_response`,
  streamList: `${T}stream_list_response`,
  streamPurge: `${T}stream_purge_response`,
  msgGet: `${T}stream_msg_get_response`,
  msgDelete: `${T}stream_msg_delete_response`,
  streamStepdown: `${T}stream_leader_stepdown_response`,
  streamRemovePeer: `${T}stream_remove_peer_response`,
  metaStepdown: `${T}meta_leader_stepdown_response`,
} as const;

export const NAMES_PAGE_LIMIT = 1024;
export const LIST_PAGE_LIMIT = 256;
const NO_PAGE = { total: 0, offset: 0, limit: 0 };

/** STREAM.CREATE's body as the config to create (validation errors thrown as ApiError). */
export function parseCreateRequest(name: string, data: Uint8Array): StreamRequest {
  const body = parseRequestBody(data);
  if (body === undefined) throw JsErrors.invalidJson();
  const req = parseStreamConfigRequest(body);
  if (req.name !== name) throw JsErrors.streamNameMismatch();
  if (/[\\/]/.test(name)) throw JsErrors.nameHasPathSeparators();
  checkCreateRequest(req);
  const pedantic = pedanticFlag(body as Record<string, unknown>);
  if (pedantic) throwIfSet(pedanticStreamError(req));
  return { cfg: normaliseStreamConfig(req), pedantic };
}

/** STREAM.UPDATE's body as the requested config (checked against the current one by the caller). */
export function parseUpdateRequest(name: string, data: Uint8Array): StreamRequest {
  const body = parseRequestBody(data);
  if (body === undefined) throw JsErrors.invalidJson();
  const req = parseStreamConfigRequest(body);
  const pedantic = pedanticFlag(body as Record<string, unknown>);
  if (pedantic) throwIfSet(pedanticStreamError(req));
  const cfg = normaliseStreamConfig(req);
  if (cfg.name !== name) throw JsErrors.streamNameMismatch();
  return { cfg, pedantic };
}

/** A stream create or update request: its config, and whether it asked for pedantic mode. */
export interface StreamRequest {
  cfg: StreamConfig;
  pedantic: boolean;
}

function throwIfSet(error: ApiError | null): void {
  if (error !== null) throw error;
}

/** Extra fields nats-server keeps in an error response of each type (non-omitempty fields). */
export const ERROR_EXTRA: Record<string, object> = {
  [ResponseType.streamInfo]: NO_PAGE,
  // nats-server's JSApiStreamNamesResponse leaves Streams nil: `"streams": null`
  [ResponseType.streamNames]: { ...NO_PAGE, streams: null },
  [ResponseType.streamList]: { ...NO_PAGE, streams: [] },
  [ResponseType.streamPurge]: { purged: 0 },
};

/** What the stream endpoints need from this node's JetStream: where answers go, and the API statistics. */
export interface StreamApiContext {
  readonly log: JetStreamLogger;
  readonly domain: string | undefined;
  /** The account's limits `$JS.API.INFO` reports (unlimited when absent). */
  readonly accountLimits?: { readonly limits: AccountLimits };
  /** The account's reserved bytes `$JS.API.INFO` reports (none when absent). */
  reservedBytes?(): ReservedBytes;
  /** The account's tiered limits for `$JS.API.INFO`'s `tiers`; undefined without tiers. */
  tiersView?(): TiersView | undefined;
  /** JSON response `{type, ...body}` to `reply` (nothing when reply is null). */
  respond(reply: string | null, type: string, body: object): void;
  respondError(reply: string | null, type: string, error: ApiError, extra?: object): void;
  apiStats(): ApiStats;
}

export class StreamApi {
  constructor(
    private readonly ctx: StreamApiContext,
    private readonly catalogue: Catalogue,
    private readonly streams: OpenStreams,
    private readonly infos: OpenStreamInfo,
  ) {}

  /** Runs a handler, turning its ApiError into the typed error response. */
  async run(type: string, reply: string | null, fn: () => Promise<object> | object): Promise<void> {
    try {
      const body = await fn();
      this.ctx.respond(reply, type, body);
    } catch (err) {
      const apiErr =
        err instanceof ApiError ? err : JsErrors.streamCreateFailed(publicErrorText(err));
      if (!(err instanceof ApiError)) this.ctx.log.error({ err: String(err), type }, 'jetstream api request failed');
      this.ctx.respondError(reply, type, apiErr, ERROR_EXTRA[type]);
    }
  }

  private mustStream(name: string): Stream {
    const s = this.streams.get(name);
    if (s === undefined) throw JsErrors.streamNotFound();
    return s;
  }

  /** StreamInfo of a local stream; in a cluster with its replica's `cluster` block. */
  info(stream: Stream): object {
    return this.infos.of(stream);
  }

  accountInfo(msg: BusMessage): Promise<void> {
    return this.run(ResponseType.accountInfo, msg.reply, async () => {
      // The statistics as the request found them, before any wait for other nodes' usage.
      const stats = this.ctx.apiStats();
      const usage: AccountUsage = await this.catalogue.usage();
      return accountInfoJson(usage, stats, this.ctx.domain, this.ctx.accountLimits?.limits, this.ctx.reservedBytes?.(), this.ctx.tiersView?.());
    });
  }

  create(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamCreate, msg.reply, async () => {
      const req = parseCreateRequest(name, msg.data);
      const cfg = await applyOriginFacts(req.cfg, (n) => this.configOf(n), req.pedantic);
      return { ...(await this.catalogue.create(cfg)), did_create: true };
    });
  }

  update(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamUpdate, msg.reply, async () => {
      const req = parseUpdateRequest(name, msg.data);
      return this.catalogue.update(await applyOriginFacts(req.cfg, (n) => this.configOf(n), req.pedantic));
    });
  }

  /** The config of a stream of this account's catalogue (a mirror's or source's origin), if there is one. */
  private async configOf(name: string): Promise<StreamConfig | undefined> {
    if (!this.catalogue.names(undefined).includes(name)) return undefined;
    const [info] = (await this.catalogue.infos([name])) as Array<{ config?: StreamConfig }>;
    return info?.config;
  }

  delete(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamDelete, msg.reply, async () => {
      if (!isEmptyRequest(msg.data)) throw JsErrors.notEmptyRequest();
      await this.catalogue.delete(name);
      return { success: true };
    });
  }

  /** STREAM.PEER.REMOVE `{"peer": "<server name>"}`. */
  removePeer(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamRemovePeer, msg.reply, async () => {
      const f = new RequestFields(parseRequestBody(msg.data));
      await this.catalogue.removePeer(name, f.string('peer') ?? '');
      return { success: true };
    });
  }

  streamInfo(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamInfo, msg.reply, () => {
      const f = new RequestFields(parseRequestBody(msg.data));
      const subjectsFilter = f.string('subjects_filter');
      const deletedDetails = f.bool('deleted_details') === true;
      const offset = f.int('offset') ?? 0;
      const stream = this.mustStream(name);
      let page = NO_PAGE;
      let subjects: Record<string, number> | undefined;
      if (subjectsFilter !== undefined && subjectsFilter !== '') {
        const found = subjectsPage(stream, subjectsFilter, offset);
        // nats-server pages only when something matched (total/offset/limit stay 0 otherwise).
        if (found.total > 0) {
          subjects = found.subjects;
          page = { total: found.total, offset, limit: SUBJECTS_PAGE_LIMIT };
        }
      }
      return { ...page, ...this.infos.of(stream, { deletedDetails, ...(subjects ? { subjects } : {}) }) };
    });
  }

  names(msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamNames, msg.reply, () => {
      const f = new RequestFields(parseRequestBody(msg.data));
      const matched = this.catalogue.names(f.string('subject'));
      const offset = Math.min(f.int('offset') ?? 0, matched.length);
      const streams = matched.slice(offset, offset + NAMES_PAGE_LIMIT);
      // nats-server appends to a nil slice: an empty page is `"streams": null` (LIST and consumer NAMES answer [])
      return { total: matched.length, offset, limit: NAMES_PAGE_LIMIT, streams: streams.length > 0 ? streams : null };
    });
  }

  list(msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamList, msg.reply, async () => {
      const f = new RequestFields(parseRequestBody(msg.data));
      const matched = this.catalogue.names(f.string('subject'));
      const offset = Math.min(f.int('offset') ?? 0, matched.length);
      const streams = await this.catalogue.infos(matched.slice(offset, offset + LIST_PAGE_LIMIT));
      return { total: matched.length, offset, limit: LIST_PAGE_LIMIT, streams };
    });
  }

  purge(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.streamPurge, msg.reply, async () => {
      const stream = this.mustStream(name);
      if (stream.config.sealed) throw JsErrors.streamSealed();
      if (stream.config.deny_purge) throw JsErrors.streamPurgeFailed('stream purge not permitted');
      const f = new RequestFields(parseRequestBody(msg.data));
      const filter = f.string('filter');
      const seq = f.int('seq');
      const keep = f.int('keep');
      if (seq !== undefined && seq > 0 && keep !== undefined && keep > 0) throw JsErrors.badRequest();
      const entry: { op: 'purge'; filter?: string; seq?: number; keep?: number } = { op: 'purge' };
      if (filter !== undefined) entry.filter = filter;
      if (seq !== undefined) entry.seq = seq;
      if (keep !== undefined) entry.keep = keep;
      const purged = (await stream.propose(entry)) as number;
      return { success: true, purged };
    });
  }

  msgGet(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.msgGet, msg.reply, async () => {
      const body = parseRequestBody(msg.data);
      if (body === undefined) throw JsErrors.badRequest();
      const f = new RequestFields(body);
      const seq = f.int('seq') ?? 0;
      const last = f.string('last_by_subj') ?? '';
      const next = f.string('next_by_subj') ?? '';
      const stream = this.mustStream(name);
      if ((seq > 0 && last !== '') || (seq === 0 && last === '' && next === '') || (next !== '' && last !== '')) {
        throw JsErrors.badRequest();
      }
      const found =
        last !== ''
          ? await stream.store.lastBySubject(last)
          : next !== ''
            ? await stream.store.nextMatching(next, seq)
            : await stream.store.get(seq);
      if (found === null) throw JsErrors.noMessageFound();
      return { message: storedMessageJson(found) };
    });
  }

  msgDelete(name: string, msg: BusMessage): Promise<void> {
    return this.run(ResponseType.msgDelete, msg.reply, async () => {
      const body = parseRequestBody(msg.data);
      if (body === undefined) throw JsErrors.badRequest();
      const f = new RequestFields(body);
      const seq = f.int('seq') ?? 0;
      const noErase = f.bool('no_erase') === true;
      const stream = this.mustStream(name);
      if (stream.config.sealed) throw JsErrors.streamSealed();
      if (stream.config.deny_delete) throw JsErrors.streamMsgDeleteFailed('message delete not permitted');
      const removed = (await stream.propose({ op: 'delete', seq, erase: !noErase })) as boolean;
      if (!removed) {
        // nats-server's store errors: below the first sequence / past the last / an interior gap.
        const st = stream.store.state();
        if (seq === 0 || seq < st.first_seq) throw JsErrors.streamMsgDeleteFailed('no message found');
        if (seq > st.last_seq) throw JsErrors.streamMsgDeleteFailed('stream store EOF');
        throw JsErrors.sequenceNotFound(seq);
      }
      return { success: true };
    });
  }

  /** STREAM.LEADER.STEPDOWN and STREAM.PEER.REMOVE: cluster operations, refused on one node. */
  clusterOnly(type: typeof ResponseType.streamStepdown | typeof ResponseType.streamRemovePeer, msg: BusMessage): Promise<void> {
    return this.run(type, msg.reply, () => {
      throw JsErrors.clusteringRequired();
    });
  }
}
