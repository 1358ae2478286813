import { type RaftTestBugs, simulate } from '@flotilla/raft';
import { describe, expect, it } from 'vitest';

/** First seed in 1..2000 whose run reports a safety violation (liveness failures are not counted). */
function firstSafetyViolation(bugs: RaftTestBugs): ReturnType<typeof simulate> | null {
  for (let seed = 1; seed <= 2000; seed++) {
    const result = simulate({ seed, nodes: 3, steps: 300, bugs });
    if (result.violations.some((v) => !v.includes('liveness'))) return result;
  }
  return null;
}

describe('the simulation checker can fail', () => {
  const bugs: { name: keyof RaftTestBugs; what: string }[] = [
    { name: 'ackBeforePersist', what: 'acknowledging appends before persisting them' },
    { name: 'ignoreLogOnVote', what: 'voting for a candidate with a stale log' },
    { name: 'leaseTooLong', what: 'a leader lease outliving the election timeout' },
  ];
  for (const bug of bugs) {
    it(`${bug.what} is caught within 2,000 seeds, with a replay command`, () => {
      const found = firstSafetyViolation({ [bug.name]: true });
      expect(found).not.toBeNull();
      expect(found!.replay).toBe(`npm run sim -- --seed ${found!.seed} --nodes 3 --steps 300 --bug ${bug.name}`);
      // Replaying the seed reproduces the same violation (deterministic).
      const again = simulate({ seed: found!.seed, nodes: 3, steps: 300, bugs: { [bug.name]: true } });
      expect(again.violations).toEqual(found!.violations);
      // The same seed without the bug is clean.
      expect(simulate({ seed: found!.seed, nodes: 3, steps: 300 }).violations).toEqual([]);
    }, 120_000);
  }
});
