import { describe, it, expect } from 'vitest';
import { Sublist, EMPTY_RESULT, type SublistResult } from '../src/sublist.js';
import { seededRandom } from './seeded-random.js';

interface TestSub {
  readonly id: number;
  readonly subject: string;
  readonly queue: string | null;
}

let nextId = 1;
function sub(subject: string, queue: string | null = null): TestSub {
  return { id: nextId++, subject, queue };
}

/** Independent reference matcher (split-based) for the published-subject-is-literal semantics. */
function referenceMatches(subject: string, filter: string): boolean {
  const s = subject.split('.');
  const f = filter.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return s.length === f.length;
}

interface Canonical {
  plain: number[];
  queues: Record<string, number[]>;
}

/** Order-independent form of a result; throws on structural faults (empty or repeated groups). */
function canonical(result: SublistResult<TestSub>): Canonical {
  const queues: Record<string, number[]> = {};
  for (const group of result.queues) {
    if (group.length === 0) throw new Error('empty queue group in result');
    const name = group[0]!.queue!;
    if (queues[name] !== undefined) throw new Error(`queue group ${name} listed twice`);
    if (group.some((member) => member.queue !== name)) throw new Error(`queue group ${name} has foreign members`);
    queues[name] = group.map((s) => s.id).sort((x, y) => x - y);
  }
  return { plain: result.plain.map((s) => s.id).sort((x, y) => x - y), queues };
}

/** Cheap equality for the hot test loop; expect() runs only on a mismatch, to print the diff. */
function sameResult(actual: Canonical, expected: Canonical): boolean {
  const names = Object.keys(expected.queues).sort();
  return JSON.stringify([actual.plain, Object.keys(actual.queues).sort(), names.map((n) => actual.queues[n])]) ===
    JSON.stringify([expected.plain, names, names.map((n) => expected.queues[n])]);
}

function referenceResult(live: Iterable<TestSub>, subject: string): Canonical {
  const plain: number[] = [];
  const queues: Record<string, number[]> = {};
  for (const s of live) {
    if (!referenceMatches(subject, s.subject)) continue;
    if (s.queue === null) plain.push(s.id);
    else (queues[s.queue] ??= []).push(s.id);
  }
  plain.sort((x, y) => x - y);
  for (const ids of Object.values(queues)) ids.sort((x, y) => x - y);
  return { plain, queues };
}

const SUB_TOKENS = ['a', 'b', 'c', '*'];
const PUB_TOKENS = ['a', 'b', 'c', '*', '>']; // wildcard tokens are published literally (non-pedantic)
const QUEUES = ['q1', 'q2', 'q3'];

function randomSubSubject(rand: () => number): string {
  const len = 1 + Math.floor(rand() * 4);
  const tokens: string[] = [];
  for (let i = 0; i < len; i++) tokens.push(SUB_TOKENS[Math.floor(rand() * SUB_TOKENS.length)]!);
  if (rand() < 0.25) tokens[len - 1] = '>';
  return tokens.join('.');
}

function randomPubSubject(rand: () => number): string {
  const len = 1 + Math.floor(rand() * 5);
  const tokens: string[] = [];
  for (let i = 0; i < len; i++) {
    // mostly literal tokens so many subjects have interest; wildcard tokens now and then
    tokens.push(rand() < 0.85 ? PUB_TOKENS[Math.floor(rand() * 3)]! : PUB_TOKENS[3 + Math.floor(rand() * 2)]!);
  }
  return tokens.join('.');
}

