import { describe, expect, it } from 'vitest';
import { SubjectIndex } from '../src/stream/subject-index.js';
import { anySubjectsCollide } from '../src/stream/subjects-collide.js';

describe('SubjectIndex', () => {
  const index = new SubjectIndex();
  index.add('ORDERS', ['orders.*', 'orders.eu.>']);
  index.add('LIT', ['a.b.c', 'x']);
  index.add('ALL', ['wide.>']);

  it.each([
    [['orders.new'], true], // literal under a stored *
    [['orders'], false], // * needs a token
    [['orders.eu.de.1'], true], // under a stored >
    [['orders.eu'], true], // orders.* covers it
    [['orders.>'], true],
    [['*.b.c'], true], // a wildcard over a stored literal
    [['a.*'], false], // one token short of a.b.c
    [['a.>'], true],
    [['>'], true],
    [['x.y'], false],
    [['*'], true], // x
    [['wide'], false],
    [['wide.*.z'], true],
    [['other', 'q.>'], false],
    [['other', 'a.b.c'], true],
  ])('%j overlaps: %s', (subjects, expected) => {
    expect(index.overlaps(subjects)).toBe(expected);
  });

  it('a stream never overlaps itself (an update checks only the others)', () => {
    expect(index.overlaps(['orders.new'], 'ORDERS')).toBe(false);
    expect(index.overlaps(['a.b.c', 'wide.q'], 'LIT')).toBe(true);
    expect(index.overlaps(['>'], 'ALL')).toBe(true);
  });

  it('agrees with pairwise subjectsCollide on random subject sets', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const token = () => ['a', 'b', 'c', '*'][rnd(4)]!;
    const subject = () => {
      const n = 1 + rnd(3);
      const t = Array.from({ length: n }, token);
      if (rnd(4) === 0) t.push('>');
      return t.join('.');
    };
    for (let round = 0; round < 300; round++) {
      const idx = new SubjectIndex();
      const streams = Array.from({ length: 3 }, (_, i) => ({ name: `S${i}`, subjects: Array.from({ length: 1 + rnd(3) }, subject) }));
      for (const s of streams) idx.add(s.name, s.subjects);
      const probe = Array.from({ length: 1 + rnd(2) }, subject);
      const except = rnd(2) === 0 ? 'S0' : null;
      const expected = streams.some((s) => s.name !== except && anySubjectsCollide(probe, s.subjects));
      expect(idx.overlaps(probe, except), JSON.stringify({ streams, probe, except })).toBe(expected);
    }
  });
});
