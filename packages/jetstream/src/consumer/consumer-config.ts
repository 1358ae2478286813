// ConsumerConfig on the wire (§8.2): parsing with nats-server's enum checks, defaults, validation and the
// rules for which fields an update may change.
import { isValidSubject, subjectHasWildcard } from '@flotilla/protocol';
import type { ApiError } from '../api/api-error.js';
import type { StreamConfig } from '../stream/stream-config-types.js';
import { isGoInt64 } from '../api/request-body.js';
import { JsErrors } from '../api/api-errors.js';
import { CONSUMER_CONFIG_FIELDS, CONSUMER_CREATE_REQUEST_FIELDS, firstUnknownField } from '../stream/config-field-names.js';
import { unsupportedConfigFieldError } from '../stream/unsupported-config-fields.js';
import { consumerErrors as E } from './consumer-errors.js';
import { subjectIsSubsetOf as subjectIsSubset, subjectsCollide } from '@flotilla/protocol';
import { normalisePauseUntil } from './consumer-pause.js';
import { DEFAULT_PINNED_TTL_NS, priorityConfigError } from './priority-groups.js';

export type DeliverPolicy = 'all' | 'last' | 'new' | 'by_start_sequence' | 'by_start_time' | 'last_per_subject';
export type AckPolicy = 'none' | 'all' | 'explicit';
export type ReplayPolicy = 'instant' | 'original';

/** Field order follows nats-server's struct so JSON output reads the same. Durations are ns. */
export interface ConsumerConfig {
  durable_name?: string;
  name?: string;
  description?: string;
  deliver_policy: DeliverPolicy;
  opt_start_seq?: number;
  opt_start_time?: string;
  ack_policy: AckPolicy;
  ack_wait?: number;
  max_deliver?: number;
  backoff?: number[];
  filter_subject?: string;
  filter_subjects?: string[];
  replay_policy: ReplayPolicy;
  rate_limit_bps?: number;
  sample_freq?: string;
  max_waiting?: number;
  max_ack_pending?: number;
  idle_heartbeat?: number;
  flow_control?: boolean;
  headers_only?: boolean;
  max_batch?: number;
  max_expires?: number;
  max_bytes?: number;
  deliver_subject?: string;
  deliver_group?: string;
  inactive_threshold?: number;
  num_replicas: number;
  mem_storage?: boolean;
  direct?: boolean;
  metadata?: Record<string, string>;
  /** RFC 3339 in UTC (consumer-pause.ts); unset: not paused. */
  pause_until?: string;
  /** priority-groups.ts: 2.14 takes one group. */
  priority_groups?: string[];
  priority_policy?: PriorityPolicy;
  /** ns: a pinned client keeps its pin this long without pulling. */
  priority_timeout?: number;
}

export type PriorityPolicy = 'none' | 'overflow' | 'pinned_client' | 'prioritized';
const PRIORITY_POLICIES: readonly string[] = ['none', 'overflow', 'pinned_client', 'prioritized'];

export const DEFAULT_ACK_WAIT_NS = 30_000_000_000;
export const DEFAULT_MAX_ACK_PENDING = 1000;
export const DEFAULT_MAX_WAITING = 512;
export const DEFAULT_EPHEMERAL_INACTIVE_NS = 5_000_000_000;
const MAX_DESCRIPTION_LEN = 4096;
const MAX_NAME_LEN = 255;
const MAX_METADATA_BYTES = 128 * 1024;

const DELIVER_POLICIES: readonly string[] = ['all', 'last', 'new', 'by_start_sequence', 'by_start_time', 'last_per_subject'];
/** 2.14 also decodes `flow_control`; unsupported-config-fields.ts refuses it after typing. */
const ACK_POLICIES: readonly string[] = ['none', 'all', 'explicit', 'flow_control'];
const REPLAY_POLICIES: readonly string[] = ['instant', 'original'];

class BadJson extends Error {}

/**
 * Reads the request's `config` the way 2.14's strict decoder would: unknown fields, wrong types and unknown
 * enum values are "invalid JSON"; then a 2.14 field Flotilla does not implement is refused by name (10052).
 * Empty strings / zeros mean unset (Go's omitempty round trip).
 */
