import { describe, expect, it } from 'vitest';
import { failingSeeds } from './sim-seeds.js';

describe('simulation, 5 nodes', () => {
  it('seeds 1..225 keep every safety invariant and stay live', () => {
    expect(failingSeeds(1, 225, { nodes: 5, steps: 300 })).toEqual([]);
  }, 120_000);
});
