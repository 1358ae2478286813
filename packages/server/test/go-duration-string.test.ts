// Go's time.Duration.String() as nats-server prints durations in JSON.
import { describe, expect, it } from 'vitest';
import { goDurationString } from '../src/go-duration-string.js';

describe('goDurationString', () => {
  it.each([
    [0, '0s'],
    [0.5, '500µs'],
    [250, '250ms'],
    [1.5, '1.5ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [61_250, '1m1.25s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
  ])('%d ms → %s', (ms, text) => {
    expect(goDurationString(ms)).toBe(text);
  });
});
