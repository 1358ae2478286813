import { describe, it, expect } from 'vitest';
import {
  isValidLiteralSubject,
  isValidSubject,
  isValidPublishSubject,
  isValidQueueName,
  subjectMatchesFilter,
  subjectHasWildcard,
} from '../src/subject.js';

// [input, literal, subscribe, publish]
const SUBJECT_TABLE: readonly [string, boolean, boolean, boolean][] = [
  ['foo', true, true, true],
  ['foo.bar', true, true, true],
  ['foo.bar.baz', true, true, true],
  ['$JS.API.INFO', true, true, true],
  ['_INBOX.abc123.1', true, true, true],
  ['foo*', true, true, true], // wildcard only when the token IS '*'
  ['foo.b>r', true, true, true],
  ['foo.*bar', true, true, true],
  ['*', false, true, true],
  ['>', false, true, true],
  ['foo.*', false, true, true],
  ['foo.>', false, true, true],
  ['*.bar', false, true, true],
  ['foo.*.baz', false, true, true],
  ['*.*.>', false, true, true],
  ['foo.>.bar', false, false, true], // '>' not last: invalid SUB, but non-pedantic PUB treats it literally
  ['>.foo', false, false, true],
  ['$JS.API.CONSUMER.CREATE.KV_b1.n.$KV.b1.>', false, true, true],
  ['', false, false, false],
  ['.', false, false, false],
  ['foo..bar', false, false, false],
  ['.foo', false, false, false],
  ['foo.', false, false, false],
  ['..', false, false, false],
  ['foo bar', false, false, false],
  ['foo\tbar', false, false, false],
  ['foo\r', false, false, false],
  ['foo.\nbar', false, false, false],
  [' ', false, false, false],
  ['foo. ', false, false, false],
];

describe('subject validators', () => {
  it.each(SUBJECT_TABLE)('%j → literal %s, subscribe %s, publish %s', (subject, literal, subscribe, publish) => {
    expect(isValidLiteralSubject(subject)).toBe(literal);
    expect(isValidSubject(subject)).toBe(subscribe);
    expect(isValidPublishSubject(subject)).toBe(publish);
  });

  it.each([
    ['q', true],
    ['workers', true],
    ['a.b', true],
    ['q*', true],
    ['', false],
    ['my queue', false],
    ['q\t', false],
    ['\nq', false],
    ['q\r', false],
  ] as const)('queue name %j → %s', (queue, valid) => {
    expect(isValidQueueName(queue)).toBe(valid);
  });

  it.each([
    ['foo', false],
    ['foo*', false],
    ['foo.b>', false],
    ['*', true],
    ['>', true],
    ['foo.*', true],
    ['foo.>', true],
    ['*.foo', true],
    ['foo.*.bar', true],
  ] as const)('subjectHasWildcard(%j) → %s', (subject, expected) => {
    expect(subjectHasWildcard(subject)).toBe(expected);
  });
});

describe('subjectMatchesFilter', () => {
  // [subject, filter, matches]
  it.each([
    ['foo', 'foo', true],
    ['foo', 'bar', false],
    ['foo', 'fo', false],
    ['fo', 'foo', false],
    ['foo.bar', 'foo.bar', true],
    ['foo.bar', 'foo.baz', false],
    ['foo.bar', 'foo', false],
    ['foo', 'foo.bar', false],
    ['foo.bar', 'foo.*', true],
    ['foo.bar', '*.bar', true],
    ['foo.bar', '*.*', true],
    ['foo.bar', '*', false],
    ['foo', '*', true],
    ['foo.bar.baz', 'foo.*', false],
    ['foo.bar.baz', 'foo.*.baz', true],
    ['foo.bar', 'foo.>', true],
    ['foo.bar.baz', 'foo.>', true],
    ['foo', 'foo.>', false], // '>' needs at least one token
    ['foo', '>', true],
    ['a.b.c.d', '>', true],
    ['a.b.c.d', 'a.*.>', true],
    ['a.b', 'a.*.>', false],
    ['foo*', 'foo*', true], // literal token containing '*'
    ['foox', 'foo*', false],
    // wildcard tokens in a published subject are literal (non-pedantic PUB)
    ['foo.*', 'foo.*', true],
    ['foo.*', 'foo.>', true],
    ['foo.*', '>', true],
    ['foo.*', 'foo.bar', false],
    ['foo.>', 'foo.*', true],
    ['foo.>', 'foo.bar', false],
    // malformed input never matches
    ['', '>', false],
    ['foo', '', false],
    ['foo..bar', 'foo.*.bar', false],
    ['foo..bar', 'foo.>', false],
    ['foo.', 'foo.>', false],
    ['foo.', 'foo.*', false],
    ['.foo', '*.foo', false],
    ['foo.bar', 'foo.', false],
    ['foo.bar', 'foo.>.bar', false],
  ] as const)('%j vs filter %j → %s', (subject, filter, expected) => {
    expect(subjectMatchesFilter(subject, filter)).toBe(expected);
  });
});
