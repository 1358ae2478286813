import { describe, expect, it } from 'vitest';
import { failingSeeds } from './sim-seeds.js';

describe('simulation, 3 nodes', () => {
  it('seeds 1..300 keep every safety invariant and stay live', () => {
    expect(failingSeeds(1, 300, { nodes: 3, steps: 300 })).toEqual([]);
  }, 120_000);
});
