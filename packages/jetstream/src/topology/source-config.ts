// The `mirror` and `sources` fields of a stream config, as nats-server 2.14 decodes (StreamSource,
// ExternalStream, SubjectTransformConfig) and checks them (checkStreamCfg, configUpdateCheck). Pure
// functions: they throw ApiError. Durable sourcing (`consumer`, 2.14) is refused by name.
import { isValidSubject, subjectIsSubsetOf, subjectsCollide } from '@flotilla/protocol';
import { JsErrors } from '../api/api-errors.js';
import type { ApiError } from '../api/api-error.js';
import { jsError } from '../api/js-error-table.js';
import { isGoInt64 } from '../api/request-body.js';
import type { StreamConfig, StreamSourceConfig } from '../stream/stream-config-types.js';
import { compileTransform } from './subject-transform.js';

type Json = Record<string, unknown>;

const SOURCE_FIELDS: ReadonlySet<string> = new Set([
  'name', 'opt_start_seq', 'opt_start_time', 'filter_subject', 'subject_transforms', 'external', 'consumer',
]);
const EXTERNAL_FIELDS: ReadonlySet<string> = new Set(['api', 'deliver']);
const TRANSFORM_FIELDS: ReadonlySet<string> = new Set(['src', 'dest']);

function invalid(): never {
  throw JsErrors.invalidJson();
}

function refuseUnknown(o: Json, known: ReadonlySet<string>): void {
  for (const key in o) if (!known.has(key)) throw JsErrors.unknownJsonField(key);
}

function str(o: Json, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') invalid();
  return v;
}

function obj(v: unknown): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) invalid();
  return v as Json;
}

/** One StreamSource as decoded, its empty (omitempty) fields dropped, in Go's field order. */
function parseOne(v: unknown, field: 'mirror' | 'sources'): StreamSourceConfig {
  const o = obj(v);
  refuseUnknown(o, SOURCE_FIELDS);
  const out: StreamSourceConfig = { name: str(o, 'name') ?? '' };
  const seq = o['opt_start_seq'];
  if (seq !== undefined && seq !== null) {
    if (!isGoInt64(seq) || seq < 0) invalid();
    if (seq > 0) out.opt_start_seq = seq;
  }
  const time = str(o, 'opt_start_time');
  if (time !== undefined) {
    if (Number.isNaN(Date.parse(time))) invalid();
    out.opt_start_time = time;
  }
  const filter = str(o, 'filter_subject');
  if (filter) out.filter_subject = filter;
  const trs = o['subject_transforms'];
  if (trs !== undefined && trs !== null) {
    if (!Array.isArray(trs)) invalid();
    const list = trs.map((t) => {
      const to = obj(t);
      refuseUnknown(to, TRANSFORM_FIELDS);
      return { src: str(to, 'src') ?? '', dest: str(to, 'dest') ?? '' };
    });
    if (list.length > 0) out.subject_transforms = list;
  }
  const ext = o['external'];
  if (ext !== undefined && ext !== null) {
    const eo = obj(ext);
    refuseUnknown(eo, EXTERNAL_FIELDS);
    out.external = { api: str(eo, 'api') ?? '', deliver: str(eo, 'deliver') ?? '' };
  }
  const consumer = o['consumer'];
  if (consumer !== undefined && consumer !== null) {
    obj(consumer);
    throw JsErrors.configFieldUnsupported('stream', `${field}.consumer`);
  }
  return out;
}

/** Types the request's `mirror` (undefined when absent). */
export function parseMirrorField(o: Json): StreamSourceConfig | undefined {
  const v = o['mirror'];
  return v === undefined || v === null ? undefined : parseOne(v, 'mirror');
}

/** Types the request's `sources` (undefined when absent or empty). */
export function parseSourcesField(o: Json): StreamSourceConfig[] | undefined {
  const v = o['sources'];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) invalid();
  const list = v.map((s) => {
    if (s === null) throw jsError('JSSourceInvalidStreamName');
    return parseOne(s, 'sources');
  });
  return list.length > 0 ? list : undefined;
}

/** nats-server's isValidAssetName. */
function isValidAssetName(name: string): boolean {
  return name.length > 0 && !/[\s.*>\\/\0]/.test(name);
}

