// The subject transforms of a mirror or source (`subject_transforms: [{ src, dest }]`) and of a stream
// (`subject_transform`), compiled by protocol's SubjectTransform (nats-server's, every mapping function) and
// checked as checkStreamCfg does: the source a valid subject, the destination through ValidateMapping.
import { isValidSubject, SubjectTransform, SubjectTransformError, validateMapping } from '@flotilla/protocol';

export interface SubjectTransformConfig {
  src: string;
  dest: string;
}

/** Why a transform was refused, as nats-server words it (the `{err}` of its 1014x/1015x errors). */
export type TransformProblem = { kind: 'bad source'; text: string } | { kind: 'bad destination'; text: string };

export interface CompiledTransform {
  readonly src: string;
  readonly dest: string;
  /** The transformed subject, or null when `subject` does not match `src`. */
  apply(subject: string): string | null;
}

const IDENTITY = (src: string, dest: string): CompiledTransform => ({ src, dest, apply: (subject) => subject });

/** Compiles one transform, or says why nats-server refuses it. */
export function compileTransform(cfg: SubjectTransformConfig): CompiledTransform | TransformProblem {
  const src = cfg.src === '' ? '>' : cfg.src;
  const dest = cfg.dest === '' ? '>' : cfg.dest;
  if (!isValidSubject(src)) return { kind: 'bad source', text: `invalid subject ${src}` };
  try {
    validateMapping(src, cfg.dest);
    const t = SubjectTransform.compile(src, dest);
    if (t === null) return IDENTITY(src, dest);
    return { src, dest, apply: (subject) => t.match(subject) };
  } catch (err) {
    if (err instanceof SubjectTransformError) return { kind: 'bad destination', text: err.message };
    throw err;
  }
}

/** The first transform that matches rewrites the subject; none matching keeps it (nats-server's loop). */
export function transformSubject(transforms: readonly CompiledTransform[], subject: string): string {
  for (const t of transforms) {
    const out = t.apply(subject);
    if (out !== null) return out;
  }
  return subject;
}
