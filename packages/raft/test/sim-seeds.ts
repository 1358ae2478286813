import { type SimOptions, simulate } from '@flotilla/raft';

/** Runs seeds [first, last] and returns one line per failing seed, each with the command that replays it. */
export function failingSeeds(first: number, last: number, options: Omit<SimOptions, 'seed'>): string[] {
  const failures: string[] = [];
  for (let seed = first; seed <= last; seed++) {
    const result = simulate({ ...options, seed });
    if (result.violations.length > 0) failures.push(`${result.violations[0]} — replay: ${result.replay}`);
  }
  return failures;
}