export function parseConsumerConfig(raw: unknown): ConsumerConfig | ApiError {
  if (raw === undefined || raw === null) return E.configRequired();
  try {
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new BadJson();
    const r = raw as Record<string, unknown>;
    const unknown = firstUnknownField(r, CONSUMER_CONFIG_FIELDS);
    if (unknown !== undefined) return JsErrors.unknownJsonField(unknown);
    // 2.14 decodes "undefined" as deliver all.
    const deliver = r['deliver_policy'] === 'undefined' ? 'all' : enumField(r, 'deliver_policy', DELIVER_POLICIES, 'all');
    const cfg: ConsumerConfig = {
      deliver_policy: deliver as DeliverPolicy,
      ack_policy: enumField(r, 'ack_policy', ACK_POLICIES, 'none') as AckPolicy,
      replay_policy: enumField(r, 'replay_policy', REPLAY_POLICIES, 'instant') as ReplayPolicy,
      num_replicas: intField(r, 'num_replicas') ?? 0,
    };
    setStr(cfg, 'durable_name', strField(r, 'durable_name'));
    setStr(cfg, 'name', strField(r, 'name'));
    setStr(cfg, 'description', strField(r, 'description'));
    setNum(cfg, 'opt_start_seq', intField(r, 'opt_start_seq'));
    const startTime = strField(r, 'opt_start_time');
    if (startTime) {
      if (Number.isNaN(Date.parse(startTime))) throw new BadJson();
      cfg.opt_start_time = startTime;
    }
    setNum(cfg, 'ack_wait', intField(r, 'ack_wait'));
    setNum(cfg, 'max_deliver', intField(r, 'max_deliver'));
    const backoff = r['backoff'];
    if (backoff !== undefined && backoff !== null) {
      if (!Array.isArray(backoff) || backoff.some((b) => !isGoInt64(b))) throw new BadJson();
      if (backoff.length > 0) cfg.backoff = backoff as number[];
    }
    setStr(cfg, 'filter_subject', strField(r, 'filter_subject'));
    const filters = r['filter_subjects'];
    if (filters !== undefined && filters !== null) {
      if (!Array.isArray(filters) || filters.some((f) => typeof f !== 'string')) throw new BadJson();
      if (filters.length > 0) cfg.filter_subjects = filters as string[];
    }
    setNum(cfg, 'rate_limit_bps', intField(r, 'rate_limit_bps'));
    setStr(cfg, 'sample_freq', strField(r, 'sample_freq'));
    setNum(cfg, 'max_waiting', intField(r, 'max_waiting'));
    setNum(cfg, 'max_ack_pending', intField(r, 'max_ack_pending'));
    setNum(cfg, 'idle_heartbeat', intField(r, 'idle_heartbeat'));
    if (boolField(r, 'flow_control')) cfg.flow_control = true;
    if (boolField(r, 'headers_only')) cfg.headers_only = true;
    setNum(cfg, 'max_batch', intField(r, 'max_batch'));
    setNum(cfg, 'max_expires', intField(r, 'max_expires'));
    setNum(cfg, 'max_bytes', intField(r, 'max_bytes'));
    setStr(cfg, 'deliver_subject', strField(r, 'deliver_subject'));
    setStr(cfg, 'deliver_group', strField(r, 'deliver_group'));
    setNum(cfg, 'inactive_threshold', intField(r, 'inactive_threshold'));
    if (boolField(r, 'mem_storage')) cfg.mem_storage = true;
    if (boolField(r, 'direct')) cfg.direct = true;
    const md = r['metadata'];
    if (md !== undefined && md !== null) {
      if (typeof md !== 'object' || Array.isArray(md)) throw new BadJson();
      const entries = Object.entries(md as Record<string, unknown>);
      if (entries.some(([, v]) => typeof v !== 'string')) throw new BadJson();
      if (entries.length > 0) cfg.metadata = md as Record<string, string>;
    }
    const pauseUntil = strField(r, 'pause_until');
    if (pauseUntil !== undefined) {
      const normalised = normalisePauseUntil(pauseUntil);
      if (normalised === null) throw new BadJson();
      if (normalised !== undefined) cfg.pause_until = normalised;
    }
    const groups = r['priority_groups'];
    if (groups !== undefined && groups !== null) {
      if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string')) throw new BadJson();
      if (groups.length > 0) cfg.priority_groups = groups as string[];
    }
    const policy = enumField(r, 'priority_policy', PRIORITY_POLICIES, 'none');
    if (policy !== 'none') cfg.priority_policy = policy as PriorityPolicy;
    // 2.14's defaults make a negative pinned TTL zero.
    const pinnedTtl = intField(r, 'priority_timeout');
    if (pinnedTtl !== undefined && pinnedTtl > 0) cfg.priority_timeout = pinnedTtl;
    return unsupportedConfigFieldError('consumer', r) ?? cfg;
  } catch (err) {
    if (err instanceof BadJson) return E.invalidJson();
    throw err;
  }
}