function runRandomized(seed: number, cacheMaxEntries: number, operations: number, uncachedPrefixes: string[] = []): void {
  const rand = seededRandom(seed);
  const list = new Sublist<TestSub>({ cacheMaxEntries, uncachedPrefixes });
  const live: TestSub[] = [];
  const liveSet = new Set<TestSub>();
  // earlier results with a copy of their contents: shared result arrays must never change afterwards
  const snapshots: { result: SublistResult<TestSub>; copy: Canonical }[] = [];
  const context = `seed=${seed} cacheMaxEntries=${cacheMaxEntries}`;

  for (let op = 0; op < operations; op++) {
    const r = rand();
    const insertChance = live.length < 120 ? 0.6 : 0.35;
    if (r < insertChance) {
      const s = sub(randomSubSubject(rand), rand() < 0.4 ? QUEUES[Math.floor(rand() * QUEUES.length)]! : null);
      list.insert(s);
      live.push(s);
      liveSet.add(s);
    } else if (r < insertChance + 0.05 && live.length > 0) {
      list.insert(live[Math.floor(rand() * live.length)]!); // duplicate insert is a no-op
    } else if (r < insertChance + 0.1) {
      expect(list.remove(sub(randomSubSubject(rand))), context).toBe(false); // never inserted
    } else if (live.length > 0) {
      const index = Math.floor(rand() * live.length);
      const s = live[index]!;
      live[index] = live[live.length - 1]!;
      live.pop();
      liveSet.delete(s);
      expect(list.remove(s), context).toBe(true);
      expect(list.remove(s), context).toBe(false);
    }
    if (list.count !== live.length) expect(list.count, context).toBe(live.length);

    for (let probe = 0; probe < 3; probe++) {
      const subject = randomPubSubject(rand);
      const result = list.match(subject);
      const expected = referenceResult(liveSet, subject);
      const actual = canonical(result);
      if (!sameResult(actual, expected)) expect(actual, `${context} op=${op} subject=${subject}`).toEqual(expected);
      const interest = expected.plain.length > 0 || Object.keys(expected.queues).length > 0;
      if (list.hasInterest(subject) !== interest) expect.fail(`${context} op=${op} hasInterest ${subject} != ${interest}`);
      if (rand() < 0.05 && snapshots.length < 50) snapshots.push({ result, copy: canonical(result) });
    }
    if (list.cacheSize > cacheMaxEntries) expect(list.cacheSize, context).toBeLessThanOrEqual(cacheMaxEntries);
  }

  expect(new Set(list.all())).toEqual(liveSet);
  for (const { result, copy } of snapshots) expect(canonical(result), context).toEqual(copy);

  for (const s of live) expect(list.remove(s), context).toBe(true);
  expect(list.count).toBe(0);
  expect(list.nodeCount, `${context}: all nodes pruned`).toBe(0);
  expect(list.all()).toEqual([]);
}

describe('Sublist vs reference matcher (seeded random)', () => {
  // Fixed seeds keep CI deterministic; SUBLIST_SEED replays or explores a specific one.
  const envSeed = process.env['SUBLIST_SEED'];
  const seeds = envSeed !== undefined ? [Number(envSeed)] : [1, 0xc0ffee, 20261129];
  for (const seed of seeds) {
    for (const cacheMaxEntries of [4096, 16, 0]) {
      it(`seed ${seed}, cacheMaxEntries ${cacheMaxEntries}`, () => {
        console.log(`sublist randomized: seed=${seed} cacheMaxEntries=${cacheMaxEntries}`);
        runRandomized(seed, cacheMaxEntries, 3000);
      });
    }
  }
});

