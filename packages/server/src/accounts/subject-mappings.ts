// An account's subject mappings (`mappings {}`, top level for the global account): a client's publish on a
// matching subject is delivered on the destination instead, chosen by weight when there are several, before
// permissions and routing see it (nats-server maps in its parser). The first mapping in config order whose
// source matches wins. Destinations use `$N` / `{{wildcard(N)}}` and `{{partition(n, N...)}}`; nats-server's
// other transform functions and cluster-scoped destinations are refused by name at start (compileMapping).
import { Sublist } from '@flotilla/protocol';

export interface MappingDestinationOptions {
  subject: string;
  /** 1..100; the destinations of one source total at most 100 (the rest keeps the original subject). */
  weightPct: number;
}

export interface MappingOptions {
  source: string;
  destinations: MappingDestinationOptions[];
}

/** A token of a destination: literal text, a source token, or a hash partition over source tokens. */
type DestToken =
  | { kind: 'literal'; text: string }
  | { kind: 'wildcard'; sourceAt: number }
  | { kind: 'partition'; buckets: number; sourceAt: number[] }
  | { kind: 'rest' };

interface CompiledDestination {
  tokens: DestToken[] | null; // null: the destination is literal (no source token used)
  subject: string;
  /** Cumulative weight bound: chosen when the draw (0..99) is below it. */
  upToPct: number;
}

interface CompiledMapping {
  readonly subject: string; // the source, as a Sublist entry
  readonly queue: null;
  order: number;
  source: string;
  sourceTokens: number;
  destinations: CompiledDestination[];
}

const FUNCTION = /^\{\{\s*([A-Za-z]+)\s*\((.*)\)\s*\}\}$/;
const LEGACY_WILDCARD = /^\$(\d+)$/;