/** nats-server's composeIName: `<name>[:<api hash>] <filter or >> <dest or >>` (transforms joined by \f). */
export function sourceIndexName(s: StreamSourceConfig, apiHash: (api: string) => string): string {
  let iname = s.name;
  if (s.external !== undefined) iname += ':' + apiHash(s.external.api);
  let source = s.filter_subject ?? '';
  let dest = '>';
  if (s.subject_transforms === undefined || s.subject_transforms.length === 0) {
    if (source === '') source = '>';
  } else {
    source = s.subject_transforms.map((t) => (t.src === '' ? '>' : t.src)).join('\f');
    dest = s.subject_transforms.map((t) => (t.dest === '' ? '>' : t.dest)).join('\f');
  }
  return `${iname} ${source} ${dest}`;
}

type TransformErrors = { filter: ApiError; destination: (err: string) => ApiError; source: (err: string) => ApiError };

function checkTransforms(s: StreamSourceConfig, errs: TransformErrors): void {
  const trs = s.subject_transforms ?? [];
  if (s.filter_subject !== undefined && trs.length > 0) throw errs.filter;
  for (const t of trs) {
    if (t.src !== '' && !isValidSubject(t.src)) throw errs.source(`invalid subject ${t.src}`);
    const compiled = compileTransform(t);
    if ('kind' in compiled) throw errs.destination(compiled.text);
  }
}

/** Name-free hash of an external API prefix, for index names (nats-server getHash: 8 chars of sha256, base64url). */
export type ApiHash = (api: string) => string;

/**
 * checkStreamCfg's mirror and sources rules, in its order, on the request (before defaults). `subjects` is
 * the request's own list (a mirror may not have one; a stream with a mirror or sources gets no default).
 */
export function checkTopologyConfig(req: Partial<StreamConfig>, apiHash: ApiHash): void {
  const m = req.mirror;
  if (m !== undefined) {
    if ((req.first_seq ?? 0) > 0) throw jsError('JSMirrorWithFirstSeqErr');
    if (req.subjects !== undefined && req.subjects.length > 0) throw jsError('JSMirrorWithSubjectsErr');
    if (req.sources !== undefined && req.sources.length > 0) throw jsError('JSMirrorWithSourcesErr');
    checkTransforms(
      m,
      {
        filter: jsError('JSMirrorMultipleFiltersNotAllowed'),
        source: (err) => jsError('JSMirrorInvalidSubjectFilter', { err }),
        destination: (err) => jsError('JSMirrorInvalidTransformDestination', { err }),
      },
    );
    const trs = m.subject_transforms ?? [];
    for (let i = 0; i < trs.length; i++) {
      for (let j = 0; j < trs.length; j++) {
        if (i !== j && subjectsCollide(trs[i]!.src || '>', trs[j]!.src || '>')) throw jsError('JSMirrorOverlappingSubjectFilters');
      }
    }
    if (m.external === undefined && !isValidAssetName(m.name)) throw jsError('JSMirrorInvalidStreamName');
    if (m.filter_subject !== undefined && !isValidSubject(m.filter_subject)) {
      throw JsErrors.streamInvalidConfig(`subject filter '${m.filter_subject}' for the mirror invalid subject`);
    }
  }
  const seen = new Set<string>();
  for (const s of req.sources ?? []) {
    if (!isValidAssetName(s.name)) throw jsError('JSSourceInvalidStreamName');
    const iname = sourceIndexName(s, apiHash);
    if (seen.has(iname)) throw jsError('JSSourceDuplicateDetected');
    seen.add(iname);
    checkTransforms(
      s,
      {
        filter: jsError('JSSourceMultipleFiltersNotAllowed'),
        source: (err) => jsError('JSSourceInvalidSubjectFilter', { err }),
        destination: (err) => jsError('JSSourceInvalidTransformDestination', { err }),
      },
    );
    const trs = s.subject_transforms ?? [];
    for (let i = 0; i < trs.length; i++) {
      for (let j = 0; j < trs.length; j++) {
        if (i !== j && subjectIsSubsetOf(trs[i]!.src || '>', trs[j]!.src || '>')) throw jsError('JSSourceOverlappingSubjectFilters');
      }
    }
    if (s.filter_subject !== undefined && !isValidSubject(s.filter_subject)) {
      throw JsErrors.streamInvalidConfig(`subject filter '${s.filter_subject}' for the source invalid subject`);
    }
  }
}

/** configUpdateCheck: a mirror's config may only be removed (promoting the mirror), never changed or added. */
export function checkTopologyUpdate(old: StreamConfig, next: StreamConfig): void {
  if (next.mirror !== undefined && JSON.stringify(next.mirror) !== JSON.stringify(old.mirror)) {
    throw jsError('JSStreamMirrorNotUpdatableErr');
  }
}
