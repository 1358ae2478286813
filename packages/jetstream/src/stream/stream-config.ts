// Stream configuration as nats-server applies it: typing of the request (unknown fields, wrong types and unknown enum
// values are "invalid JSON", as Go's decoder makes them), defaults, validation (checkStreamCfg) and the
// rules for what an update may change (configUpdateCheck). Pure functions: they throw ApiError.
import { isValidSubject } from '@flotilla/protocol';
import { JsErrors } from '../api/api-errors.js';
import { isGoInt64 } from '../api/request-body.js';
import { PLACEMENT_FIELDS, STREAM_CONFIG_FIELDS, STREAM_CONSUMER_LIMITS_FIELDS, firstUnknownField } from './config-field-names.js';
import type { StreamConfig } from './stream-config-types.js';
import { requiredStreamLevel, staticMetadata, withLevelOf } from '../api/api-level.js';
import { SubjectIndex } from './subject-index.js';
import { subjectIsSubsetOf, subjectsCollide } from './subjects-collide.js';
import { messageTtlConfig } from './message-ttl-config.js';
import { checkPersistMode, checkPersistModeUpdate } from './persist-mode.js';
import { counterConfigError, mirrorWithCountersError } from './msg-counter.js';
import { scheduleConfigError } from './msg-schedule.js';
import { unsupportedConfigFieldError } from './unsupported-config-fields.js';
import { checkTopologyConfig, checkTopologyUpdate, parseMirrorField, parseSourcesField } from '../topology/source-config.js';
import { apiPrefixHash } from '../topology/source-header.js';
import { checkSubjectTransform, parseSubjectTransformField } from './ingest-transform.js';
import { checkRepublish, parseRepublishField } from './republish.js';

export const DEFAULT_DUPLICATE_WINDOW_NS = 120_000_000_000;
const MIN_WINDOW_NS = 100_000_000;
const MAX_NAME_LEN = 255;
const MAX_DESCRIPTION_LEN = 4096;
const MAX_METADATA_BYTES = 128 * 1024;
const MAX_REPLICAS = 5;

type Json = Record<string, unknown>;

const ENUMS = {
  retention: ['limits', 'interest', 'workqueue'],
  discard: ['old', 'new'],
  storage: ['file', 'memory'],
  compression: ['none', 's2', ''],
  persist_mode: ['', 'default', 'async'],
} as const;

function fail(): never {
  throw JsErrors.invalidJson();
}

function optString(o: Json, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail();
  return v;
}

function optInt(o: Json, key: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!isGoInt64(v)) fail();
  return v;
}

function optBool(o: Json, key: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') fail();
  return v;
}

function optEnum<K extends keyof typeof ENUMS>(o: Json, key: K): (typeof ENUMS)[K][number] | undefined {
  const v = optString(o, key);
  if (v === undefined) return undefined;
  if (!(ENUMS[key] as readonly string[]).includes(v)) fail();
  return v as (typeof ENUMS)[K][number];
}

function optObject(o: Json, key: string): Json | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) fail();
  return v as Json;
}

/** The request as sent (after JSON typing), before defaults. */
export type StreamConfigRequest = Partial<StreamConfig> & { name: string };

function refuseUnknownFields(o: Json, known: ReadonlySet<string>): void {
  const unknown = firstUnknownField(o, known);
  if (unknown !== undefined) throw JsErrors.unknownJsonField(unknown);
}

/**
 * nats-server's Placement, its empty fields omitted (omitempty) and an empty placement dropped, as
 * checkStreamCfg does. `preferred` is kept for normalise to refuse.
 */
function parsePlacement(o: Json): StreamConfig['placement'] | undefined {
  const p = optObject(o, 'placement');
  if (p === undefined) return undefined;
  refuseUnknownFields(p, PLACEMENT_FIELDS);
  const tags = p['tags'];
  if (tags !== undefined && tags !== null && (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))) fail();
  const cluster = optString(p, 'cluster');
  const preferred = optString(p, 'preferred');
  const placement: NonNullable<StreamConfig['placement']> = {};
  if (cluster) placement.cluster = cluster;
  if (Array.isArray(tags) && tags.length > 0) placement.tags = tags as string[];
  if (preferred) placement.preferred = preferred;
  return Object.keys(placement).length > 0 ? placement : undefined;
}

