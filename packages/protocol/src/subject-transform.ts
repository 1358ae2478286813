// nats-server's subject transform (server/subject_transform.go, 2.14): one `src` filter and one `dest`
// template whose tokens are literals, `$N`, a trailing `>`, or a mustache function — wildcard(N),
// partition(n, N...), splitFromLeft(N, pos), splitFromRight(N, pos), sliceFromLeft(N, size),
// sliceFromRight(N, size), split(N, delim), left(N, len), right(N, len), random(n). Core subject mappings,
// the stream's `subject_transform` and mirror/source `subject_transforms` all compile through here, so the
// three accept, refuse and rewrite exactly alike. Error texts are nats-server's (errors.go), since they reach
// clients inside JetStream API errors and operators in start-up errors.

export type TransformErrorKind =
  | 'bad subject'
  | 'invalid transform'
  | 'not using all wildcards'
  | 'unknown function'
  | 'index out of range'
  | 'not enough arguments'
  | 'invalid argument'
  | 'too many arguments'
  | 'not supported for import';

const KIND_TEXT: Record<TransformErrorKind, string> = {
  'bad subject': 'invalid subject',
  'invalid transform': 'invalid mapping destination: invalid transform',
  'not using all wildcards': 'invalid mapping destination: not using all of the token wildcard(s)',
  'unknown function': 'invalid mapping destination: unknown function',
  'index out of range': 'invalid mapping destination: wildcard index out of range',
  'not enough arguments': 'invalid mapping destination: not enough arguments passed to the function',
  'invalid argument': 'invalid mapping destination: function argument is invalid or in the wrong format',
  'too many arguments': 'invalid mapping destination: too many arguments passed to the function',
  'not supported for import': 'invalid mapping destination: the only mapping function allowed for import transforms is {{Wildcard()}}',
};

/** A refused transform; `message` is nats-server's text (`<reason> in <token>` when a token is named). */
export class SubjectTransformError extends Error {
  constructor(
    readonly kind: TransformErrorKind,
    readonly token = '',
  ) {
    super(token === '' ? KIND_TEXT[kind] : `${KIND_TEXT[kind]} in ${token}`);
    this.name = 'SubjectTransformError';
  }
}

type FnKind = 'partition' | 'wildcard' | 'splitFromLeft' | 'splitFromRight' | 'sliceFromLeft' | 'sliceFromRight' | 'split' | 'left' | 'right' | 'random';

/** One destination token, compiled. `at`: positions in the source subject the function reads. */
type DestToken = { fn: 'literal'; text: string } | { fn: FnKind; at: number[]; n: number; text: string };

// nats-server's regexes, unanchored and in its order of trial (a token starting `{{` and ending `}}`).
const FUNCTIONS: readonly (readonly [FnKind, RegExp])[] = [
  ['wildcard', /\{\{\s*[wW]ildcard\s*\((.*)\)\s*\}\}/],
  ['partition', /\{\{\s*[pP]artition\s*\((.*)\)\s*\}\}/],
  ['splitFromLeft', /\{\{\s*[sS]plit[fF]rom[lL]eft\s*\((.*)\)\s*\}\}/],
  ['splitFromRight', /\{\{\s*[sS]plit[fF]rom[rR]ight\s*\((.*)\)\s*\}\}/],
  ['sliceFromLeft', /\{\{\s*[sS]lice[fF]rom[lL]eft\s*\((.*)\)\s*\}\}/],
  ['sliceFromRight', /\{\{\s*[sS]lice[fF]rom[rR]ight\s*\((.*)\)\s*\}\}/],
  ['right', /\{\{\s*[rR]ight\s*\((.*)\)\s*\}\}/],
  ['left', /\{\{\s*[lL]eft\s*\((.*)\)\s*\}\}/],
  ['split', /\{\{\s*[sS]plit\s*\((.*)\)\s*\}\}/],
  ['random', /\{\{\s*[rR]andom\s*\((.*)\)\s*\}\}/],
];
// ValidateMapping (sublist.go) accepts only these; 2.14.5 leaves left/right out, so they are refused as
// "unknown function" by every config path even though the transform itself could apply them.
const VALIDATED: ReadonlySet<FnKind> = new Set(['partition', 'wildcard', 'splitFromLeft', 'splitFromRight', 'sliceFromLeft', 'sliceFromRight', 'split', 'random']);

