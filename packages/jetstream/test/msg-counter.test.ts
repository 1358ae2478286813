// Counter arithmetic as nats-server 2.14.5 does it (stream.go / jetstream_batching.go): big-integer totals,
// the {"val":...} body, Nats-Counter-Sources per origin, and the header checks' errors.
import { describe, it, expect } from 'vitest';
import { applyIncrement, CounterCache, counterHeaderError, counterStateOf, parseIncr, setHeader, ZERO_COUNTER } from '../src/stream/msg-counter.js';

const hdr = (lines: string[]) => Buffer.from(`NATS/1.0\r\n${lines.join('\r\n')}\r\n\r\n`);

describe('Nats-Incr', () => {
  it('parses base-10 integers of any size only', () => {
    expect(parseIncr('+18446744073709551616')).toBe(18446744073709551616n);
    expect(parseIncr('-3')).toBe(-3n);
    for (const bad of ['', '1.0', '1e3', '0x1', ' 1', '1_000']) expect(parseIncr(bad), bad).toBeNull();
  });

  it('errors in 2.14 order', () => {
    const code = (incr: string, h: object, allow: boolean, len = 0, sourced = false) => counterHeaderError(incr, h, allow, len, sourced)?.errCode ?? 0;
    expect(code('x', {}, false)).toBe(10171);
    expect(code('1', {}, false)).toBe(10168);
    expect(code('1', {}, true, 3)).toBe(10170);
    expect(code('1', { expectedLastSeq: '4' }, true)).toBe(10171);
    expect(code('1', { expectedLastSeq: 'x' }, true)).toBe(0);
    expect(code('1', { rollup: 'sub' }, true)).toBe(10171);
    expect(code('1', {}, false, 3, true)).toBe(0);
  });
});

describe('applyIncrement', () => {
  it('adds to the total and writes the body', () => {
    const r = applyIncrement({ total: 2n ** 70n, sources: null }, 1n, hdr(['Nats-Incr: 1']), Buffer.alloc(0));
    expect('data' in r && r.data.toString()).toBe(`{"val":"${2n ** 70n + 1n}"}`);
  });

  it('a sourced total adds its difference to the origin last seen, recorded in Nats-Counter-Sources', () => {
    const src = (seq: number, val: string) =>
      applyIncrement(
        state,
        BigInt(val),
        hdr(['Nats-Incr: 99', `Nats-Stream-Source: EU ${seq} > > eu.hits`]),
        Buffer.from(`{"val":"${val}"}`),
      );
    let state = ZERO_COUNTER;
    const a = src(1, '10');
    if (!('data' in a)) throw new Error('refused');
    state = a.state;
    const b = src(2, '13');
    if (!('data' in b)) throw new Error('refused');
    expect(b.total).toBe('13');
    expect(b.header.toString()).toContain('Nats-Incr: 3\r\n');
    expect(b.header.toString()).toContain('Nats-Counter-Sources: {"EU":{"eu.hits":"13"}}');
    expect(counterStateOf(b.header, b.data)).toEqual({ total: 13n, sources: { EU: { 'eu.hits': '13' } } });
  });

  it('a body that is not a counter is broken', () => {
    expect(counterStateOf(null, Buffer.from('hello'))).toBe('broken');
    expect(applyIncrement(ZERO_COUNTER, 1n, hdr(['Nats-Stream-Source: X 1 > > a']), Buffer.from('nope'))).toMatchObject({ errCode: 10172 });
  });

  it('setHeader replaces in place or appends', () => {
    expect(setHeader(hdr(['A: 1', 'B: 2']), 'A', '3').toString()).toBe('NATS/1.0\r\nA: 3\r\nB: 2\r\n\r\n');
    expect(setHeader(null, 'A', '3').toString()).toBe('NATS/1.0\r\nA: 3\r\n\r\n');
  });
});

describe('CounterCache', () => {
  it('answers while its entry is the subject last message, else asks for a load', () => {
    const c = new CounterCache();
    expect(c.base('a', 0)).toBe(ZERO_COUNTER);
    expect(c.base('a', 4)).toBe('load');
    c.stored('a', 4, { total: 7n, sources: null });
    expect(c.base('a', 4)).toEqual({ total: 7n, sources: null });
    expect(c.base('a', 5)).toBe('load');
  });
});
