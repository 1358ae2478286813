// `$JS.API.CONSUMER.*` requests (§2, §8): the consumer endpoints of the API table, request checks in
// nats-server's order, responses.
import { ApiError } from '../api/api-error.js';
import { endpointOf } from '../api/api-endpoints.js';
import type { BusMessage } from '../message-bus.js';
import { consumerRequestFieldError, parseConsumerConfig, type ConsumerConfig } from './consumer-config.js';
import { consumerErrors as E } from './consumer-errors.js';
import type { ConsumerService } from './consumer-service.js';
import { publicErrorText } from '../api/error-text.js';
import { JsErrors } from '../api/api-errors.js';
import { invalidJsonWithReason } from '../api/js-error-table.js';
import { parsePauseRequest } from './consumer-pause.js';
import { isValidGroupName } from './priority-groups.js';
import { requiredApiLevelError } from '../api/api-level.js';

const T = 'io.nats.jetstream.api.v1.';
const NAMES_PAGE = 1024;
const LIST_PAGE = 256;

export type CreateAction = '' | 'create' | 'update';
/** Which create subject a request came on (they check the name and durable differently). */
export type CreateSubject = 'legacyEphemeral' | 'named' | 'legacyDurable';

/** What a create request asks for once its subject and body are checked. */
export interface CreateRequest {
  stream: string;
  config: ConsumerConfig;
  action: CreateAction;
  /** Legacy `CONSUMER.CREATE.<S>`: the name may be generated. */
  legacyEphemeral: boolean;
  /** The request's `pedantic`: refuse what the defaults would adjust (consumer-pedantic.ts). */
  pedantic?: boolean;
}

export class ConsumerApi {
  constructor(private readonly service: ConsumerService) {}

  /**
   * Serves a consumer endpoint of the API table (`t`: the tokens after `$JS.API`); false = not a consumer
   * endpoint we serve (no reply). Cluster: a node that does not lead the stream serves none of its consumer
   * requests (the leader answers).
   */
  handle(t: readonly string[], msg: BusMessage): boolean {
    const endpoint = endpointOf(t);
    if (endpoint === undefined || endpoint.scope !== 'consumer' || endpoint.serve === undefined) return false;
    if (!this.service.leads(t[endpoint.streamToken!]!)) return false;
    return endpoint.serve(this, t, msg);
  }

  // ---- the endpoints (api/api-endpoints.ts); each answers, so each returns true ----------------------

  /** `legacyEphemeral`: CONSUMER.CREATE.<S>; `named`: CONSUMER.CREATE.<S>.<C>[.<filter>]; `legacyDurable`: CONSUMER.DURABLE.CREATE.<S>.<C>. */
  create(kind: CreateSubject, t: readonly string[], msg: BusMessage): true {
    this.startCreate(kind, t, msg);
    return true;
  }

  info(streamName: string, name: string, msg: BusMessage): true {
    this.answerInfo(streamName, name, msg);
    return true;
  }

  delete(streamName: string, name: string, msg: BusMessage): true {
    void this.answerDelete(streamName, name, msg);
    return true;
  }

  page(kind: 'NAMES' | 'LIST', streamName: string, msg: BusMessage): true {
    this.answerPage(kind, streamName, msg);
    return true;
  }

  /** A pull request (no reply of its own: the consumer delivers, or answers with a status). */
  pull(streamName: string, name: string, msg: BusMessage): true {
    this.service.pullRequest(streamName, name, msg);
    return true;
  }

  pause(streamName: string, name: string, msg: BusMessage): true {
    void this.answerPause(streamName, name, msg);
    return true;
  }

  /** Like a pull, answered only by a consumer that exists (2.14's consumer subscribes its reset subject). */
  reset(streamName: string, name: string, msg: BusMessage): true {
    void this.answerReset(streamName, name, msg);
    return true;
  }

  unpin(streamName: string, name: string, msg: BusMessage): true {
    this.answerUnpin(streamName, name, msg);
    return true;
  }

  stepDown(streamName: string, name: string, msg: BusMessage): true {
    void this.answerStepDown(streamName, name, msg);
    return true;
  }

  // ---- request checks in nats-server's order, responses ---------------------------------------------