const INT32_MAX = 2147483647;

/** Go's strconv.Atoi: optional sign, decimal digits, nothing else. */
function atoi(s: string): number | null {
  if (!/^[+-]?\d+$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}

function isMustache(t: string): boolean {
  return t.length > 4 && t.startsWith('{{') && t.endsWith('}}');
}

function functionArgs(re: RegExp, token: string): string[] | null {
  const m = re.exec(token);
  return m === null ? null : m[1]!.split(/,\s*/);
}

interface Placeholder {
  fn: FnKind | 'literal';
  wildcards: number[]; // 1-based wildcard indexes the function reads
  n: number;
  text: string;
}

/** indexPlaceHolders: what one destination token is. */
function placeholder(token: string): Placeholder {
  const literal: Placeholder = { fn: 'literal', wildcards: [], n: -1, text: '' };
  if (token.length <= 1) return literal;
  if (token[0] === '$') {
    const i = atoi(token.slice(1));
    // Other features rely on literal tokens starting with `$`: not a number means a literal.
    return i === null ? literal : { fn: 'wildcard', wildcards: [i], n: -1, text: '' };
  }
  if (!isMustache(token)) return literal;
  for (const [fn, re] of FUNCTIONS) {
    const args = functionArgs(re, token);
    if (args === null) continue;
    const trimmed = args.map((a) => a.replace(/^ +| +$/g, ''));
    switch (fn) {
      case 'wildcard': {
        if (args.length === 1 && args[0] === '') throw new SubjectTransformError('not enough arguments', token);
        if (args.length !== 1) throw new SubjectTransformError('too many arguments', token);
        const i = atoi(trimmed[0]!);
        if (i === null) throw new SubjectTransformError('invalid argument', token);
        return { fn, wildcards: [i], n: -1, text: '' };
      }
      case 'partition': {
        const n = atoi(trimmed[0]!);
        if (n === null || n > INT32_MAX) throw new SubjectTransformError('invalid argument', token);
        const wildcards = trimmed.slice(1).map((a) => {
          const i = atoi(a);
          if (i === null) throw new SubjectTransformError('invalid argument', token);
          return i;
        });
        return { fn, wildcards, n, text: '' };
      }
      case 'split': {
        if (args.length < 2) throw new SubjectTransformError('not enough arguments', token);
        if (args.length > 2) throw new SubjectTransformError('too many arguments', token);
        const i = atoi(trimmed[0]!);
        if (i === null || args[1]!.includes(' ') || args[1]!.includes('.')) throw new SubjectTransformError('invalid argument', token);
        return { fn, wildcards: [i], n: -1, text: args[1]! };
      }
      case 'random': {
        if (args.length !== 1) throw new SubjectTransformError('not enough arguments', token);
        const n = atoi(trimmed[0]!);
        if (n === null || n > INT32_MAX) throw new SubjectTransformError('invalid argument', token);
        return { fn, wildcards: [], n, text: '' };
      }
      default: {
        // (wildcard index, int32)
        if (args.length < 2) throw new SubjectTransformError('not enough arguments', token);
        if (args.length > 2) throw new SubjectTransformError('too many arguments', token);
        const i = atoi(trimmed[0]!);
        const n = atoi(trimmed[1]!);
        if (i === null || n === null || n > INT32_MAX || n < -INT32_MAX - 1) throw new SubjectTransformError('invalid argument', token);
        return { fn, wildcards: [i], n, text: '' };
      }
    }
  }
  throw new SubjectTransformError('unknown function', token);
}

/** subjectInfo: valid (no empty token, nothing after `>`), tokens, number of `*`, ends in `>`. */
function subjectInfo(subject: string): { valid: boolean; tokens: string[]; stars: number; rest: boolean } {
  const tokens = subject.split('.');
  let stars = 0;
  let rest = false;
  for (const t of tokens) {
    if (t.length === 0 || rest) return { valid: false, tokens, stars, rest };
    if (t === '>') rest = true;
    else if (t === '*') stars++;
  }
  return { valid: subject.length > 0, tokens, stars, rest };
}

/** Go's hash/fnv New32a over the bytes of `text`. */
export function fnv1a32(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
  return h >>> 0;
}

export interface SubjectTransformOptions {
  /** Import transforms: only wildcard placement, and every `*` of the source used. */
  strict?: boolean;
  /** 0 <= x < 1, for `{{random(n)}}`; Math.random by default. */
  random?: () => number;
}

export class SubjectTransform {
  private constructor(
    readonly src: string,
    readonly dest: string,
    private readonly srcTokenCount: number,
    private readonly tokens: readonly DestToken[],
    private readonly endsInRest: boolean,
    private readonly random: () => number,
  ) {}

  /**
   * NewSubjectTransform: compiles `src` → `dest` (an empty `src` is `>`), or throws SubjectTransformError.
   * Null for an empty `dest` (no transform). Does not run ValidateMapping's extra checks (validateMapping).
   */
  static compile(src: string, dest: string, opts: SubjectTransformOptions = {}): SubjectTransform | null {
    if (dest === '') return null;
    if (src === '') src = '>';
    const s = subjectInfo(src);
    const d = subjectInfo(dest);
    if (!s.valid || !d.valid || d.stars > 0 || s.rest !== d.rest) throw new SubjectTransformError('bad subject');
    // 1-based index of each `*` → its position among the source tokens.
    const starAt: number[] = [];
    s.tokens.forEach((t, i) => t === '*' && starAt.push(i));
    const out: DestToken[] = [];
    let placed = 0;
    for (const token of d.tokens) {
      const p = placeholder(token);
      if (p.fn === 'literal') {
        out.push({ fn: 'literal', text: token });
        continue;
      }
      if (s.stars === 0 && !s.rest) {
        // No wildcard in the source: only functions that read no source token.
        if (p.fn !== 'random' && p.fn !== 'partition') throw new SubjectTransformError('index out of range', token);
        out.push({ fn: p.fn, at: [], n: p.n, text: '' });
        continue;
      }
      if (opts.strict === true && p.fn !== 'wildcard') throw new SubjectTransformError('not supported for import', token);
      if (p.fn === 'random') {
        out.push({ fn: p.fn, at: [], n: p.n, text: '' });
        continue;
      }
      placed += p.wildcards.length;
      const at = p.wildcards.map((w) => {
        if (w > s.stars) throw new SubjectTransformError('index out of range', `${token}: [${w}]`);
        // nats-server reads a missing index (0 or negative) as the first token.
        return w >= 1 ? starAt[w - 1]! : 0;
      });
      out.push({ fn: p.fn, at, n: p.n, text: p.text });
    }
    if (opts.strict === true && placed < s.stars) throw new SubjectTransformError('not using all wildcards', dest);
    return new SubjectTransform(src, dest, s.tokens.length, out, d.rest, opts.random ?? Math.random);
  }

  /** The transformed subject, or null when the literal `subject` does not match `src` (Match). */
  match(subject: string): string | null {
    if (this.src === '>' && this.dest === '>') return subject;
    const tokens = subject.split('.');
    for (const t of tokens) if (t.length === 0 || t === '*' || t === '>') return null;
    if (this.src !== '>' && !matchesTokens(tokens, this.src)) return null;
    return this.transformTokens(tokens);
  }

  /** TransformTokenizedSubject: `tokens` already matched `src`. */
  transformTokens(tokens: readonly string[]): string {
    const parts: string[] = [];
    for (const t of this.tokens) {
      if (t.fn === 'literal') {
        if (t.text === '>') break;
        parts.push(t.text);
        continue;
      }
      const tok = tokens[t.at[0] ?? 0] ?? '';
      switch (t.fn) {
        case 'wildcard':
          parts.push(t.at.length > 0 ? (tokens[t.at[0]!] ?? '') : '');
          break;
        case 'partition': {
          const key = t.at.length > 0 ? t.at.map((i) => tokens[i] ?? '').join('') : tokens.join('.');
          const buckets = t.n >>> 0;
          parts.push(buckets === 0 ? '0' : String(fnv1a32(key) % buckets));
          break;
        }
        case 'random':
          parts.push(t.n === 0 ? '0' : String(Math.floor(this.random() * INT32_MAX) % t.n));
          break;
        case 'splitFromLeft':
          parts.push(t.n > 0 && t.n < tok.length ? `${tok.slice(0, t.n)}.${tok.slice(t.n)}` : tok);
          break;
        case 'splitFromRight':
          parts.push(t.n > 0 && t.n < tok.length ? `${tok.slice(0, tok.length - t.n)}.${tok.slice(tok.length - t.n)}` : tok);
          break;
        case 'sliceFromLeft':
          parts.push(t.n > 0 && t.n < tok.length ? chunks(tok, 0, t.n).join('.') : tok);
          break;
        case 'sliceFromRight': {
          if (t.n > 0 && t.n < tok.length) {
            const head = tok.length % t.n;
            parts.push([...(head > 0 ? [tok.slice(0, head)] : []), ...chunks(tok, head, t.n)].join('.'));
          } else parts.push(tok);
          break;
        }
        case 'split':
          parts.push(splitToken(tok, t.text));
          break;
        case 'left':
          parts.push(t.n > 0 && t.n < tok.length ? tok.slice(0, t.n) : tok);
          break;
        case 'right':
          parts.push(t.n > 0 && t.n < tok.length ? tok.slice(tok.length - t.n) : tok);
          break;
      }
    }
    if (this.endsInRest) parts.push(tokens.slice(this.srcTokenCount - 1).join('.'));
    return parts.join('.');
  }
}

/** split(N, delim) as nats-server writes it: empty pieces dropped, a separator only before a non-empty one. */
function splitToken(tok: string, delim: string): string {
  const pieces = tok.split(delim);
  let out = '';
  for (let j = 0; j < pieces.length; j++) {
    const p = pieces[j]!;
    out += p;
    if (j < pieces.length - 1 && pieces[j + 1] !== '' && !(j === 0 && p === '')) out += '.';
  }
  return out;
}

/** `size`-long pieces from `from`, the last one shorter when the length does not divide. */
function chunks(tok: string, from: number, size: number): string[] {
  const out: string[] = [];
  for (let i = from; i < tok.length; i += size) out.push(tok.slice(i, i + size));
  return out;
}

function matchesTokens(tokens: readonly string[], filter: string): boolean {
  const f = filter.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return tokens.length > i;
    if (i >= tokens.length) return false;
    if (f[i] !== '*' && f[i] !== tokens[i]) return false;
  }
  return tokens.length === f.length;
}

/**
 * ValidateMapping (sublist.go): the check every config path runs on a destination before compiling it —
 * no empty token or token after `>`, only known functions, no whitespace — then the compile itself.
 */
export function validateMapping(src: string, dest: string): void {
  if (dest === '') return;
  let rest = false;
  for (const t of dest.split('.')) {
    if (t.length === 0 || rest) throw new SubjectTransformError('invalid transform', t);
    if (isMustache(t)) {
      if (!FUNCTIONS.some(([fn, re]) => VALIDATED.has(fn) && re.test(t))) throw new SubjectTransformError('unknown function', t);
      continue;
    }
    if (t === '>') rest = true;
    else if (/[\t\n\f\r ]/.test(t)) throw new SubjectTransformError('invalid transform');
  }
  SubjectTransform.compile(src, dest);
}