describe('Sublist matching', () => {
  it('matches literals, * and > like nats-server', () => {
    const list = new Sublist<TestSub>();
    const exact = sub('foo.bar');
    const star = sub('foo.*');
    const tail = sub('foo.>');
    const all = sub('>');
    const other = sub('foo.baz');
    const deep = sub('*.bar.>');
    for (const s of [exact, star, tail, all, other, deep]) list.insert(s);
    const ids = (subject: string) => canonical(list.match(subject)).plain;
    expect(ids('foo.bar')).toEqual([exact.id, star.id, tail.id, all.id]);
    expect(ids('foo')).toEqual([all.id]);
    expect(ids('foo.bar.baz')).toEqual([tail.id, all.id, deep.id]);
    expect(ids('x.bar')).toEqual([all.id]);
    expect(ids('x.bar.y.z')).toEqual([all.id, deep.id]);
  });

  it('treats wildcard tokens in a published subject literally', () => {
    const list = new Sublist<TestSub>();
    const star = sub('foo.*');
    const tail = sub('foo.>');
    const all = sub('>');
    const literal = sub('foo.bar');
    for (const s of [star, tail, all, literal]) list.insert(s);
    expect(canonical(list.match('foo.*')).plain).toEqual([star.id, tail.id, all.id]);
    expect(canonical(list.match('foo.>')).plain).toEqual([star.id, tail.id, all.id]);
  });

  it('returns EMPTY_RESULT for malformed published subjects without caching them', () => {
    const list = new Sublist<TestSub>();
    list.insert(sub('>'));
    for (const bad of ['', 'foo..bar', '.foo', 'foo.', 'foo bar', 'foo\tbar', 'foo\r\n']) {
      expect(list.match(bad)).toBe(EMPTY_RESULT);
      expect(list.hasInterest(bad)).toBe(false);
    }
    expect(list.cacheSize).toBe(0);
  });

  it('groups queue members by name across matching subjects', () => {
    const list = new Sublist<TestSub>();
    const q1a = sub('orders.new', 'q1');
    const q1b = sub('orders.*', 'q1');
    const q2 = sub('orders.>', 'q2');
    const plain = sub('orders.new');
    const unrelated = sub('orders.old', 'q1');
    for (const s of [q1a, q1b, q2, plain, unrelated]) list.insert(s);
    const result = canonical(list.match('orders.new'));
    expect(result.plain).toEqual([plain.id]);
    expect(result.queues).toEqual({ q1: [q1a.id, q1b.id], q2: [q2.id] });
    expect(list.match('orders.new').queues).toHaveLength(2);
  });

  it('counts a duplicate insert once and removes by identity', () => {
    const list = new Sublist<TestSub>();
    const a = sub('foo.bar');
    const twin = sub('foo.bar'); // equal fields, different identity
    list.insert(a);
    list.insert(a);
    expect(list.count).toBe(1);
    expect(list.match('foo.bar').plain).toEqual([a]);
    expect(list.remove(twin)).toBe(false);
    list.insert(twin);
    expect(list.count).toBe(2);
    expect(list.remove(a)).toBe(true);
    expect(list.remove(a)).toBe(false);
    expect(list.match('foo.bar').plain).toEqual([twin]);
  });

  it('rejects invalid subscription subjects and queue names', () => {
    const list = new Sublist<TestSub>();
    for (const bad of ['', 'foo..bar', 'foo.>.bar', '.foo', 'foo.', 'foo bar']) {
      expect(() => list.insert(sub(bad))).toThrow(TypeError);
      expect(list.remove(sub(bad))).toBe(false);
    }
    expect(() => list.insert(sub('foo', ''))).toThrow(TypeError);
    expect(() => list.insert(sub('foo', 'my q'))).toThrow(TypeError);
    expect(list.count).toBe(0);
    expect(list.nodeCount).toBe(0);
  });

  it('hasInterest agrees with match and does not fill the cache', () => {
    const list = new Sublist<TestSub>();
    list.insert(sub('a.*.c', 'q'));
    expect(list.hasInterest('a.b.c')).toBe(true);
    expect(list.hasInterest('a.b')).toBe(false);
    expect(list.cacheSize).toBe(0);
    list.match('a.b');
    expect(list.hasInterest('a.b')).toBe(false); // answered from the cached empty result
  });
});

describe('Sublist pruning', () => {
  it('removes every node once all subscriptions are gone', () => {
    const list = new Sublist<TestSub>();
    const subs = [
      sub('a'),
      sub('a.b'),
      sub('a.b.c'),
      sub('a.*'),
      sub('a.>'),
      sub('*.b.>'),
      sub('>'),
      sub('a.b.c', 'q'),
      sub('a.b.c', 'r'),
    ];
    for (const s of subs) list.insert(s);
    // a, a.b, a.b.c, a.*, a.>, *, *.b, *.b.>, > = 9 nodes
    expect(list.nodeCount).toBe(9);
    expect(list.count).toBe(subs.length);
    list.remove(subs[2]!); // a.b.c plain: node still holds queue subs
    expect(list.nodeCount).toBe(9);
    list.remove(subs[7]!);
    list.remove(subs[8]!);
    expect(list.nodeCount).toBe(8); // a.b.c pruned
    list.remove(subs[1]!);
    expect(list.nodeCount).toBe(7); // a.b pruned
    list.remove(subs[0]!);
    expect(list.nodeCount).toBe(7); // 'a' still has children a.* and a.>
    for (const s of [subs[3]!, subs[4]!, subs[5]!, subs[6]!]) expect(list.remove(s)).toBe(true);
    expect(list.count).toBe(0);
    expect(list.nodeCount).toBe(0);
  });
});