/**
 * The CONSUMER.CREATE request's own fields (beside `config`): unknown ones are "invalid JSON" as in 2.14
 * (`pedantic` is implemented: consumer-pedantic.ts). Null when the request may proceed.
 */
export function consumerRequestFieldError(body: Record<string, unknown>): ApiError | null {
  const unknown = firstUnknownField(body, CONSUMER_CREATE_REQUEST_FIELDS);
  if (unknown !== undefined) return JsErrors.unknownJsonField(unknown);
  return unsupportedConfigFieldError('consumer request', body);
}

function enumField(r: Record<string, unknown>, key: string, allowed: readonly string[], dflt: string): string {
  const v = r[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'string' || !allowed.includes(v)) throw new BadJson();
  return v;
}
function strField(r: Record<string, unknown>, key: string): string | undefined {
  const v = r[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BadJson();
  return v;
}
function intField(r: Record<string, unknown>, key: string): number | undefined {
  const v = r[key];
  if (v === undefined || v === null) return undefined;
  if (!isGoInt64(v)) throw new BadJson();
  return v;
}
function boolField(r: Record<string, unknown>, key: string): boolean {
  const v = r[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new BadJson();
  return v;
}
function setStr<K extends keyof ConsumerConfig>(cfg: ConsumerConfig, key: K, v: string | undefined): void {
  if (v !== undefined && v !== '') (cfg as unknown as Record<string, unknown>)[key] = v;
}
function setNum<K extends keyof ConsumerConfig>(cfg: ConsumerConfig, key: K, v: number | undefined): void {
  if (v !== undefined && v !== 0) (cfg as unknown as Record<string, unknown>)[key] = v;
}

const FIELD_ORDER: ReadonlyArray<keyof ConsumerConfig> = [
  'durable_name', 'name', 'description', 'deliver_policy', 'opt_start_seq', 'opt_start_time', 'ack_policy', 'ack_wait',
  'max_deliver', 'backoff', 'filter_subject', 'filter_subjects', 'replay_policy', 'rate_limit_bps', 'sample_freq',
  'max_waiting', 'max_ack_pending', 'idle_heartbeat', 'flow_control', 'headers_only', 'max_batch', 'max_expires',
  'max_bytes', 'deliver_subject', 'deliver_group', 'inactive_threshold', 'num_replicas', 'mem_storage', 'direct', 'metadata',
  'pause_until', 'priority_groups', 'priority_policy', 'priority_timeout',
];

/** The config with keys in nats-server's struct order (JSON reads like the reference captures). */
export function orderedConfig(cfg: ConsumerConfig): ConsumerConfig {
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) if (cfg[k] !== undefined) out[k] = cfg[k];
  return out as unknown as ConsumerConfig;
}

export function isPushConfig(cfg: ConsumerConfig): boolean {
  return cfg.deliver_subject !== undefined;
}

/** The consumer's filters: filter_subject or filter_subjects; empty = whole stream. */
export function consumerFilters(cfg: ConsumerConfig): string[] {
  if (cfg.filter_subject) return [cfg.filter_subject];
  return cfg.filter_subjects ?? [];
}

/** nats-server's setConsumerConfigDefaults; `accountMaxAckPending`: the account's limit (0 or less: none). */
export function applyConsumerDefaults(cfg: ConsumerConfig, stream: Readonly<StreamConfig>, accountMaxAckPending = -1): void {
  if (cfg.deliver_subject === undefined && !cfg.max_waiting) cfg.max_waiting = DEFAULT_MAX_WAITING;
  const acks = cfg.ack_policy === 'explicit' || cfg.ack_policy === 'all';
  if (!cfg.ack_wait && acks) cfg.ack_wait = DEFAULT_ACK_WAIT_NS;
  if (!cfg.max_deliver) cfg.max_deliver = -1;
  if (cfg.backoff && cfg.backoff.length > 0) cfg.ack_wait = cfg.backoff[0];
  if (!cfg.max_ack_pending && stream.consumer_limits?.max_ack_pending) cfg.max_ack_pending = stream.consumer_limits.max_ack_pending;
  if (!cfg.inactive_threshold && stream.consumer_limits?.inactive_threshold) {
    cfg.inactive_threshold = stream.consumer_limits.inactive_threshold;
  }
  if (acks && !cfg.max_ack_pending) {
    cfg.max_ack_pending = accountMaxAckPending > 0 && accountMaxAckPending < DEFAULT_MAX_ACK_PENDING ? accountMaxAckPending : DEFAULT_MAX_ACK_PENDING;
  }
  if (cfg.priority_policy === 'pinned_client' && !cfg.priority_timeout) cfg.priority_timeout = DEFAULT_PINNED_TTL_NS;
}

/** nats-server's checkConsumerCfg (single server); `accountMaxAckPending`: the account's limit (0 or less: none). */
export function checkConsumerConfig(cfg: ConsumerConfig, stream: Readonly<StreamConfig>, accountMaxAckPending = -1): ApiError | null {
  // Names become directory names: refused before anything touches the file system (nats-server 2.14's
  // isValidAssetName, plus NUL, which no file system takes).
  if (cfg.name !== undefined && cfg.name !== '' && !isValidAssetName(cfg.name)) return E.invalidName();
  if (cfg.durable_name !== undefined && cfg.durable_name !== '' && !isValidAssetName(cfg.durable_name)) return E.invalidDurableName();
  if (cfg.num_replicas > 0 && cfg.num_replicas > stream.num_replicas) return E.replicasExceedStream();
  if (cfg.num_replicas < 0) return E.replicasNegative();
  if ((stream.retention === 'interest' || stream.retention === 'workqueue') && cfg.num_replicas !== 0 && cfg.num_replicas !== stream.num_replicas) {
    return E.replicasMustMatchStream();
  }
  if (cfg.backoff && cfg.backoff.length > 0 && (cfg.max_deliver ?? -1) <= cfg.backoff.length) return E.maxDeliverBackoff();
  if (cfg.description && Buffer.byteLength(cfg.description) > MAX_DESCRIPTION_LEN) return E.descriptionTooLong(MAX_DESCRIPTION_LEN);
  if (cfg.deliver_subject !== undefined) {
    if (subjectHasWildcard(cfg.deliver_subject)) return E.deliverToWildcards();
    if (!isValidSubject(cfg.deliver_subject)) return E.invalidDeliverSubject();
    if (stream.subjects.some((s) => subjectsCollide(s, cfg.deliver_subject!))) return E.deliverCycle();
    if (cfg.max_waiting) return E.pushMaxWaiting();
    if ((cfg.max_ack_pending ?? 0) > 0 && cfg.ack_policy === 'none') return E.maxPendingAckPolicy();
    if (cfg.idle_heartbeat && cfg.idle_heartbeat > 0 && cfg.idle_heartbeat < 100_000_000) return E.smallHeartbeat();
  } else {
    if (cfg.ack_policy === 'none' && stream.retention === 'workqueue') return E.pullRequiresAck();
    if ((cfg.rate_limit_bps ?? 0) > 0) return E.pullWithRateLimit();
    if ((cfg.max_waiting ?? 0) < 0) return E.maxWaitingNegative();
    if ((cfg.idle_heartbeat ?? 0) > 0) return E.hbRequiresPush();
    if (cfg.flow_control) return E.fcRequiresPush();
    if ((cfg.max_batch ?? 0) < 0) return E.maxBatchNegative();
    if (cfg.max_expires && cfg.max_expires < 1_000_000) return E.maxExpiresTooSmall();
  }
  if (accountMaxAckPending > 0 && (cfg.max_ack_pending ?? 0) > accountMaxAckPending) return E.maxAckPendingExcess(accountMaxAckPending);
  const lim = stream.consumer_limits;
  if (lim?.max_ack_pending && lim.max_ack_pending > 0 && (cfg.max_ack_pending ?? 0) > lim.max_ack_pending) {
    return E.maxAckPendingExcess(lim.max_ack_pending);
  }
  if (lim?.inactive_threshold && lim.inactive_threshold > 0 && (cfg.inactive_threshold ?? 0) > lim.inactive_threshold) {
    return E.inactiveThresholdExcess(lim.inactive_threshold);
  }
  if (cfg.filter_subject && cfg.filter_subjects) return E.duplicateFilters();
  if (cfg.filter_subject && !isValidSubject(cfg.filter_subject)) return E.badSubject();
  for (const f of cfg.filter_subjects ?? []) if (f === '') return E.emptyFilter();
  const filters = consumerFilters(cfg);
  for (let i = 0; i < filters.length; i++) {
    if (!isValidSubject(filters[i]!)) return E.badSubject();
    for (let j = 0; j < filters.length; j++) {
      if (i !== j && subjectIsSubset(filters[i]!, filters[j]!)) return E.overlappingFilters();
    }
  }
  const policyError = checkStartPolicy(cfg);
  if (policyError) return policyError;
  if (cfg.sample_freq) {
    const n = Number(cfg.sample_freq.replace(/%$/, ''));
    if (!Number.isInteger(n) || n < 0) {
      return E.invalidSampling(`strconv.Atoi: parsing "${cfg.sample_freq.replace(/%$/, '')}": invalid syntax`);
    }
  }
  if (cfg.flow_control && !cfg.idle_heartbeat) return E.fcNeedsHeartbeats();
  if (cfg.durable_name && cfg.name && cfg.name !== cfg.durable_name) return E.durableAndNameMismatch();
  let metadataBytes = 0;
  for (const [k, v] of Object.entries(cfg.metadata ?? {})) metadataBytes += k.length + v.length;
  if (metadataBytes > MAX_METADATA_BYTES) return E.metadataTooLong();
  return priorityConfigError(cfg);
}

function checkStartPolicy(cfg: ConsumerConfig): ApiError | null {
  const badStart = (dp: string, start: string) =>
    E.invalidPolicy(`consumer delivery policy is deliver ${dp}, but optional start ${start} is also set`);
  const notSet = (dp: string, what: string) =>
    E.invalidPolicy(`consumer delivery policy is deliver ${dp}, but optional ${what} is not set`);
  const seq = cfg.opt_start_seq ?? 0;
  const time = cfg.opt_start_time !== undefined;
  switch (cfg.deliver_policy) {
    case 'all':
    case 'last':
    case 'new':
      if (seq > 0) return badStart(cfg.deliver_policy, 'sequence');
      if (time) return badStart(cfg.deliver_policy, 'time');
      return null;
    case 'last_per_subject':
      if (seq > 0) return badStart('last per subject', 'sequence');
      if (time) return badStart('last per subject', 'time');
      if (consumerFilters(cfg).length === 0) return notSet('last per subject', 'filter subject');
      return null;
    case 'by_start_sequence':
      if (seq === 0) return notSet('by start sequence', 'start sequence');
      if (time) return badStart('by start sequence', 'time');
      return null;
    case 'by_start_time':
      if (!time) return notSet('by start time', 'start time');
      if (seq !== 0) return badStart('by start time', 'start sequence');
      return null;
  }
}

/** Stream-level checks done when adding: filters inside the stream's subjects, name rules. */
export function checkConsumerName(name: string): ApiError | null {
  if (name.length > MAX_NAME_LEN) return E.nameTooLong(MAX_NAME_LEN);
  if (!isValidAssetName(name)) return E.badDurableName();
  return null;
}

/** A stream or consumer name: not empty; no whitespace, `.`, `*`, `>`, path separator or NUL. */
export function isValidAssetName(name: string): boolean {
  return name.length > 0 && !/[\s.*>\\/\0]/.test(name);
}

export function filtersWithinStream(cfg: ConsumerConfig, stream: Readonly<StreamConfig>): boolean {
  if (stream.mirror || stream.subjects.length === 0) return true;
  // 2.9's validFilteredSubject: the filter is inside a stream subject, or a wildcard covering one.
  return consumerFilters(cfg).every((f) =>
    stream.subjects.some((s) => subjectIsSubset(f, s) || (subjectHasWildcard(f) && subjectIsSubset(s, f))),
  );
}

/** nats-server's checkNewConsumerConfig: returns the reason an update is refused, or null. */
export function updateRefusal(cur: ConsumerConfig, next: ConsumerConfig, deliverSubjectBound: boolean): string | ApiError | null {
  if (configsEqual(cur, next)) return null;
  if (cur.deliver_policy !== next.deliver_policy) return 'deliver policy can not be updated';
  if ((cur.opt_start_seq ?? 0) !== (next.opt_start_seq ?? 0)) return 'start sequence can not be updated';
  if (cur.opt_start_time !== next.opt_start_time) return 'start time can not be updated';
  if (cur.ack_policy !== next.ack_policy) return 'ack policy can not be updated';
  if (cur.replay_policy !== next.replay_policy) return 'replay policy can not be updated';
  if ((cur.idle_heartbeat ?? 0) !== (next.idle_heartbeat ?? 0)) return 'heart beats can not be updated';
  if (!!cur.flow_control !== !!next.flow_control) return 'flow control can not be updated';
  if ((cur.max_waiting ?? 0) !== (next.max_waiting ?? 0)) return 'max waiting can not be updated';
  if (cur.deliver_subject !== next.deliver_subject) {
    if (cur.deliver_subject === undefined) return 'can not update pull consumer to push based';
    if (next.deliver_subject === undefined) return 'can not update push consumer to pull based';
    if (deliverSubjectBound) return E.nameExists();
  }
  if (next.backoff && next.backoff.length > 0 && (next.max_deliver ?? -1) <= next.backoff.length) return E.maxDeliverBackoff();
  return null;
}

export function configsEqual(a: ConsumerConfig, b: ConsumerConfig): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v as object)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
