// A seeded PRNG (mulberry32) so one seed always yields the same fault schedule: the seed printed at the
// start and on a failure replays the run's faults.
export function seededRandom(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    /** uniform in [0, 1) */
    next,
    /** integer uniform in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** A fresh seed when the user gave none (32 bits, printable). */
export function randomSeed() {
  return Math.floor(Math.random() * 0xffffffff) >>> 0;
}
