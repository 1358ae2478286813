// A uniform random integer per message without allocating: Math.random() in Node 20 allocates (a scavenge
// every ~64k calls in a tight loop), which the per-message path must not. Mulberry32 on an int32 state kept in
// a typed array (a store there never boxes). Not for anything secret: only spreading load.
const state = new Int32Array(1);
state[0] = (Math.random() * 0x7fffffff) | 1;

/** An integer in [0, n), n ≥ 1, uniformly. */
export function randomBelow(n: number): number {
  const a = (state[0] = (state[0]! + 0x6d2b79f5) | 0);
  let t = Math.imul(a ^ (a >>> 15), 1 | a);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
}