/**
 * Types a decoded JSON body as a stream config request; throws 10025 like 2.14's strict decoder would (an
 * unknown field, a wrong type, an unknown enum value), then 10052 for a field Flotilla does not implement.
 */
export function parseStreamConfigRequest(body: unknown): StreamConfigRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail();
  const o = body as Json;
  refuseUnknownFields(o, STREAM_CONFIG_FIELDS);
  const subjectsRaw = o['subjects'];
  let subjects: string[] | undefined;
  if (subjectsRaw !== undefined && subjectsRaw !== null) {
    if (!Array.isArray(subjectsRaw) || subjectsRaw.some((s) => typeof s !== 'string')) fail();
    subjects = subjectsRaw as string[];
  }
  const metadataRaw = optObject(o, 'metadata');
  if (metadataRaw !== undefined && Object.values(metadataRaw).some((v) => typeof v !== 'string')) fail();
  const req: StreamConfigRequest = { name: optString(o, 'name') ?? '' };
  const set = <K extends keyof StreamConfig>(key: K, value: StreamConfig[K] | undefined): void => {
    if (value !== undefined) req[key] = value;
  };
  set('description', optString(o, 'description'));
  set('subjects', subjects);
  set('retention', optEnum(o, 'retention'));
  set('max_consumers', optInt(o, 'max_consumers'));
  set('max_msgs', optInt(o, 'max_msgs'));
  set('max_bytes', optInt(o, 'max_bytes'));
  set('max_age', optInt(o, 'max_age'));
  set('max_msgs_per_subject', optInt(o, 'max_msgs_per_subject'));
  set('max_msg_size', optInt(o, 'max_msg_size'));
  set('discard', optEnum(o, 'discard'));
  set('discard_new_per_subject', optBool(o, 'discard_new_per_subject'));
  set('storage', optEnum(o, 'storage'));
  set('num_replicas', optInt(o, 'num_replicas'));
  set('no_ack', optBool(o, 'no_ack'));
  set('duplicate_window', optInt(o, 'duplicate_window'));
  set('placement', parsePlacement(o));
  set('mirror', parseMirrorField(o));
  set('sources', parseSourcesField(o));
  set('subject_transform', parseSubjectTransformField(o));
  set('republish', parseRepublishField(o));
  set('sealed', optBool(o, 'sealed'));
  set('deny_delete', optBool(o, 'deny_delete'));
  set('deny_purge', optBool(o, 'deny_purge'));
  set('allow_rollup_hdrs', optBool(o, 'allow_rollup_hdrs'));
  set('allow_direct', optBool(o, 'allow_direct'));
  set('mirror_direct', optBool(o, 'mirror_direct'));
  const compression = optEnum(o, 'compression');
  if (compression !== undefined && compression !== '') req.compression = compression;
  set('first_seq', optInt(o, 'first_seq'));
  set('allow_msg_ttl', optBool(o, 'allow_msg_ttl'));
  set('subject_delete_marker_ttl', optInt(o, 'subject_delete_marker_ttl'));
  set('allow_atomic', optBool(o, 'allow_atomic'));
  set('allow_batched', optBool(o, 'allow_batched'));
  if (optEnum(o, 'persist_mode') === 'async') req.persist_mode = 'async';
  set('allow_msg_counter', optBool(o, 'allow_msg_counter'));
  set('allow_msg_schedules', optBool(o, 'allow_msg_schedules'));
  if (metadataRaw !== undefined) req.metadata = metadataRaw as Record<string, string>;
  const limits = optObject(o, 'consumer_limits');
  if (limits !== undefined) {
    refuseUnknownFields(limits, STREAM_CONSUMER_LIMITS_FIELDS);
    const cl: NonNullable<StreamConfig['consumer_limits']> = {};
    const it = optInt(limits, 'inactive_threshold');
    const map = optInt(limits, 'max_ack_pending');
    if (it !== undefined && it !== 0) cl.inactive_threshold = it;
    if (map !== undefined && map !== 0) cl.max_ack_pending = map;
    req.consumer_limits = cl;
  }
  const unsupported = unsupportedConfigFieldError('stream', o);
  if (unsupported !== null) throw unsupported;
  return req;
}

