// Subscription trie with a bounded match cache: the broker's per-message hot path.
// Layout follows nats-server's sublist: one node per token, with literal children, a '*' child and a
// '>' child; subscriptions hang off the node where their subject ends.
import { isValidQueueName, isValidSubject, subjectMatchesFilter, subjectHasWildcard } from './subject.js';

export interface SublistEntry {
  readonly subject: string; // may contain wildcard tokens
  readonly queue: string | null; // queue group name or null
}

export interface SublistResult<S extends SublistEntry> {
  /** every non-queue subscription matching */
  readonly plain: readonly S[];
  /** one array per matching queue group name (members across all matching subjects) */
  readonly queues: readonly (readonly S[])[];
}

export const EMPTY_RESULT: SublistResult<never> = Object.freeze({
  plain: Object.freeze([]) as readonly never[],
  queues: Object.freeze([]) as readonly (readonly never[])[],
});

const DEFAULT_CACHE_MAX_ENTRIES = 4096;
const DOT = 0x2e;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const LF = 0x0a;

class SublistNode<S extends SublistEntry> {
  literal: Map<string, SublistNode<S>> | null = null;
  pwc: SublistNode<S> | null = null; // '*' child
  fwc: SublistNode<S> | null = null; // '>' child
  plain: Set<S> | null = null;
  queues: Map<string, Set<S>> | null = null;

  isEmpty(): boolean {
    return (
      this.literal === null &&
      this.pwc === null &&
      this.fwc === null &&
      (this.plain === null || this.plain.size === 0) &&
      (this.queues === null || this.queues.size === 0)
    );
  }
}

const NO_PLAIN: readonly never[] = Object.freeze([]);
const NO_QUEUES: readonly (readonly never[])[] = Object.freeze([]);

/**
 * Collects matches while walking the trie; queue members are merged by group name. One per Sublist,
 * reused by every match (matching never re-enters); its arrays are made on first use and go to the result.
 */
class MatchAccumulator<S extends SublistEntry> {
  private plain: S[] | null = null;
  private queues: Map<string, S[]> | null = null;

  reset(): void {
    this.plain = null;
    this.queues = null;
  }

  addNode(node: SublistNode<S>): void {
    if (node.plain !== null && node.plain.size > 0) {
      const plain = (this.plain ??= []);
      for (const sub of node.plain) plain.push(sub);
    }
    if (node.queues !== null) {
      const queues = (this.queues ??= new Map());
      for (const [name, members] of node.queues) {
        let group = queues.get(name);
        if (group === undefined) {
          group = [];
          queues.set(name, group);
        }
        for (const sub of members) group.push(sub);
      }
    }
  }

  toResult(): SublistResult<S> {
    const { plain, queues } = this;
    if (plain === null && (queues === null || queues.size === 0)) return EMPTY_RESULT;
    return { plain: plain ?? NO_PLAIN, queues: queues === null ? NO_QUEUES : Array.from(queues.values()) };
  }
}

/**
 * A published subject's token boundaries, reused by every match: a token's string is made only when the
 * trie has literal children to look it up in (an ack subject needs four of its nine).
 */
class SubjectTokens {
  subject = '';
  count = 0;
  /** The highest token index whose value a walk looked up (-1: none): the walk's result depends on no other. */
  maxUsed = -1;
  private starts = new Int32Array(16);
  private ends = new Int32Array(16);

  /** False when the subject has an empty token or whitespace, since such a subject can match nothing. */
  split(subject: string): boolean {
    const len = subject.length;
    if (len === 0) return false;
    this.subject = subject;
    let count = 0;
    let tokenStart = 0;
    for (let i = 0; i <= len; i++) {
      const code = i === len ? DOT : subject.charCodeAt(i);
      if (code === DOT) {
        if (i === tokenStart) return false;
        if (count === this.starts.length) this.grow();
        this.starts[count] = tokenStart;
        this.ends[count] = i;
        count++;
        tokenStart = i + 1;
      } else if (code === SPACE || code === TAB || code === CR || code === LF) {
        return false;
      }
    }
    this.count = count;
    this.maxUsed = -1;
    return true;
  }

  token(i: number): string {
    if (i > this.maxUsed) this.maxUsed = i;
    return this.subject.substring(this.starts[i]!, this.ends[i]!);
  }

  /** Where token `i` ends (i < count). */
  endOf(i: number): number {
    return this.ends[i]!;
  }

  private grow(): void {
    const starts = new Int32Array(this.starts.length * 2);
    const ends = new Int32Array(this.ends.length * 2);
    starts.set(this.starts);
    ends.set(this.ends);
    this.starts = starts;
    this.ends = ends;
  }
}