  private startCreate(kind: CreateSubject, t: readonly string[], msg: BusMessage): void {
    const type = `${T}consumer_create_response`;
    const ctx = this.service.ctx;
    const fail = (err: ApiError): void => ctx.respondError(msg.reply, type, err);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.from(msg.data).toString('utf8')) as Record<string, unknown>;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
    } catch {
      return fail(E.invalidJson());
    }
    const requestError = consumerRequestFieldError(body);
    if (requestError !== null) return fail(requestError);
    // nats-server's request holds the config by value: a missing one is the zero config.
    const parsed = parseConsumerConfig(body['config'] ?? {});
    if (!('deliver_policy' in parsed)) return fail(parsed);
    const config: ConsumerConfig = parsed;
    const action = body['action'] ?? '';
    if (action !== '' && action !== 'create' && action !== 'update') return fail(E.invalidJson());
    const requestedStream = typeof body['stream_name'] === 'string' ? body['stream_name'] : '';

    let streamName: string;
    let consumerName = '';
    let filter = '';
    if (kind === 'legacyDurable') {
      streamName = t[3]!;
      consumerName = t[4]!;
    } else if (kind === 'legacyEphemeral') {
      streamName = t[2]!;
    } else {
      streamName = t[2]!;
      consumerName = t[3]!;
      if (t.length > 4) filter = t.slice(4).join('.');
    }
    if (streamName !== requestedStream) return fail(E.streamMismatch());
    if (consumerName !== '' && /[\\/]/.test(consumerName)) return fail(E.pathSeparators());
    const durable = config.durable_name ?? '';
    if (kind === 'legacyDurable') {
      if (durable === '') return fail(E.durableNotSet());
      if (consumerName !== durable) return fail(E.durableMismatch());
    }
    if (kind === 'named') {
      if (durable !== '' && consumerName !== durable) return fail(E.durableMismatch());
      config.name = consumerName;
    }
    if (kind === 'legacyEphemeral' && durable !== '') return fail(E.ephemeralWithDurable());
    if (filter !== '' && config.filter_subjects) return fail(E.multipleFiltersNotAllowed());
    if (filter !== '' && (config.filter_subject ?? '') !== filter) return fail(E.filterMismatch());
    // Cluster: checkConsumerConfig refuses more replicas than the stream has (10126).
    if (config.num_replicas > 1 && !this.service.isReplicated(streamName)) return fail(E.replicasNotSupported());

    if (body['pedantic'] !== undefined && typeof body['pedantic'] !== 'boolean') return fail(E.invalidJson());
    const req: CreateRequest = { stream: streamName, config, action, legacyEphemeral: kind === 'legacyEphemeral', pedantic: body['pedantic'] === true };
    this.service.createConsumer(req).then(
      (info) => ctx.respond(msg.reply, type, info),
      (err: unknown) => fail(asApiError(err)),
    );
  }

  private answerInfo(streamName: string, name: string, msg: BusMessage): void {
    const type = `${T}consumer_info_response`;
    const ctx = this.service.ctx;
    if (!ctx.stream(streamName)) return ctx.respondError(msg.reply, type, E.streamNotFound());
    const c = this.service.consumer(streamName, name);
    if (!c) return ctx.respondError(msg.reply, type, E.notFound());
    ctx.respond(msg.reply, type, c.info());
  }

  private async answerDelete(streamName: string, name: string, msg: BusMessage): Promise<void> {
    const type = `${T}consumer_delete_response`;
    const ctx = this.service.ctx;
    try {
      await this.service.deleteConsumer(streamName, name);
      ctx.respond(msg.reply, type, { success: true });
    } catch (err) {
      ctx.respondError(msg.reply, type, asApiError(err));
    }
  }

  /** jsConsumerPauseRequest: the body first (10025), then the stream and the consumer. */
  private async answerPause(streamName: string, name: string, msg: BusMessage): Promise<void> {
    const type = `${T}consumer_pause_response`;
    const ctx = this.service.ctx;
    const req = parsePauseRequest(msg.data);
    if ('error' in req) return ctx.respondError(msg.reply, type, invalidJsonWithReason(req.error));
    if (!ctx.stream(streamName)) return ctx.respondError(msg.reply, type, E.streamNotFound());
    try {
      ctx.respond(msg.reply, type, await this.service.pauseConsumer(streamName, name, req.pauseUntil));
    } catch (err) {
      ctx.respondError(msg.reply, type, asApiError(err));
    }
  }

  /** processResetReq: an empty body resets to the ack floor; `{seq}` to that sequence. */
  private async answerReset(streamName: string, name: string, msg: BusMessage): Promise<void> {
    const c = this.service.consumer(streamName, name);
    if (c === undefined || msg.reply === null || msg.reply === '') return;
    const type = `${T}consumer_reset_response`;
    const ctx = this.service.ctx;
    // Outside the API handlers (as a pull), so its own level check, as processResetReq's.
    const levelError = requiredApiLevelError(msg.header);
    if (levelError !== null) return ctx.respondError(msg.reply, type, levelError);
    let seq = 0;
    if (msg.data.length > 0) {
      try {
        const body = JSON.parse(Buffer.from(msg.data).toString('utf8')) as unknown;
        const v = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)['seq'] : undefined;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('json: cannot unmarshal into Go value of type server.JSApiConsumerResetRequest');
        if (v !== undefined && v !== null) {
          if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`json: cannot unmarshal ${JSON.stringify(v)} into Go struct field JSApiConsumerResetRequest.seq of type uint64`);
          seq = v;
        }
      } catch (err) {
        return ctx.respondError(msg.reply, type, invalidJsonWithReason((err as Error).message));
      }
    }
    try {
      const r = await c.reset(seq);
      if ('refused' in r) return ctx.respondError(msg.reply, type, JsErrors.consumerInvalidReset(r.refused));
      ctx.respond(msg.reply, type, { ...c.info(), reset_seq: r.resetSeq });
    } catch (err) {
      ctx.respondError(msg.reply, type, asApiError(err));
    }
  }

  /** jsConsumerUnpinRequest's checks in its order: the body, the group, the stream, the consumer, its groups. */
  private answerUnpin(streamName: string, name: string, msg: BusMessage): void {
    const type = `${T}consumer_unpin_response`;
    const ctx = this.service.ctx;
    const fail = (err: ApiError): void => ctx.respondError(msg.reply, type, err);
    let group: unknown;
    try {
      const body = JSON.parse(Buffer.from(msg.data).toString('utf8')) as unknown;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('json: cannot unmarshal into Go value of type server.JSApiConsumerUnpinRequest');
      group = (body as Record<string, unknown>)['group'];
      if (group !== undefined && group !== null && typeof group !== 'string') throw new Error(`json: cannot unmarshal ${typeof group} into Go struct field JSApiConsumerUnpinRequest.group of type string`);
    } catch (err) {
      return fail(invalidJsonWithReason((err as Error).message));
    }
    if (typeof group !== 'string' || group === '') return fail(invalidJsonWithReason('consumer group not specified'));
    if (!isValidGroupName(group)) return fail(JsErrors.consumerInvalidGroupName());
    if (!ctx.stream(streamName)) return fail(E.streamNotFound());
    const c = this.service.consumer(streamName, name);
    if (!c) return fail(E.notFound());
    if (!c.unpin(group)) return fail(JsErrors.consumerInvalidPriorityGroup());
    ctx.respond(msg.reply, type, {});
  }

  /** Our consumer leader is the stream leader: stepping it down moves the stream's leadership. */
  private async answerStepDown(streamName: string, name: string, msg: BusMessage): Promise<void> {
    const type = `${T}consumer_leader_stepdown_response`;
    const ctx = this.service.ctx;
    // One node answers 10010 before this (the endpoint is cluster-only); in a cluster the meta leader answers
    // for a stream the catalogue does not hold, as nats-server's.
    if (!ctx.stream(streamName)) return ctx.respondError(msg.reply, type, E.streamNotFound());
    if (!this.service.isReplicated(streamName)) return ctx.respondError(msg.reply, type, clusteringRequired());
    try {
      await this.service.stepDown(streamName, name);
      ctx.respond(msg.reply, type, { success: true });
    } catch (err) {
      ctx.respondError(msg.reply, type, asApiError(err));
    }
  }

  private answerPage(kind: 'NAMES' | 'LIST', streamName: string, msg: BusMessage): void {
    const names = kind === 'NAMES';
    const type = `${T}consumer_${names ? 'names' : 'list'}_response`;
    const ctx = this.service.ctx;
    let offset = 0;
    if (msg.data.length > 0 && Buffer.from(msg.data).toString('utf8').trim().length > 0) {
      try {
        const req = JSON.parse(Buffer.from(msg.data).toString('utf8')) as { offset?: unknown };
        if (req !== null && typeof req === 'object' && typeof req.offset === 'number') offset = Math.max(0, Math.floor(req.offset));
      } catch {
        return ctx.respondError(msg.reply, type, E.invalidJson(), { total: 0, offset: 0, limit: 0, consumers: [] });
      }
    }
    if (!ctx.stream(streamName)) {
      return ctx.respondError(msg.reply, type, E.streamNotFound(), { total: 0, offset: 0, limit: 0, consumers: [] });
    }
    const all = this.service.consumersOf(streamName).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const limit = names ? NAMES_PAGE : LIST_PAGE;
    const slice = all.slice(offset, offset + limit);
    ctx.respond(msg.reply, type, {
      total: all.length,
      offset,
      limit,
      consumers: names ? slice.map((c) => c.name) : slice.map((c) => c.info()),
    });
  }
}

function clusteringRequired(): ApiError {
  return E.clusteringRequired();
}

function asApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return E.createFailed(publicErrorText(err));
}
