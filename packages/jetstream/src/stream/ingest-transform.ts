// A stream's own `subject_transform { src, dest }` (2.10): a message published on one of the stream's
// subjects, or sourced into it, is stored under the transformed subject when it matches `src` (unchanged
// otherwise), as nats-server's processJetStreamMsg applies mset.itr before any other rule.
import { isValidSubject } from '@flotilla/protocol';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { compileTransform, type CompiledTransform } from '../topology/subject-transform.js';
import type { StreamConfig } from './stream-config-types.js';

type Json = Record<string, unknown>;

const FIELDS: ReadonlySet<string> = new Set(['src', 'dest']);

function str(o: Json, key: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw JsErrors.invalidJson();
  return v;
}

/** The decoded `subject_transform` field (Go's SubjectTransformConfig), or undefined when absent. */
export function parseSubjectTransformField(o: Json): StreamConfig['subject_transform'] {
  const v = o['subject_transform'];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw JsErrors.invalidJson();
  const t = v as Json;
  for (const key in t) if (!FIELDS.has(key)) throw JsErrors.unknownJsonField(key);
  return { src: str(t, 'src'), dest: str(t, 'dest') };
}

/** checkStreamCfg's subject transform rules: the source a valid subject, the destination a valid mapping. */
export function checkSubjectTransform(t: StreamConfig['subject_transform']): void {
  if (t === undefined) return;
  if (t.src !== '' && !isValidSubject(t.src)) throw jsError('JSStreamTransformInvalidSource', { err: `invalid subject ${t.src}` });
  const compiled = compileTransform(t);
  if ('kind' in compiled) throw jsError('JSStreamTransformInvalidDestination', { err: compiled.text });
}

/** The stream's ingest transform, or null when it has none (an empty `dest` transforms nothing). */
export function ingestTransform(cfg: Readonly<StreamConfig>): CompiledTransform | null {
  const t = cfg.subject_transform;
  if (t === undefined || t.dest === '') return null;
  const compiled = compileTransform(t);
  return 'kind' in compiled ? null : compiled;
}
