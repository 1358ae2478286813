// Failover windows from the acknowledgement timeline: for a fault starting at t, the longest stretch
// without a successful acknowledged publish on a stream between t and the next fault (t itself counts as
// the first point, so a stream that stalls from the fault on measures from the fault).
import { windowStats } from './percentiles.js';

function firstIndexAfter(sorted, t) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function noAckWindowMs(ackTimesMs, fromMs, toMs) {
  let last = fromMs;
  let longest = 0;
  for (let i = firstIndexAfter(ackTimesMs, fromMs); i < ackTimesMs.length && ackTimesMs[i] <= toMs; i++) {
    longest = Math.max(longest, ackTimesMs[i] - last);
    last = ackTimesMs[i];
  }
  // the tail counts too: a stream that never recovers before the next fault stalled that long
  return Math.max(longest, toMs - last);
}

/**
 * @param faults executed faults ({kind, stream, startMs})
 * @param ackTimes Map<stream, sorted ms>
 * @param endMs end of publishing
 */
export function failoverWindows(faults, ackTimes, endMs) {
  const perFault = [];
  faults.forEach((f, i) => {
    const until = i + 1 < faults.length ? faults[i + 1].startMs : endMs;
    for (const [stream, times] of ackTimes) {
      // a leader fault for this stream: aimed at its leader, or any fault that happened to hit the node leading it
      const leaderFault = f.stream === stream || (f.leaderOf ?? []).includes(stream);
      perFault.push({ index: f.index, kind: f.kind, target: f.target, stream, leaderFault, windowMs: noAckWindowMs(times, f.startMs, until) });
    }
  });
  const kinds = [...new Set(faults.map((f) => f.kind))];
  const byKind = Object.fromEntries(
    kinds.map((k) => {
      // a stream-leader fault is measured on the stream whose leader it hit; any other fault on every stream
      const ws = perFault.filter((w) => w.kind === k && (!k.endsWith('stream-leader') || w.leaderFault)).map((w) => w.windowMs);
      return [k, windowStats(ws)];
    }),
  );
  const leaderWindows = perFault.filter((w) => w.leaderFault).map((w) => w.windowMs);
  const otherWindows = perFault.filter((w) => !w.leaderFault).map((w) => w.windowMs);
  return { streamLeaderFaults: windowStats(leaderWindows), otherFaults: windowStats(otherWindows), allFaults: windowStats(perFault.map((w) => w.windowMs)), byKind, perFault };
}
