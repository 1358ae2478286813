// The fault schedule: a list fixed by the seed before the run starts (kinds, start times, hold times and
// the random numbers that pick targets), so the same seed replays the same sequence of faults. Which node
// a "stream leader" fault hits is resolved when the fault fires.
import { seededRandom } from './seeded-random.js';

export const FAULT_KINDS = {
  'kill-stream-leader': { holdMs: [1_000, 5_000], needs: 'kill' },
  'kill-meta-leader': { holdMs: [1_000, 5_000], needs: 'kill' },
  'kill-random': { holdMs: [1_000, 5_000], needs: 'kill' },
  'pause-stream-leader': { holdMs: [2_000, 7_000], needs: 'pause' },
  'pause-random': { holdMs: [2_000, 7_000], needs: 'pause' },
  'partition-stream-leader': { holdMs: [3_000, 8_000], needs: 'partition' },
  'restart-random': { holdMs: [500, 2_000], needs: 'kill' },
};

export const DEFAULT_FAULTS = Object.keys(FAULT_KINDS);

/**
 * @param kinds fault kinds to draw from (uniformly)
 * @param durationMs run length; faults start after warmupMs and none starts in the last tailMs
 * @param gapMs mean pause between one fault's recovery and the next fault (scaled by 0.5..1.5)
 * @param fixedHoldMs every fault's hold time instead of the per-kind draw (the draw still happens, so the
 *   rest of the schedule stays the same as without it)
 */
export function buildSchedule({ seed, kinds, durationMs, warmupMs = 3_000, tailMs = 3_000, gapMs = 4_000, fixedHoldMs = null, maxFaults = 10_000 }) {
  const rng = seededRandom(seed);
  const faults = [];
  let atMs = warmupMs;
  while (atMs < durationMs - tailMs && faults.length < maxFaults) {
    const kind = rng.pick(kinds);
    const [lo, hi] = FAULT_KINDS[kind].holdMs;
    const drawn = rng.int(lo, hi);
    const holdMs = fixedHoldMs ?? drawn;
    faults.push({ index: faults.length, kind, atMs, holdMs, pick: rng.next(), streamPick: rng.next() });
    atMs += holdMs + Math.round(gapMs * (0.5 + rng.next()));
  }
  return faults;
}
