// A subject transform of a mirror or source (`subject_transforms: [{ src, dest }]`), as nats-server's
// NewSubjectTransform applies it: `src` is a filter (wildcards allowed), `dest` a subject whose `$N` /
// `{{wildcard(N)}}` tokens take the N-th wildcard token of the matched subject and whose trailing `>` takes
// what the source's `>` matched. The other mapping functions (partition, split, slice…) belong to issue 19
// item 4 and are refused by name rather than applied wrongly.
import { isValidSubject, subjectMatchesFilter } from '@flotilla/protocol';

export interface SubjectTransformConfig {
  src: string;
  dest: string;
}

/** Why a transform was refused; `unsupported` names a mapping function Flotilla does not apply yet. */
export type TransformProblem = { kind: 'bad source'; text: string } | { kind: 'bad destination'; text: string } | { kind: 'unsupported'; fn: string };

type DestToken = { kind: 'literal'; text: string } | { kind: 'wildcard'; index: number } | { kind: 'rest' };

export interface CompiledTransform {
  readonly src: string;
  readonly dest: string;
  /** The transformed subject, or null when `subject` does not match `src`. */
  apply(subject: string): string | null;
}

const WILDCARD_FN = /^\{\{\s*wildcard\s*\(\s*(\d+)\s*\)\s*\}\}$/i;
const ANY_FN = /^\{\{\s*(\w+)\s*\(/;

/** Compiles one transform, or says why nats-server (or Flotilla, for now) refuses it. */
export function compileTransform(cfg: SubjectTransformConfig): CompiledTransform | TransformProblem {
  const src = cfg.src === '' ? '>' : cfg.src;
  const dest = cfg.dest === '' ? '>' : cfg.dest;
  if (!isValidSubject(src)) return { kind: 'bad source', text: `invalid subject ${src}` };
  const srcTokens = src.split('.');
  // Positions of the source's `*` tokens: `$1` is the first of them.
  const starPositions: number[] = [];
  srcTokens.forEach((t, i) => t === '*' && starPositions.push(i));
  const srcHasRest = srcTokens[srcTokens.length - 1] === '>';
  const tokens: DestToken[] = [];
  const destTokens = dest.split('.');
  for (let i = 0; i < destTokens.length; i++) {
    const t = destTokens[i]!;
    let index = -1;
    if (/^\$\d+$/.test(t)) index = Number(t.slice(1));
    else {
      const m = WILDCARD_FN.exec(t);
      if (m !== null) index = Number(m[1]);
      else {
        const fn = ANY_FN.exec(t);
        if (fn !== null) return { kind: 'unsupported', fn: fn[1]! };
      }
    }
    if (index >= 0) {
      if (index < 1 || index > starPositions.length) return { kind: 'bad destination', text: `invalid mapping destination: wildcard index out of range in ${dest}` };
      tokens.push({ kind: 'wildcard', index });
    } else if (t === '>') {
      if (i !== destTokens.length - 1 || !srcHasRest) return { kind: 'bad destination', text: `invalid mapping destination: ${dest}` };
      tokens.push({ kind: 'rest' });
    } else if (t === '*' || t.length === 0) {
      return { kind: 'bad destination', text: `invalid mapping destination: ${dest}` };
    } else tokens.push({ kind: 'literal', text: t });
  }
  if (!isValidSubject(dest.replace(/\{\{[^}]*\}\}/g, 'x'))) return { kind: 'bad destination', text: `invalid mapping destination: ${dest}` };
  const restFrom = srcTokens.length - 1;
  return {
    src,
    dest,
    apply(subject: string): string | null {
      if (!subjectMatchesFilter(subject, src)) return null;
      const parts = subject.split('.');
      const out: string[] = [];
      for (const tok of tokens) {
        if (tok.kind === 'literal') out.push(tok.text);
        else if (tok.kind === 'wildcard') out.push(parts[starPositions[tok.index - 1]!]!);
        else out.push(parts.slice(restFrom).join('.'));
      }
      return out.join('.');
    },
  };
}

/** The first transform that matches rewrites the subject; none matching keeps it (nats-server's loop). */
export function transformSubject(transforms: readonly CompiledTransform[], subject: string): string {
  for (const t of transforms) {
    const out = t.apply(subject);
    if (out !== null) return out;
  }
  return subject;
}
