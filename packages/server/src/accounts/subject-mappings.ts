// An account's subject mappings (`mappings {}`, top level for the global account): a client's publish on a
// matching subject is delivered on the destination instead, chosen by weight when there are several, before
// permissions and routing see it (nats-server maps in its parser). The first mapping in config order whose
// source matches wins. Destinations are protocol's SubjectTransform (every nats-server mapping function);
// cluster-scoped destinations are refused by name at start (conf-to-options).
import { isValidSubject, Sublist, SubjectTransform, SubjectTransformError, validateMapping } from '@flotilla/protocol';

export interface MappingDestinationOptions {
  subject: string;
  /** 1..100; the destinations of one source total at most 100 (the rest keeps the original subject). */
  weightPct: number;
}

export interface MappingOptions {
  source: string;
  destinations: MappingDestinationOptions[];
}

interface CompiledDestination {
  transform: SubjectTransform;
  subject: string;
  /** Cumulative weight bound: chosen when the draw (0..99) is below it. */
  upToPct: number;
}

interface CompiledMapping {
  readonly subject: string; // the source, as a Sublist entry
  readonly queue: null;
  order: number;
  source: string;
  destinations: CompiledDestination[];
}

/** Why a mapping cannot be used, or null. Reasons are the server's start error (nats-server's texts). */
export function mappingProblem(m: MappingOptions): string | null {
  try {
    compile(m, 0);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** transformTokenize: the source as a destination that keeps each token (`*` → `$N`). */
function keepingDestination(source: string): string {
  let n = 0;
  return source
    .split('.')
    .map((t) => (t === '*' ? `$${++n}` : t))
    .join('.');
}

function compileDestination(source: string, dest: string): SubjectTransform {
  if (dest === '') throw new Error(`invalid mapping destination subject "${dest}"`);
  validateMapping(source, dest);
  return SubjectTransform.compile(source, dest)!;
}

function compile(m: MappingOptions, order: number): CompiledMapping {
  if (!isValidSubject(m.source)) throw new SubjectTransformError('bad subject');
  const seen = new Set<string>();
  let total = 0;
  const destinations: CompiledDestination[] = [];
  for (const d of m.destinations) {
    if (seen.has(d.subject)) throw new Error(`duplicate entry for "${d.subject}"`);
    seen.add(d.subject);
    if (!(d.weightPct >= 0 && d.weightPct <= 100)) throw new Error('individual weights need to be <= 100');
    total += d.weightPct;
    if (total > 100) throw new Error('total weight needs to be <= 100');
    destinations.push({ transform: compileDestination(m.source, d.subject), subject: d.subject, upToPct: 0 });
  }
  // Short of 100: the rest keeps the original subject, unless the source was listed itself (then it is lost).
  if (total < 100 && !seen.has(m.source)) {
    destinations.push({ transform: compileDestination(m.source, keepingDestination(m.source)), subject: m.source, upToPct: 0 });
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
  return { subject: m.source, queue: null, order, source: m.source, destinations: order2.map((x) => x.d) };
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
    return d.transform.transformTokens(subject.split('.'));
  }
}
