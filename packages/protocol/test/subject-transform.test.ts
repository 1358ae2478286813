// The subject transform shared by core mappings and JetStream transforms: nats-server 2.14's outputs for each
// function (its own table of examples), its refusals and their texts, and a seeded fuzz of the parser (any
// destination either compiles or is refused with a SubjectTransformError; a compiled one never throws).
import { describe, expect, it } from 'vitest';
import { SubjectTransform, SubjectTransformError, validateMapping } from '../src/subject-transform.js';
import { randomInt, seededRandom } from './seeded-random.js';

function apply(src: string, dest: string, subject: string): string | null {
  const t = SubjectTransform.compile(src, dest);
  return t === null ? subject : t.match(subject);
}

function refusal(src: string, dest: string): string {
  try {
    validateMapping(src, dest);
  } catch (err) {
    expect(err).toBeInstanceOf(SubjectTransformError);
    return (err as Error).message;
  }
  return 'accepted';
}

describe('SubjectTransform', () => {
  it.each([
    ['', 'prefix.>', 'foo', 'prefix.foo'],
    ['foo', '', 'foo', 'foo'],
    ['foo', 'bar', 'foo', 'bar'],
    ['foo.*.bar.*.baz', 'req.$2.$1', 'foo.A.bar.B.baz', 'req.B.A'],
    ['foo.*.bar.*.baz', 'req.{{wildcard(2)}}.{{wildcard(1)}}', 'foo.A.bar.B.baz', 'req.B.A'],
    ['baz.>', 'my.pre.>', 'baz.1.2.3', 'my.pre.1.2.3'],
    ['*', 'foo.bar.$1', 'foo', 'foo.bar.foo'],
    ['*', '{{splitfromleft(1,3)}}', '12345', '123.45'],
    ['*', '{{SplitFromRight(1,3)}}', '12345', '12.345'],
    ['*', '{{SliceFromLeft(1,3)}}', '1234567890', '123.456.789.0'],
    ['*', '{{SliceFromRight(1,3)}}', '1234567890', '1.234.567.890'],
    ['*', '{{split(1,-)}}', '-abc-def--ghi-', 'abc.def.ghi'],
    ['*', '{{split(1,-)}}', 'abc-def--ghi-', 'abc.def.ghi'],
    ['*.*', '{{split(2,-)}}.{{splitfromleft(1,2)}}', 'foo.-abc-def--ghij-', 'abc.def.ghij.fo.o'],
    ['*', '{{right(1,1)}}', '1234', '4'],
    ['*', '{{right(1,3)}}', '1234', '234'],
    ['*', '{{right(1,6)}}', '1234', '1234'],
    ['*', '{{left(1,1)}}', '1234', '1'],
    ['*', '{{left(1,3)}}', '1234', '123'],
    ['*', '{{left(1,6)}}', '1234', '1234'],
    ['*', 'bar.{{partition(0)}}', 'baz', 'bar.0'],
    ['*', 'bar.{{partition(10, 0)}}', 'foo', 'bar.3'],
    ['*.*', 'bar.{{partition(10)}}', 'foo.bar', 'bar.6'],
    ['*', 'bar.{{partition(10)}}', 'foo', 'bar.3'],
    ['*', 'bar.{{partition(10)}}', 'baz', 'bar.0'],
    ['*', 'bar.{{partition(10)}}', 'qux', 'bar.9'],
    ['*', 'bar.{{random(0)}}', 'qux', 'bar.0'],
    ['foo.bar', 'baz.{{partition(10)}}', 'foo.bar', 'baz.6'],
    ['foo.baz', 'qux.{{partition(10)}}', 'foo.baz', 'qux.4'],
    ['test.subject', 'result.{{partition(5)}}', 'test.subject', 'result.0'],
    ['*', '{{ Partition (10,1) }}', 'foo', '3'],
    ['a.*.>', 'b.{{sliceFromLeft(1,2)}}.>', 'a.xyz.c.d', 'b.xy.z.c.d'],
    ['*', 'pre.$x', 'foo', 'pre.$x'],
  ])('%s → %s rewrites %s as %s (nats-server 2.14)', (src, dest, subject, want) => {
    expect(apply(src, dest, subject)).toBe(want);
  });

  it('random(n) stays within n; a subject that does not match gives null', () => {
    const seen = new Set<string>();
    const t = SubjectTransform.compile('*', 'bar.{{random(6)}}', { random: seededRandom(7) })!;
    for (let i = 0; i < 600; i++) seen.add(t.match('qux')!);
    expect([...seen].sort()).toEqual(['bar.0', 'bar.1', 'bar.2', 'bar.3', 'bar.4', 'bar.5']);
    expect(t.match('qux.more')).toBeNull();
    expect(SubjectTransform.compile('a.*', 'b.$1')!.match('c.d')).toBeNull();
  });

  it.each([
    ['foo.*', 'bar.$2', 'invalid mapping destination: wildcard index out of range in $2: [2]'],
    ['foo', 'bar.$1', 'invalid mapping destination: wildcard index out of range in $1'],
    ['foo', 'bar.{{split(1,-)}}', 'invalid mapping destination: wildcard index out of range in {{split(1,-)}}'],
    ['foo.*', 'bar.{{wildcard()}}', 'invalid mapping destination: not enough arguments passed to the function in {{wildcard()}}'],
    ['foo.*', 'bar.{{wildcard(1,2)}}', 'invalid mapping destination: too many arguments passed to the function in {{wildcard(1,2)}}'],
    ['foo.*', 'bar.{{wildcard(x)}}', 'invalid mapping destination: function argument is invalid or in the wrong format in {{wildcard(x)}}'],
    ['foo.*', 'bar.{{splitFromLeft(1)}}', 'invalid mapping destination: not enough arguments passed to the function in {{splitFromLeft(1)}}'],
    ['foo.*', 'bar.{{split(1,a b)}}', 'invalid mapping destination: function argument is invalid or in the wrong format in {{split(1,a b)}}'],
    // A '.' inside a function splits the token, so nats-server keeps it as literal text.
    ['foo.*', 'bar.{{split(1,.)}}', 'accepted'],
    ['foo.*', 'bar.{{partition(a,1)}}', 'invalid mapping destination: function argument is invalid or in the wrong format in {{partition(a,1)}}'],
    ['foo.*', 'bar.{{nope(1)}}', 'invalid mapping destination: unknown function in {{nope(1)}}'],
    // 2.14.5's ValidateMapping knows no left/right, so configs refuse them.
    ['foo.*', 'bar.{{left(1,2)}}', 'invalid mapping destination: unknown function in {{left(1,2)}}'],
    ['foo.*', 'bar..x', 'invalid mapping destination: invalid transform'],
    ['foo.*', 'bar.*', 'invalid subject'],
    ['foo.>', 'bar', 'invalid subject'],
    ['foo', 'bar.>', 'invalid subject'],
    ['foo.*', 'b ar', 'invalid mapping destination: invalid transform'],
  ])('%s → %s is refused: %s', (src, dest, text) => {
    expect(refusal(src, dest)).toBe(text);
  });

  it('strict (import) transforms allow only wildcard placement and every wildcard used', () => {
    expect(() => SubjectTransform.compile('a.*', 'b.{{partition(2,1)}}', { strict: true })).toThrow('the only mapping function allowed for import transforms');
    expect(() => SubjectTransform.compile('a.*.*', 'b.$1', { strict: true })).toThrow('not using all of the token wildcard(s) in b.$1');
    expect(SubjectTransform.compile('a.*.*', 'b.$2.$1', { strict: true })!.match('a.x.y')).toBe('b.y.x');
  });

  it('fuzz: any destination compiles or is refused with a SubjectTransformError, and a compiled one never throws', () => {
    const seed = 0x5eed19;
    const rand = seededRandom(seed);
    const pieces = ['a', 'b', '*', '>', '$1', '$2', '$0', '$x', '{{', '}}', '(', ')', ',', ' ', '1', '2', '-', '0', '-3', 'wildcard', 'partition', 'split', 'splitFromLeft', 'sliceFromRight', 'left', 'right', 'random', '.', ''];
    const sources = ['a', 'a.*', 'a.*.*', 'a.>', '*.>', '>', ''];
    let compiled = 0;
    for (let i = 0; i < 3000; i++) {
      let dest = '';
      const n = 1 + randomInt(rand, 8);
      for (let j = 0; j < n; j++) dest += pieces[randomInt(rand, pieces.length)];
      if (rand() < 0.3) dest = `x.{{${['wildcard', 'partition', 'split', 'sliceFromLeft', 'right'][randomInt(rand, 5)]}(${dest})}}`;
      const src = sources[randomInt(rand, sources.length)]!;
      let t: SubjectTransform | null = null;
      try {
        t = SubjectTransform.compile(src, dest);
      } catch (err) {
        expect(err, `seed ${seed} ${src} → ${dest}`).toBeInstanceOf(SubjectTransformError);
        continue;
      }
      if (t === null) continue;
      compiled++;
      const subject = (src === '' ? '>' : src).replace(/\*/g, 'tok-en12').replace('>', 'r1.r2');
      const out = t.match(subject);
      expect(typeof out, `seed ${seed} ${src} → ${dest} on ${subject}`).toBe('string');
    }
    expect(compiled).toBeGreaterThan(100);
  });
});
