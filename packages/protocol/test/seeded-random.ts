// Tiny deterministic PRNG (mulberry32) so every randomized protocol test replays from its printed seed. The
// same generator is raft's SeededRandom; protocol sits beside raft at the bottom and imports nothing, so its
// tests keep this copy.
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(rand: () => number, maxExclusive: number): number {
  return Math.floor(rand() * maxExclusive);
}
