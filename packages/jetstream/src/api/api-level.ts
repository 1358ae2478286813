// JetStream versioning (ADR-44, nats-server 2.14's jetstream_versioning.go): the API level this server
// implements, the `Nats-Required-Api-Level` check of `$JS.API` requests, and the server-set `_nats.*`
// metadata of streams and consumers.
//
// The level is an honest one: 1 is nats-server 2.11's, and every stream and consumer feature that needs level 1
// is implemented (per-message TTL, subject delete markers, consumer pause, priority groups). Level 2 is 2.12's
// counters, atomic batches, schedules and async persist (issue 20, being built); 4 is 2.14's fast batch and
// flow-control acks. The level rises only when every feature requiring it is in (docs/compatibility.md).
//
// Metadata, as 2.14 keeps it: `_nats.req.level` (the level a stream or consumer needs) is computed on every
// create, update and pause and stored with the config, replacing whatever the client sent; `_nats.ver` and
// `_nats.level` (this server's version and level) are dynamic: stripped from what is stored, added to every
// config a response carries.
import { decodeHeaders } from '@flotilla/protocol';
import type { ApiError } from './api-error.js';
import { JsErrors } from './api-errors.js';

/** The JetStream API level Flotilla implements (nats-server 2.11's). */
export const JS_API_LEVEL = 2;

/**
 * The nats-server release Flotilla reports (INFO, /varz, `_nats.ver`): the newest one whose client-visible
 * features are all implemented (docs/compatibility.md; test/compatibility-table.test.ts pins the two together).
 * Clients gate features on it (nats.js turns on consumer names, direct get, filter_subjects … by version).
 */
export const ADVERTISED_NATS_VERSION = '2.11.0';

export const REQUIRED_LEVEL_KEY = '_nats.req.level';
export const SERVER_VERSION_KEY = '_nats.ver';
export const SERVER_LEVEL_KEY = '_nats.level';

type Metadata = Record<string, string>;

/** The level a stream config needs (setStaticStreamMetadata); reads fields other branches add by name. */
export function requiredStreamLevel(cfg: object): number {
  const c = cfg as Record<string, unknown>;
  let level = 0;
  if (c['allow_msg_ttl'] === true || (typeof c['subject_delete_marker_ttl'] === 'number' && c['subject_delete_marker_ttl'] > 0)) level = 1;
  if (c['allow_msg_counter'] === true || c['allow_atomic'] === true || c['allow_msg_schedules'] === true || c['persist_mode'] === 'async') {
    level = 2;
  }
  if (c['allow_batched'] === true) level = 4;
  return level;
}

/** The level a consumer config needs (setStaticConsumerMetadata). */
export function requiredConsumerLevel(cfg: object): number {
  const c = cfg as Record<string, unknown>;
  let level = 0;
  const pause = c['pause_until'];
  if (typeof pause === 'string' && pause !== '' && !pause.startsWith('0001-01-01T00:00:00')) level = 1;
  const policy = c['priority_policy'];
  const groups = c['priority_groups'];
  if ((typeof policy === 'string' && policy !== '' && policy !== 'none') || (typeof c['priority_timeout'] === 'number' && c['priority_timeout'] !== 0) || (Array.isArray(groups) && groups.length > 0)) {
    level = Math.max(level, 1);
  }
  if (c['ack_policy'] === 'flow_control') level = 4;
  return level;
}

/** The metadata to store: the client's without the dynamic keys, with `_nats.req.level` set to `level`. */
export function staticMetadata(metadata: Metadata | undefined, level: number): Metadata {
  const out: Metadata = {};
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (k !== SERVER_VERSION_KEY && k !== SERVER_LEVEL_KEY) out[k] = v;
  }
  out[REQUIRED_LEVEL_KEY] = String(level);
  return out;
}

/** The metadata a response shows: the stored keys plus this server's version and level. */
export function dynamicMetadata(metadata: Metadata | undefined): Metadata {
  return { ...(metadata ?? {}), [SERVER_VERSION_KEY]: ADVERTISED_NATS_VERSION, [SERVER_LEVEL_KEY]: String(JS_API_LEVEL) };
}

/**
 * `next`'s metadata with `_nats.req.level` as `prev` has it (or without it when `prev` has none): 2.14's
 * copy*Metadata, so "is it the same config" ignores a level an older release stored differently.
 */
export function withLevelOf<T extends { metadata?: Metadata }>(next: T, prev: { metadata?: Metadata }): T {
  const md: Metadata = { ...(next.metadata ?? {}) };
  delete md[SERVER_VERSION_KEY];
  delete md[SERVER_LEVEL_KEY];
  const prevLevel = prev.metadata?.[REQUIRED_LEVEL_KEY];
  if (prevLevel !== undefined) md[REQUIRED_LEVEL_KEY] = prevLevel;
  else delete md[REQUIRED_LEVEL_KEY];
  const out = { ...next };
  if (Object.keys(md).length > 0) out.metadata = md;
  else delete out.metadata;
  return out;
}

/** Go's strconv.Atoi. */
const GO_ATOI = /^[+-]?[0-9]+$/;

/**
 * 2.14's errorOnRequiredApiLevel for a `$JS.API` request's header block: a `Nats-Required-Api-Level` above
 * ours, or not an integer, is 412 / 10185. Null when the request may proceed (no header, or a level we have).
 */
export function requiredApiLevelError(header: Uint8Array | null): ApiError | null {
  if (header === null || header.length === 0) return null;
  let level: string | undefined;
  try {
    level = decodeHeaders(header).entries.find(([k]) => k === 'Nats-Required-Api-Level')?.[1];
  } catch {
    return null;
  }
  if (level === undefined || level === '') return null;
  return !GO_ATOI.test(level) || Number.parseInt(level, 10) > JS_API_LEVEL ? JsErrors.requiredApiLevel() : null;
}