/** nats-server's isValidName: non-empty, no whitespace, `.`, `*`, `>`. */
/** Subject spaces of the JetStream and Raft APIs: a stream capturing them must not acknowledge. */
const API_NAMESPACES: readonly string[] = ['$JS.>', '$JSC.>', '$NRG.>'];

/** Only a subject starting with `$` or a wildcard can meet `$JS.>`, `$JSC.>`, `$NRG.>` or `$SYS.>` (skips the splits). */
function mayCollideWithApi(subject: string): boolean {
  const c = subject.charCodeAt(0);
  return c === 0x24 /* $ */ || c === 0x2a /* * */ || c === 0x3e /* > */;
}

/**
 * The pair nats-server reports when a stream's own subjects overlap: the first subject that collides with a
 * later one, and the first such later one (positions), or null. Built on a SubjectIndex of the later
 * subjects, so it costs about one index lookup per subject instead of every pair (2,000 subjects: 4 million).
 */
export function firstSelfOverlap(subjects: readonly string[]): [number, number] | null {
  const later = new SubjectIndex();
  let first = -1;
  for (let i = subjects.length - 1; i >= 0; i--) {
    if (later.overlaps([subjects[i]!])) first = i;
    later.add(String(i), [subjects[i]!]);
  }
  if (first < 0) return null;
  for (let j = first + 1; j < subjects.length; j++) if (subjectsCollide(subjects[j]!, subjects[first]!)) return [first, j];
  return null;
}

/** nats-server 2.14's isValidAssetName, plus NUL: the name is a directory name. */
export function isValidStreamName(name: string): boolean {
  return name.length > 0 && !/[\s.*>\\/\0]/.test(name);
}

const negOneIfZero = (v: number | undefined): number => (v === undefined || v === 0 ? -1 : v);

/**
 * Defaults and validation (checkStreamCfg). Returns the full config in nats-server's field order,
 * which is also the form compared for an idempotent re-create and persisted.
 */
