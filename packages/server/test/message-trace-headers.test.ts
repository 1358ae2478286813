// The trace header checks on raw header blocks: the one Nats-Trace-Dest check, nats-server's reading of the
// block into the request's header map, Nats-Trace-Only values, and header rewriting for stored / routed copies.
import { describe, expect, it } from 'vitest';
import { carriesTraceDest, isTraceOnly, traceHeaderMap, withHeader } from '../src/message-trace/trace-headers.js';

function message(header: string, payload = 'payload'): { buf: Buffer; headerBytes: number } {
  return { buf: Buffer.from(header + payload), headerBytes: Buffer.byteLength(header) };
}

describe('carriesTraceDest', () => {
  it('finds the key on any line of the block, matched exactly', () => {
    const first = message('NATS/1.0\r\nNats-Trace-Dest: t\r\n\r\n');
    expect(carriesTraceDest(first.buf, first.headerBytes)).toBe(true);
    const later = message('NATS/1.0\r\nA: 1\r\nB: 2\r\nNats-Trace-Dest:t\r\n\r\n');
    expect(carriesTraceDest(later.buf, later.headerBytes)).toBe(true);
    for (const miss of ['NATS/1.0\r\nnats-trace-dest: t\r\n\r\n', 'NATS/1.0\r\nX-Nats-Trace-Dest: t\r\n\r\n', 'NATS/1.0\r\nNats-Trace-Destination: t\r\n\r\n', 'NATS/1.0\r\nA: Nats-Trace-Dest: t\r\n\r\n']) {
      const m = message(miss);
      expect(carriesTraceDest(m.buf, m.headerBytes)).toBe(false);
    }
  });

  it('never looks into the payload', () => {
    const m = message('NATS/1.0\r\nA: 1\r\n\r\n', '\nNats-Trace-Dest: t\r\n');
    expect(carriesTraceDest(m.buf, m.headerBytes)).toBe(false);
  });
});

describe('traceHeaderMap', () => {
  it('keeps names in their case and values in order, trims blanks, leaves out empty keys and values', () => {
    const map = traceHeaderMap(Buffer.from('NATS/1.0\r\nNats-Trace-Dest:  t \r\nX-a: 1\r\nX-a:\t2\r\nEmpty: \r\n: v\r\n\r\n'));
    expect(map).toEqual({ 'Nats-Trace-Dest': ['t'], 'X-a': ['1', '2'] });
  });

  it('null for a block without the plain status line', () => {
    expect(traceHeaderMap(Buffer.from('NATS/1.0 503\r\nNats-Trace-Dest: t\r\n\r\n'))).toBeNull();
  });
});

describe('isTraceOnly', () => {
  it('1, true and on in any case', () => {
    for (const yes of ['1', 'true', 'TRUE', 'On']) expect(isTraceOnly(yes)).toBe(true);
    for (const no of [undefined, '0', 'false', 'yes', '']) expect(isTraceOnly(no)).toBe(false);
  });
});

describe('withHeader', () => {
  it('replaces the first line of the key, or adds one before the blank line', () => {
    const block = Buffer.from('NATS/1.0\r\nNats-Trace-Dest: t\r\nA: 1\r\n\r\n');
    expect(withHeader(block, 'Nats-Trace-Dest', 'trace disabled').toString()).toBe('NATS/1.0\r\nNats-Trace-Dest: trace disabled\r\nA: 1\r\n\r\n');
    expect(withHeader(block, 'Nats-Trace-Hop', '1.2').toString()).toBe('NATS/1.0\r\nNats-Trace-Dest: t\r\nA: 1\r\nNats-Trace-Hop: 1.2\r\n\r\n');
  });
});