/** Subscription tokens; the caller has validated the subject, so split() is safe here (not the match path). */
function tokenizeSubscriptionSubject(subject: string): string[] {
  return subject.split('.');
}

function resultWithAdded<S extends SublistEntry>(result: SublistResult<S>, sub: S): SublistResult<S> {
  if (sub.queue === null) return { plain: [...result.plain, sub], queues: result.queues };
  const queues = result.queues.slice();
  const index = queues.findIndex((group) => group[0]!.queue === sub.queue);
  if (index < 0) queues.push([sub]);
  else queues[index] = [...queues[index]!, sub];
  return { plain: result.plain, queues };
}

function resultWithRemoved<S extends SublistEntry>(result: SublistResult<S>, sub: S): SublistResult<S> {
  let plain = result.plain;
  let queues = result.queues;
  if (sub.queue === null) {
    plain = plain.filter((s) => s !== sub);
  } else {
    const index = queues.findIndex((group) => group[0]!.queue === sub.queue);
    if (index >= 0) {
      const remaining = queues[index]!.filter((s) => s !== sub);
      const next = queues.slice();
      if (remaining.length === 0) next.splice(index, 1);
      else next[index] = remaining;
      queues = next;
    }
  }
  if (plain.length === 0 && queues.length === 0) return EMPTY_RESULT;
  return { plain, queues };
}

export class Sublist<S extends SublistEntry> {
  private readonly root = new SublistNode<S>();
  private readonly cache = new Map<string, SublistResult<S>>();
  private readonly tokens = new SubjectTokens();
  private readonly acc = new MatchAccumulator<S>();
  /**
   * The last uncached-prefix match: a walk's result depends only on the tokens it looked up (up to
   * `usedTokens`) and the token count, so a subject with the same leading `prefix` (ending at a token
   * boundary) and count has the same result. One consumer's acks all share it. Cleared by every change.
   */
  private memo: { prefix: string; usedTokens: number; count: number; result: SublistResult<S> } | null = null;
  private readonly cacheMaxEntries: number;
  private readonly uncachedPrefixes: readonly string[];
  private subCount = 0;
  private nodes = 0;

  /**
   * `uncachedPrefixes`: published subjects starting with one of these are matched without the cache; for
   * subjects that are unique per message (JetStream acks), where caching costs an insert and an eviction
   * each time and pushes out the subjects that do repeat.
   */
  constructor(opts?: { cacheMaxEntries?: number; uncachedPrefixes?: readonly string[] }) {
    const max = opts?.cacheMaxEntries ?? DEFAULT_CACHE_MAX_ENTRIES;
    if (!Number.isInteger(max) || max < 0) throw new RangeError(`cacheMaxEntries must be an integer >= 0, got ${max}`);
    this.cacheMaxEntries = max;
    this.uncachedPrefixes = opts?.uncachedPrefixes ?? [];
  }

  /** number of subscriptions */
  get count(): number {
    return this.subCount;
  }

  /** number of trie nodes (excluding the root); for tests and monitoring */
  get nodeCount(): number {
    return this.nodes;
  }

  /** number of cached match results; for tests and monitoring */
  get cacheSize(): number {
    return this.cache.size;
  }

  /** Adds a subscription; inserting the same object again is a no-op. Throws on an invalid subject/queue. */
  insert(sub: S): void {
    if (!isValidSubject(sub.subject)) throw new TypeError(`invalid subscription subject: ${JSON.stringify(sub.subject)}`);
    if (sub.queue !== null && !isValidQueueName(sub.queue)) {
      throw new TypeError(`invalid queue group name: ${JSON.stringify(sub.queue)}`);
    }
    const tokens = tokenizeSubscriptionSubject(sub.subject);
    let node = this.root;
    for (const token of tokens) node = this.childFor(node, token);

    if (sub.queue === null) {
      if (node.plain === null) node.plain = new Set();
      if (node.plain.has(sub)) return;
      node.plain.add(sub);
    } else {
      if (node.queues === null) node.queues = new Map();
      let members = node.queues.get(sub.queue);
      if (members === undefined) {
        members = new Set();
        node.queues.set(sub.queue, members);
      }
      if (members.has(sub)) return;
      members.add(sub);
    }
    this.subCount++;
    this.memo = null;
    this.updateCache(sub, resultWithAdded);
  }

