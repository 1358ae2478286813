import { describe, it, expect } from 'vitest';
import { formatTimeNs, parseTimeNs, ZERO_TIME } from '../src/api/time-format.js';

describe('Go RFC3339Nano times', () => {
  it.each([
    [0n, ZERO_TIME],
    [1_795_983_481_224_968_091n, '2026-11-29T20:18:01.224968091Z'],
    [1_795_983_481_224_968_000n, '2026-11-29T20:18:01.224968Z'],
    [1_795_983_481_000_000_000n, '2026-11-29T20:18:01Z'],
    [1_795_983_481_100_000_000n, '2026-11-29T20:18:01.1Z'],
  ])('%s → %s', (ns, text) => {
    expect(formatTimeNs(ns)).toBe(text);
    if (ns > 0n) expect(parseTimeNs(text)).toBe(ns);
  });

  it('parses offsets and rejects garbage', () => {
    expect(parseTimeNs('2026-11-29T21:18:01.5+01:00')).toBe(1_795_983_481_500_000_000n);
    expect(parseTimeNs('yesterday')).toBeNull();
  });
});
