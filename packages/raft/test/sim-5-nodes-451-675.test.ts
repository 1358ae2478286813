import { describe, expect, it } from 'vitest';
import { failingSeeds } from './sim-seeds.js';

describe('simulation, 5 nodes', () => {
  it('seeds 451..675 keep every safety invariant and stay live', () => {
    expect(failingSeeds(451, 675, { nodes: 5, steps: 300 })).toEqual([]);
  }, 120_000);
});