  /** Removes a subscription by identity; false if it was not present. Prunes nodes left empty. */
  remove(sub: S): boolean {
    if (!isValidSubject(sub.subject)) return false;
    const tokens = tokenizeSubscriptionSubject(sub.subject);
    // path[i] is the node reached after tokens[0..i]; kept to prune bottom-up afterwards
    const path: SublistNode<S>[] = [];
    let node = this.root;
    for (const token of tokens) {
      const next = this.existingChild(node, token);
      if (next === null) return false;
      path.push(next);
      node = next;
    }

    if (sub.queue === null) {
      if (node.plain === null || !node.plain.delete(sub)) return false;
      if (node.plain.size === 0) node.plain = null;
    } else {
      const members = node.queues?.get(sub.queue);
      if (members === undefined || !members.delete(sub)) return false;
      if (members.size === 0) {
        node.queues!.delete(sub.queue);
        if (node.queues!.size === 0) node.queues = null;
      }
    }
    this.subCount--;
    this.memo = null;
    this.prune(path, tokens);
    this.updateCache(sub, resultWithRemoved);
    return true;
  }

  /**
   * All subscriptions matching a published subject. Wildcard tokens in `subject` are literal: a published
   * `foo.*` reaches subscribers of `foo.*`, `foo.>` and `>` (nats-server non-pedantic behaviour).
   * The returned arrays are shared with the cache and must not be mutated. `cache` false: the caller
   * knows the subject will not come again (a request's unique reply subject), so the cache is skipped.
   */
  match(subject: string, cache = true): SublistResult<S> {
    return this.matchPublished(subject, cache) ?? EMPTY_RESULT;
  }

  /**
   * match() that also says whether `subject` is a valid publish subject (null: an empty token or whitespace,
   * what isValidPublishSubject rejects), so a caller need not scan it a second time.
   */
  matchPublished(subject: string, cache = true): SublistResult<S> | null {
    const cacheable = cache && !this.isUncached(subject);
    if (cacheable) {
      // Only valid subjects are ever cached.
      const cached = this.cache.get(subject);
      if (cached !== undefined) return cached;
    }
    const tokens = this.tokens;
    if (!tokens.split(subject)) return null;
    const memoable = !cacheable && cache;
    const memo = this.memo;
    if (memoable && memo !== null && memo.count === tokens.count) {
      const boundary = memo.usedTokens < 0 || tokens.endOf(memo.usedTokens) === memo.prefix.length;
      if (boundary && hasPrefix(subject, memo.prefix)) return memo.result;
    }
    const acc = this.acc;
    acc.reset();
    matchLevel(this.root, tokens, 0, acc);
    const result = acc.toResult();
    acc.reset(); // drops the references to subscriptions
    if (cacheable) this.cacheResult(subject, result);
    else if (memoable) {
      const used = tokens.maxUsed;
      this.memo = { prefix: used < 0 ? '' : subject.substring(0, tokens.endOf(used)), usedTokens: used, count: tokens.count, result };
    }
    return result;
  }

  /** true if any subscription matches `subject`; does not populate the cache */
  hasInterest(subject: string): boolean {
    const cached = this.isUncached(subject) ? undefined : this.cache.get(subject);
    if (cached !== undefined) return cached !== EMPTY_RESULT;
    const tokens = this.tokens;
    if (!tokens.split(subject)) return false;
    return hasInterestLevel(this.root, tokens, 0);
  }

  private isUncached(subject: string): boolean {
    const prefixes = this.uncachedPrefixes;
    for (let i = 0; i < prefixes.length; i++) if (hasPrefix(subject, prefixes[i]!)) return true;
    return false;
  }

  /** all subscriptions (for monitoring/route interest); order unspecified */
  all(): S[] {
    const out: S[] = [];
    collectAll(this.root, out);
    return out;
  }

  private childFor(node: SublistNode<S>, token: string): SublistNode<S> {
    if (token === '*') {
      if (node.pwc === null) {
        node.pwc = new SublistNode();
        this.nodes++;
      }
      return node.pwc;
    }
    if (token === '>') {
      if (node.fwc === null) {
        node.fwc = new SublistNode();
        this.nodes++;
      }
      return node.fwc;
    }
    if (node.literal === null) node.literal = new Map();
    let child = node.literal.get(token);
    if (child === undefined) {
      child = new SublistNode();
      node.literal.set(token, child);
      this.nodes++;
    }
    return child;
  }

  private existingChild(node: SublistNode<S>, token: string): SublistNode<S> | null {
    if (token === '*') return node.pwc;
    if (token === '>') return node.fwc;
    return node.literal?.get(token) ?? null;
  }

  /** Detaches empty nodes from the deepest upwards; stops at the first node still in use. */
  private prune(path: SublistNode<S>[], tokens: string[]): void {
    for (let i = path.length - 1; i >= 0; i--) {
      const node = path[i]!;
      if (!node.isEmpty()) return;
      const parent = i === 0 ? this.root : path[i - 1]!;
      const token = tokens[i]!;
      if (token === '*') parent.pwc = null;
      else if (token === '>') parent.fwc = null;
      else {
        parent.literal!.delete(token);
        if (parent.literal!.size === 0) parent.literal = null;
      }
      this.nodes--;
    }
  }

