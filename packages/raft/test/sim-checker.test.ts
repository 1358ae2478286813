import { simulate } from '@flotilla/raft';
import { describe, expect, it } from 'vitest';

describe('the simulation checker can fail', () => {
  it('acknowledging before persisting is caught within 2,000 seeds', () => {
    let found: ReturnType<typeof simulate> | null = null;
    for (let seed = 1; seed <= 2000 && !found; seed++) {
      const result = simulate({ seed, nodes: 3, steps: 300, bugs: { ackBeforePersist: true } });
      if (result.violations.length > 0) found = result;
    }
    expect(found).not.toBeNull();
    expect(found!.replay).toBe(`npm run sim -- --seed ${found!.seed} --nodes 3 --steps 300 --bug ackBeforePersist`);
    // Replaying the seed reproduces the same violation (deterministic).
    const again = simulate({ seed: found!.seed, nodes: 3, steps: 300, bugs: { ackBeforePersist: true } });
    expect(again.violations).toEqual(found!.violations);
  });

  it('the same seed without the bug is clean', () => {
    for (let seed = 1; seed <= 50; seed++) expect(simulate({ seed, nodes: 3, steps: 300 }).violations).toEqual([]);
  });
});