export function normaliseStreamConfig(req: StreamConfigRequest): StreamConfig {
  if (!isValidStreamName(req.name)) {
    throw JsErrors.streamInvalidConfig("stream name is required and can not contain '.', '*', '>', '\\', '/'");
  }
  if (req.name.length > MAX_NAME_LEN) {
    throw JsErrors.streamInvalidConfig(`stream name is too long, maximum allowed is ${MAX_NAME_LEN}`);
  }
  if ((req.description ?? '').length > MAX_DESCRIPTION_LEN) {
    throw JsErrors.streamInvalidConfig(`stream description is too long, maximum allowed is ${MAX_DESCRIPTION_LEN}`);
  }
  let metadataBytes = 0;
  for (const [k, v] of Object.entries(req.metadata ?? {})) metadataBytes += k.length + v.length;
  if (metadataBytes > MAX_METADATA_BYTES) {
    throw JsErrors.streamInvalidConfig(`stream metadata exceeds maximum size of ${MAX_METADATA_BYTES} bytes`);
  }
  const replicas = req.num_replicas === undefined || req.num_replicas === 0 ? 1 : req.num_replicas;
  if (replicas > MAX_REPLICAS) throw JsErrors.streamInvalidConfig(`maximum replicas is ${MAX_REPLICAS}`);
  if (replicas < 0) throw JsErrors.streamInvalidConfig('replicas count cannot be negative');
  const maxAge = req.max_age ?? 0;
  let window = req.duplicate_window ?? 0;
  if (window === 0 && req.mirror === undefined) {
    window = maxAge !== 0 && maxAge < DEFAULT_DUPLICATE_WINDOW_NS ? maxAge : DEFAULT_DUPLICATE_WINDOW_NS;
  }
  if (maxAge > 0 && maxAge < MIN_WINDOW_NS) throw JsErrors.streamInvalidConfig('max age needs to be >= 100ms');
  if (window < 0) throw JsErrors.streamInvalidConfig('duplicates window can not be negative');
  if (maxAge !== 0 && window > maxAge) {
    throw JsErrors.streamInvalidConfig('duplicates window can not be larger then max age');
  }
  if (window > 0 && window < MIN_WINDOW_NS) throw JsErrors.streamInvalidConfig('duplicates window needs to be >= 100ms');
  if (req.deny_purge === true && req.allow_rollup_hdrs === true) {
    throw JsErrors.streamInvalidConfig('roll-ups require the purge permission');
  }
  const counterError = counterConfigError(req);
  if (counterError !== null) throw counterError;
  const maxPerSubject = negOneIfZero(req.max_msgs_per_subject);
  const scheduleError = scheduleConfigError(req);
  if (scheduleError !== null) throw scheduleError;
  // A schedule stream needs roll-ups (each schedule replaces its subject's older one); 2.14 turns them on.
  const schedules = req.allow_msg_schedules === true;
  const discard = req.discard ?? 'old';
  if (req.discard_new_per_subject === true) {
    if (discard !== 'new') {
      throw JsErrors.streamInvalidConfig('discard new per subject requires discard new policy to be set');
    }
    if (maxPerSubject <= 0) {
      throw JsErrors.streamInvalidConfig('discard new per subject requires max msgs per subject > 0');
    }
  }
  const ttl = messageTtlConfig(req);
  checkPersistMode(req, replicas);
  if (req.allow_atomic === true && req.mirror !== undefined) throw JsErrors.mirrorWithAtomicPublish();
  if (req.allow_batched === true && req.mirror !== undefined) throw JsErrors.mirrorWithBatchPublish();
  const noAck = req.no_ack === true;
  checkTopologyConfig(req, apiPrefixHash);
  if (req.mirror !== undefined && req.allow_msg_counter === true) throw mirrorWithCountersError();
  // A mirror or a sourcing stream gets no default subject (nats-server: only one with neither does).
  const sourced = req.mirror !== undefined || (req.sources?.length ?? 0) > 0;
  const subjects = req.subjects !== undefined && req.subjects.length > 0 ? [...req.subjects] : sourced ? [] : [req.name];
  const seen = new Set<string>();
  const overlap = firstSelfOverlap(subjects);
  for (let i = 0; i < subjects.length; i++) {
    const subj = subjects[i]!;
    if (!isValidSubject(subj)) throw JsErrors.streamInvalidConfig('invalid subject');
    if (seen.has(subj)) throw JsErrors.streamInvalidConfig('duplicate subjects detected');
    if (subj === '>') {
      if (!noAck) throw JsErrors.streamInvalidConfig('capturing all subjects requires no-ack to be true');
      if (replicas !== 1) throw JsErrors.streamInvalidConfig('capturing all subjects requires replicas of 1');
    }
    if (!noAck && mayCollideWithApi(subj) && API_NAMESPACES.some((ns) => subjectsCollide(subj, ns)) && !subjectIsSubsetOf(subj, '$JS.EVENT.>')) {
      throw JsErrors.streamInvalidConfig('subjects that overlap with jetstream api require no-ack to be true');
    }
    if (!noAck && mayCollideWithApi(subj) && subjectsCollide(subj, '$SYS.>') && !subjectIsSubsetOf(subj, '$SYS.ACCOUNT.>')) {
      throw JsErrors.streamInvalidConfig('subjects that overlap with system api require no-ack to be true');
    }
    if (overlap !== null && overlap[0] === i) {
      throw JsErrors.streamInvalidConfig(`subject "${subj}" overlaps with "${subjects[overlap[1]]!}"`);
    }
    seen.add(subj);
  }
  if (req.first_seq !== undefined && req.first_seq < 0) fail();
  if (req.placement?.preferred) throw JsErrors.streamInvalidConfig('preferred server not permitted in placement');
  checkSubjectTransform(req.subject_transform);
  const republish = checkRepublish(req.republish, subjects, req.subject_transform);

  const cfg: StreamConfig = {
    name: req.name,
    ...(req.description ? { description: req.description } : {}),
    subjects,
    retention: req.retention ?? 'limits',
    max_consumers: negOneIfZero(req.max_consumers),
    max_msgs: negOneIfZero(req.max_msgs),
    max_bytes: negOneIfZero(req.max_bytes),
    max_age: maxAge,
    max_msgs_per_subject: maxPerSubject,
    max_msg_size: negOneIfZero(req.max_msg_size),
    discard,
    ...(req.discard_new_per_subject ? { discard_new_per_subject: true } : {}),
    storage: req.storage ?? 'file',
    num_replicas: replicas,
    ...(noAck ? { no_ack: true } : {}),
    duplicate_window: window,
    ...(req.placement !== undefined ? { placement: req.placement } : {}),
    ...(req.mirror !== undefined ? { mirror: req.mirror } : {}),
    ...(req.sources !== undefined ? { sources: req.sources } : {}),
    compression: req.compression ?? 'none',
    ...(req.first_seq !== undefined && req.first_seq > 0 ? { first_seq: req.first_seq } : {}),
    ...(req.subject_transform !== undefined ? { subject_transform: req.subject_transform } : {}),
    ...(republish !== undefined ? { republish } : {}),
    allow_direct: req.allow_direct ?? false,
    mirror_direct: req.mirror_direct ?? false,
    sealed: req.sealed ?? false,
    deny_delete: req.deny_delete ?? false,
    deny_purge: schedules ? false : ttl.denyPurge,
    allow_rollup_hdrs: schedules || ttl.allowRollup,
    consumer_limits: req.consumer_limits ?? {},
    ...(ttl.allowMsgTtl ? { allow_msg_ttl: true } : {}),
    ...(ttl.markerTtlNs > 0 ? { subject_delete_marker_ttl: ttl.markerTtlNs } : {}),
    ...(req.allow_atomic === true ? { allow_atomic: true } : {}),
    ...(req.allow_batched === true ? { allow_batched: true } : {}),
    ...(req.persist_mode === 'async' ? { persist_mode: 'async' as const } : {}),
    ...(req.allow_msg_counter === true ? { allow_msg_counter: true } : {}),
    ...(schedules ? { allow_msg_schedules: true } : {}),
    ...(req.metadata !== undefined && Object.keys(req.metadata).length > 0 ? { metadata: req.metadata } : {}),
  };
  // 2.14's setStaticStreamMetadata: the stored metadata carries the level the config needs (api-level.ts).
  cfg.metadata = staticMetadata(req.metadata, requiredStreamLevel(cfg));
  return cfg;
}