  private cacheResult(subject: string, result: SublistResult<S>): void {
    if (this.cacheMaxEntries === 0) return;
    if (this.cache.size >= this.cacheMaxEntries) this.evictOldest();
    this.cache.set(subject, result);
  }

  /** Drops the oldest eighth of the cache at once (Map iterates in insertion order) to amortise eviction. */
  private evictOldest(): void {
    let toEvict = Math.max(1, this.cacheMaxEntries >>> 3);
    for (const key of this.cache.keys()) {
      if (toEvict-- <= 0) break;
      this.cache.delete(key);
    }
  }

  /**
   * Patches cached results the changed subscription affects instead of clearing the cache, so churn of
   * e.g. `_INBOX.x.*` subscriptions leaves unrelated cached subjects hot (as nats-server does).
   */
  private updateCache(sub: S, patch: (result: SublistResult<S>, sub: S) => SublistResult<S>): void {
    if (this.cache.size === 0) return;
    if (!subjectHasWildcard(sub.subject)) {
      // A literal filter matches exactly one published subject.
      const cached = this.cache.get(sub.subject);
      if (cached !== undefined) this.cache.set(sub.subject, patch(cached, sub));
      return;
    }
    // Every matching published subject starts with the filter's literal tokens; startsWith() is a cheap
    // native pre-check that skips most of the cache before the token-by-token comparison.
    const prefix = literalPrefix(sub.subject);
    for (const subject of this.cache.keys()) {
      if (!subject.startsWith(prefix) || !subjectMatchesFilter(subject, sub.subject)) continue;
      // Overwriting an existing key keeps its position, so this iteration visits each entry once.
      this.cache.set(subject, patch(this.cache.get(subject)!, sub));
    }
  }
}

/**
 * subject.startsWith(prefix) for the per-message checks: an inlined loop, from the end (where two ack
 * subjects' prefixes differ, if at all), without the builtin call on a sliced string.
 */
function hasPrefix(subject: string, prefix: string): boolean {
  if (subject.length < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (subject.charCodeAt(i) !== prefix.charCodeAt(i)) return false;
  return true;
}

/** The filter up to and including the '.' before its first wildcard token ('' if it starts with one). */
function literalPrefix(filter: string): string {
  const len = filter.length;
  let tokenStart = 0;
  for (let i = 0; i <= len; i++) {
    if (i === len || filter.charCodeAt(i) === DOT) {
      if (i - tokenStart === 1) {
        const c = filter.charCodeAt(tokenStart);
        if (c === 0x2a || c === 0x3e) return filter.substring(0, tokenStart); // '*' or '>'
      }
      tokenStart = i + 1;
    }
  }
  return filter;
}

/** nats-server's matchLevel: at each level '>' children match the rest, '*' children branch, literals descend. */
function matchLevel<S extends SublistEntry>(start: SublistNode<S>, tokens: SubjectTokens, from: number, acc: MatchAccumulator<S>): void {
  let node = start;
  for (let i = from; i < tokens.count; i++) {
    if (node.fwc !== null) acc.addNode(node.fwc);
    if (node.pwc !== null) matchLevel(node.pwc, tokens, i + 1, acc);
    if (node.literal === null) return;
    const next = node.literal.get(tokens.token(i));
    if (next === undefined) return;
    node = next;
  }
  acc.addNode(node);
}

function nodeHasSubs<S extends SublistEntry>(node: SublistNode<S>): boolean {
  return (node.plain !== null && node.plain.size > 0) || (node.queues !== null && node.queues.size > 0);
}

function hasInterestLevel<S extends SublistEntry>(start: SublistNode<S>, tokens: SubjectTokens, from: number): boolean {
  let node = start;
  for (let i = from; i < tokens.count; i++) {
    if (node.fwc !== null && nodeHasSubs(node.fwc)) return true;
    if (node.pwc !== null && hasInterestLevel(node.pwc, tokens, i + 1)) return true;
    if (node.literal === null) return false;
    const next = node.literal.get(tokens.token(i));
    if (next === undefined) return false;
    node = next;
  }
  return nodeHasSubs(node);
}

function collectAll<S extends SublistEntry>(node: SublistNode<S>, out: S[]): void {
  if (node.plain !== null) for (const sub of node.plain) out.push(sub);
  if (node.queues !== null) for (const members of node.queues.values()) for (const sub of members) out.push(sub);
  if (node.literal !== null) for (const child of node.literal.values()) collectAll(child, out);
  if (node.pwc !== null) collectAll(node.pwc, out);
  if (node.fwc !== null) collectAll(node.fwc, out);
}
