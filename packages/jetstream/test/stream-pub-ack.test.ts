import { describe, it, expect } from 'vitest';
import { PubAckEncoder } from '../src/stream/pub-ack.js';

describe('PubAckEncoder', () => {
  it('writes the same bytes as nats-server for every digit count', () => {
    const plain = new PubAckEncoder('ORDERS', undefined);
    const hub = new PubAckEncoder('ORDERS', 'hub');
    for (const seq of [0, 1, 9, 10, 99, 100, 123_456, 1_000_000_000, 2 ** 32, 123_456_789_012_345, Number.MAX_SAFE_INTEGER]) {
      expect(plain.ack(seq).toString()).toBe(`{"stream":"ORDERS", "seq":${seq}}`);
      expect(hub.ack(seq).toString()).toBe(`{"stream":"ORDERS", "domain":"hub", "seq":${seq}}`);
    }
  });

  it('escapes the stream name and hands out a fresh buffer per ack', () => {
    const enc = new PubAckEncoder('a"b', undefined);
    const first = enc.ack(7);
    const second = enc.ack(8);
    expect(first.toString()).toBe('{"stream":"a\\"b", "seq":7}');
    expect(second.toString()).toBe('{"stream":"a\\"b", "seq":8}');
    expect(first.buffer === second.buffer && first.byteOffset === second.byteOffset).toBe(false);
  });
});
