// PendingAcks behaves as the Map it replaces: same contents, sizes and iteration order (randomized, seeded).
import { SeededRandom } from '@flotilla/raft';
import { describe, expect, it } from 'vitest';
import { PendingAcks, type PendingAck } from '../src/consumer/pending-acks.js';

function check(p: PendingAcks, m: Map<number, PendingAck>, context: string): void {
  expect(p.size, context).toBe(m.size);
  expect([...p.entries()], context).toEqual([...m.entries()]);
  expect([...p.keys()], context).toEqual([...m.keys()]);
}

describe('PendingAcks', () => {
  for (const [seed, gapMax] of [
    [1, 1],
    [2, 3],
    [3, 50],
    [4, 20_000], // sparse keys: the Map fallback
  ] as const) {
    it(`matches a Map (seed ${seed}, gaps up to ${gapMax})`, () => {
      const rng = new SeededRandom(seed);
      const rand = (): number => rng.next();
      const p = new PendingAcks();
      const m = new Map<number, PendingAck>();
      let next = 1;
      for (let op = 0; op < 20_000; op++) {
        const r = rand();
        const context = `seed=${seed} op=${op}`;
        if (r < 0.45) {
          next += 1 + Math.floor(rand() * gapMax);
          const v = { dseq: op, tsMs: op };
          p.set(next, v);
          m.set(next, v);
        } else if (r < 0.8 && m.size > 0) {
          // mostly the oldest (in-order acks), sometimes any
          const keys = [...m.keys()];
          const k = rand() < 0.7 ? keys[0]! : keys[Math.floor(rand() * keys.length)]!;
          expect(p.delete(k), context).toBe(m.delete(k));
        } else if (r < 0.85) {
          const k = Math.floor(rand() * (next + 5));
          expect(p.delete(k), context).toBe(m.delete(k));
        } else if (r < 0.87 && m.size > 0) {
          // an existing key set again keeps its place
          const k = [...m.keys()][Math.floor(rand() * m.size)]!;
          const v = { dseq: -op, tsMs: op };
          p.set(k, v);
          m.set(k, v);
        } else if (r < 0.875) {
          // below everything: out of order (the Map fallback keeps insertion order)
          const k = Math.max(1, next - 100_000);
          if (!m.has(k)) {
            const v = { dseq: op, tsMs: op };
            p.set(k, v);
            m.set(k, v);
          }
        } else if (r < 0.877) {
          p.clear();
          m.clear();
        }
        const k = Math.floor(rand() * (next + 5));
        expect(p.get(k), context).toBe(m.get(k));
        expect(p.has(k), context).toBe(m.has(k));
        if (op % 97 === 0) check(p, m, context);
      }
      check(p, m, `seed=${seed} end`);
    });
  }

  it('first entry and in-order removal over a long run keep working after compaction', () => {
    const p = new PendingAcks();
    for (let i = 1; i <= 50_000; i++) {
      p.set(i, { dseq: i, tsMs: 0 });
      if (i > 20_000) {
        expect(p.delete(i - 20_000)).toBe(true);
        expect(p.entries().next().value![0]).toBe(i - 19_999);
      }
    }
    expect(p.size).toBe(20_000);
    expect(p.get(30_001)?.dseq).toBe(30_001);
    expect(p.get(30_000)).toBeUndefined();
  });
});