describe('Sublist match cache', () => {
  it('patches only cached subjects the changed subscription matches', () => {
    const list = new Sublist<TestSub>();
    const fooBar = list.match('foo.bar');
    const bazQux = list.match('baz.qux');
    expect(fooBar).toBe(EMPTY_RESULT);
    expect(list.cacheSize).toBe(2);

    const star = sub('foo.*');
    list.insert(star);
    expect(list.match('foo.bar').plain).toEqual([star]);
    expect(list.match('baz.qux')).toBe(bazQux); // untouched entry is still the same cached object
    expect(fooBar).toBe(EMPTY_RESULT); // the old result object was not mutated

    const literal = sub('foo.bar');
    list.insert(literal);
    expect(canonical(list.match('foo.bar')).plain).toEqual([star.id, literal.id]);

    const queued = sub('foo.>', 'workers');
    list.insert(queued);
    expect(list.match('foo.bar').queues).toEqual([[queued]]);
    const queued2 = sub('*.bar', 'workers');
    list.insert(queued2);
    expect(canonical(list.match('foo.bar')).queues).toEqual({ workers: [queued.id, queued2.id] });

    const beforeRemove = list.match('foo.bar');
    expect(list.remove(star)).toBe(true);
    expect(list.match('foo.bar').plain).toEqual([literal]);
    expect(canonical(beforeRemove).plain).toEqual([star.id, literal.id]); // callers' old results stay intact
    list.remove(queued);
    list.remove(queued2);
    expect(list.match('foo.bar').queues).toEqual([]);
    list.remove(literal);
    expect(list.match('foo.bar')).toBe(EMPTY_RESULT);
    expect(list.cacheSize).toBe(2);
  });

  it('updates cached subjects that contain literal wildcard tokens', () => {
    const list = new Sublist<TestSub>();
    expect(list.match('foo.*')).toBe(EMPTY_RESULT);
    expect(list.match('foo.>')).toBe(EMPTY_RESULT);
    const star = sub('foo.*');
    const literal = sub('foo.bar');
    list.insert(star);
    list.insert(literal);
    expect(list.match('foo.*').plain).toEqual([star]);
    expect(list.match('foo.>').plain).toEqual([star]);
  });

  it('keeps unrelated cached results hot under _INBOX subscription churn', () => {
    const list = new Sublist<TestSub>();
    const hot = sub('orders.>');
    list.insert(hot);
    const hotResults = new Map<string, SublistResult<TestSub>>();
    for (let i = 0; i < 1000; i++) hotResults.set(`orders.${i}`, list.match(`orders.${i}`));
    for (let i = 0; i < 500; i++) {
      const inbox = sub(`_INBOX.conn${i}.*`);
      list.insert(inbox);
      expect(list.match(`_INBOX.conn${i}.1`).plain).toEqual([inbox]);
      list.remove(inbox);
      const literalInbox = sub(`_INBOX.req${i}`);
      list.insert(literalInbox);
      list.remove(literalInbox);
    }
    for (const [subject, result] of hotResults) expect(list.match(subject)).toBe(result);
    expect(list.nodeCount).toBe(2);
  });

  it('stays within cacheMaxEntries and evicts oldest entries first', () => {
    const list = new Sublist<TestSub>({ cacheMaxEntries: 16 });
    list.insert(sub('>'));
    const first = list.match('s.0');
    for (let i = 1; i < 100; i++) {
      list.match(`s.${i}`);
      expect(list.cacheSize).toBeLessThanOrEqual(16);
    }
    expect(list.match('s.99')).toBe(list.match('s.99'));
    expect(list.match('s.0')).not.toBe(first); // evicted, recomputed
    expect(canonical(list.match('s.0'))).toEqual(canonical(first));
  });

  it('cacheMaxEntries 0 disables caching', () => {
    const list = new Sublist<TestSub>({ cacheMaxEntries: 0 });
    const s = sub('a.b');
    list.insert(s);
    expect(list.match('a.b').plain).toEqual([s]);
    expect(list.cacheSize).toBe(0);
    expect(() => new Sublist<TestSub>({ cacheMaxEntries: -1 })).toThrow(RangeError);
  });

  it('matches subjects under an uncached prefix without caching them', () => {
    const list = new Sublist<TestSub>({ uncachedPrefixes: ['$JS.ACK.'] });
    const ack = sub('$JS.ACK.S.D.>');
    const other = sub('a.b');
    list.insert(ack);
    list.insert(other);
    expect(list.match('$JS.ACK.S.D.1.2.3.4.0').plain).toEqual([ack]);
    expect(list.hasInterest('$JS.ACK.S.D.1.2.3.4.0')).toBe(true);
    expect(list.match('$JS.ACK.S.E.1.2.3.4.0')).toBe(EMPTY_RESULT);
    expect(list.cacheSize).toBe(0);
    expect(list.match('a.b').plain).toEqual([other]);
    expect(list.cacheSize).toBe(1);
    // Later subscriptions are seen at once (nothing stale to patch).
    const late = sub('$JS.ACK.S.E.*.*.*.*.*');
    list.insert(late);
    expect(list.match('$JS.ACK.S.E.1.2.3.4.0').plain).toEqual([late]);
    list.remove(ack);
    expect(list.match('$JS.ACK.S.D.1.2.3.4.0')).toBe(EMPTY_RESULT);
  });

  it('match(subject, false) answers without caching', () => {
    const list = new Sublist<TestSub>();
    const inbox = sub('_INBOX.a.*');
    list.insert(inbox);
    expect(list.match('_INBOX.a.1', false).plain).toEqual([inbox]);
    expect(list.cacheSize).toBe(0);
    expect(list.match('_INBOX.a.1').plain).toEqual([inbox]);
    expect(list.cacheSize).toBe(1);
    // A cached entry is still used (and kept current) when asked not to cache.
    list.remove(inbox);
    expect(list.match('_INBOX.a.1', false)).toBe(EMPTY_RESULT);
  });

  it('matchPublished tells an invalid publish subject from one nobody matches', () => {
    const list = new Sublist<TestSub>();
    list.insert(sub('>'));
    for (const bad of ['', 'a..b', '.a', 'a.', 'a b', 'a\tb']) expect(list.matchPublished(bad)).toBeNull();
    expect(list.match('a..b')).toBe(EMPTY_RESULT);
    expect(list.matchPublished('a.b')!.plain).toHaveLength(1);
    expect(new Sublist<TestSub>().matchPublished('a.b')).toBe(EMPTY_RESULT);
  });

  it('memoizes uncached-prefix matches only as far as the tokens the walk looked up (randomized)', () => {
    // Every subject is under the uncached prefix '': each match goes through the one-entry memo.
    for (const seed of [11, 12, 13, 14]) runRandomized(seed, 64, 3000, ['']);
  });

  it('memo: same leading tokens and count reuse the result; a change or another count does not', () => {
    const list = new Sublist<TestSub>({ uncachedPrefixes: ['$JS.ACK.'] });
    const d = sub('$JS.ACK.S.D.>');
    list.insert(d);
    const first = list.match('$JS.ACK.S.D.1.2.3.4.0');
    expect(first.plain).toEqual([d]);
    expect(list.match('$JS.ACK.S.D.1.3.4.5.9')).toBe(first);
    expect(list.match('$JS.ACK.S.DX.1.3.4.5.9')).toBe(EMPTY_RESULT); // token 3 differs past the prefix
    expect(list.match('$JS.ACK.S.D')).toBe(EMPTY_RESULT); // fewer tokens: '>' needs one more
    const star = sub('$JS.ACK.S.D.*.*.*.*.7');
    list.insert(star);
    expect(list.match('$JS.ACK.S.D.1.2.3.4.7').plain).toEqual([d, star]);
    expect(list.match('$JS.ACK.S.D.1.2.3.4.8').plain).toEqual([d]);
    list.remove(d);
    expect(list.match('$JS.ACK.S.D.1.2.3.4.7').plain).toEqual([star]);
  });
});