/** Extra checks of STREAM.CREATE (jsStreamCreateRequest) on the request. */
export function checkCreateRequest(req: StreamConfigRequest): void {
  if (req.sealed === true) throw JsErrors.streamInvalidConfig('stream configuration for create can not be sealed');
  if (req.mirror_direct === true && req.mirror === undefined) {
    throw JsErrors.streamInvalidConfig('stream has no mirror but does have mirror direct');
  }
}

/** What an update may change (configUpdateCheck); returns the config to apply (sealing adjusts it). */
export function checkStreamUpdate(old: StreamConfig, next: StreamConfig): StreamConfig {
  const invalid = JsErrors.streamInvalidConfig;
  if (next.name !== old.name) throw invalid('stream configuration name must match original');
  if (next.max_consumers !== old.max_consumers) throw invalid('stream configuration update can not change MaxConsumers');
  if (next.storage !== old.storage) throw invalid('stream configuration update can not change storage type');
  if (next.retention !== old.retention && (old.retention === 'workqueue' || next.retention === 'workqueue')) {
    throw invalid('stream configuration update can not change retention policy to/from workqueue');
  }
  if (!next.sealed && old.sealed) throw invalid('stream configuration update can not unseal a sealed stream');
  if (!next.deny_delete && old.deny_delete) throw invalid('stream configuration update can not cancel deny message deletes');
  if (!next.deny_purge && old.deny_purge) throw invalid('stream configuration update can not cancel deny purge');
  if (old.allow_msg_ttl === true && next.allow_msg_ttl !== true) throw invalid('message TTL status can not be disabled');
  checkPersistModeUpdate(old, next);
  if ((old.allow_msg_counter === true) !== (next.allow_msg_counter === true)) {
    throw invalid('stream configuration update can not change message counter setting');
  }
  if (old.allow_msg_schedules === true && next.allow_msg_schedules !== true) throw invalid('message schedules can not be disabled');
  checkTopologyUpdate(old, next);
  if (!next.sealed) return next;
  return { ...next, max_age: 0, discard: 'new', deny_delete: true, deny_purge: true, allow_rollup_hdrs: false };
}

/** Canonical form for "identical configuration" comparisons (field order is fixed by normalise). */
export function sameStreamConfig(a: StreamConfig, b: StreamConfig): boolean {
  // copyStreamMetadata: the required level is compared as the existing stream stored it, and a config read
  // from a StreamInfo answer compares without its dynamic `_nats.ver` / `_nats.level`.
  return JSON.stringify(withLevelOf(a, a)) === JSON.stringify(withLevelOf(b, a));
}