/** Why a mapping cannot be used, or null. Reasons are the server's start error. */
export function mappingProblem(m: MappingOptions): string | null {
  try {
    compile(m, 0);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function validSubject(s: string): boolean {
  if (s.length === 0 || /\s/.test(s)) return false;
  const tokens = s.split('.');
  return tokens.every((t, i) => t.length > 0 && (t !== '>' || i === tokens.length - 1));
}

function compileDestination(source: string, dest: string): DestToken[] | null {
  if (!validSubject(dest)) throw new Error(`invalid mapping destination subject "${dest}"`);
  const srcTokens = source.split('.');
  // N-th partial wildcard (1-based) -> its position in the source
  const starAt: number[] = [];
  srcTokens.forEach((t, i) => t === '*' && starAt.push(i));
  const srcHasRest = srcTokens[srcTokens.length - 1] === '>';
  const destTokens = dest.split('.');
  if (destTokens.includes('*')) throw new Error(`mapping destination "${dest}" can not contain the '*' wildcard`);
  if (srcHasRest !== (destTokens[destTokens.length - 1] === '>')) {
    throw new Error(`mapping source "${source}" and destination "${dest}" must both end in '>' or neither`);
  }
  const at = (arg: string): number => {
    const n = Number(arg.trim());
    if (!Number.isInteger(n) || n < 1 || n > starAt.length) throw new Error(`mapping destination "${dest}": wildcard index ${arg.trim()} out of range`);
    return starAt[n - 1]!;
  };
  let usesSource = false;
  const out: DestToken[] = destTokens.map((t) => {
    if (t === '>') return { kind: 'rest' };
    const legacy = LEGACY_WILDCARD.exec(t);
    if (legacy) {
      usesSource = true;
      return { kind: 'wildcard', sourceAt: at(legacy[1]!) };
    }
    const fn = FUNCTION.exec(t);
    if (fn === null) {
      if (t.includes('{{')) throw new Error(`mapping destination "${dest}": invalid mapping function "${t}"`);
      return { kind: 'literal', text: t };
    }
    const name = fn[1]!.toLowerCase();
    const args = fn[2]!.split(',').map((a) => a.trim()).filter((a) => a.length > 0);
    usesSource = true;
    if (name === 'wildcard') {
      if (args.length !== 1) throw new Error(`mapping destination "${dest}": wildcard takes one index`);
      return { kind: 'wildcard', sourceAt: at(args[0]!) };
    }
    if (name === 'partition') {
      const buckets = Number(args[0]);
      if (!Number.isInteger(buckets) || buckets < 1) throw new Error(`mapping destination "${dest}": partition needs a number of partitions`);
      return { kind: 'partition', buckets, sourceAt: args.slice(1).map(at) };
    }
    throw new Error(`mapping function '${name}' (in "${dest}") is not supported by flotilla yet, so the server refuses to start`);
  });
  // Every partial wildcard of the source must be placed (nats-server refuses a destination that drops one).
  const placed = new Set(out.flatMap((d) => (d.kind === 'wildcard' ? [d.sourceAt] : d.kind === 'partition' ? d.sourceAt : [])));
  const hasPartition = out.some((d) => d.kind === 'partition');
  if (!hasPartition && starAt.some((i) => !placed.has(i))) throw new Error(`mapping destination "${dest}" does not use every wildcard of "${source}"`);
  return usesSource || srcHasRest ? out : null;
}

function compile(m: MappingOptions, order: number): CompiledMapping {
  if (!validSubject(m.source)) throw new Error(`invalid mapping source subject "${m.source}"`);
  const seen = new Set<string>();
  let total = 0;
  const destinations: CompiledDestination[] = [];
  for (const d of m.destinations) {
    if (seen.has(d.subject)) throw new Error(`duplicate entry for "${d.subject}"`);
    seen.add(d.subject);
    if (!(d.weightPct >= 0 && d.weightPct <= 100)) throw new Error('individual weights need to be <= 100');
    total += d.weightPct;
    if (total > 100) throw new Error('total weight needs to be <= 100');
    destinations.push({ tokens: compileDestination(m.source, d.subject), subject: d.subject, upToPct: 0 });
  }
  // Short of 100: the rest keeps the original subject, unless the source was listed itself (then it is lost).
  if (total < 100 && !seen.has(m.source)) {
    const keep = m.source.split('.').map((t, i): DestToken => (t === '>' ? { kind: 'rest' } : t === '*' ? { kind: 'wildcard', sourceAt: i } : { kind: 'literal', text: t }));
    destinations.push({ tokens: keep, subject: m.source, upToPct: 0 });
    m = { ...m, destinations: [...m.destinations, { subject: m.source, weightPct: 100 - total }] };
  }
  // Ascending weights, then cumulative bounds, as nats-server orders them.
  const weights = m.destinations.map((d) => d.weightPct);
  const order2 = destinations.map((d, i) => ({ d, w: weights[i]! })).sort((a, b) => a.w - b.w);
  let sum = 0;
  for (const x of order2) {
    sum += x.w;
    x.d.upToPct = sum;
  }
  return { subject: m.source, queue: null, order, source: m.source, sourceTokens: m.source.split('.').length, destinations: order2.map((x) => x.d) };
}

/** FNV-1a, 32 bits (Go's hash/fnv New32a), over UTF-8 bytes. */
function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function render(tokens: DestToken[], sourceTokens: number, subject: string): string {
  const src = subject.split('.');
  const out: string[] = [];
  for (const t of tokens) {
    switch (t.kind) {
      case 'literal':
        out.push(t.text);
        break;
      case 'wildcard':
        out.push(src[t.sourceAt] ?? '');
        break;
      case 'partition': {
        const key = t.sourceAt.length > 0 ? t.sourceAt.map((i) => src[i] ?? '').join('') : subject;
        out.push(String(fnv1a32(key) % t.buckets));
        break;
      }
      case 'rest':
        out.push(src.slice(sourceTokens - 1).join('.'));
        break;
    }
  }
  return out.join('.');
}

export class SubjectMappings {
  private readonly literal = new Map<string, CompiledMapping>();
  private readonly wildcards = new Sublist<CompiledMapping>();
  private readonly hasWildcards: boolean;

  /** `mappings` were checked (mappingProblem) when the config was read. */
  constructor(
    mappings: readonly MappingOptions[],
    private readonly randomPct: () => number = () => Math.floor(Math.random() * 100),
  ) {
    let wild = false;
    mappings.forEach((m, i) => {
      const c = compile(m, i);
      if (/(^|\.)(\*|>)(\.|$)/.test(m.source)) {
        this.wildcards.insert(c);
        wild = true;
      } else if (!this.literal.has(m.source)) this.literal.set(m.source, c);
    });
    this.hasWildcards = wild;
  }

  /**
   * The subject a client's publish on `subject` is delivered on: `subject` itself when nothing maps it; null
   * when the draw falls on no destination (weights short of 100 with the source listed: the rest is dropped).
   */
  map(subject: string): string | null {
    let m = this.literal.get(subject);
    if (this.hasWildcards) {
      // The first in config order among the matching mappings.
      for (const c of this.wildcards.match(subject).plain) if (m === undefined || c.order < m.order) m = c;
    }
    if (m === undefined) return subject;
    const dests = m.destinations;
    let d: CompiledDestination | undefined = dests[0];
    if (dests.length > 1 || d?.upToPct !== 100) {
      const draw = this.randomPct();
      d = dests.find((x) => draw < x.upToPct);
    }
    if (d === undefined) return null;
    return d.tokens === null ? d.subject : render(d.tokens, m.sourceTokens, subject);
  }
}
