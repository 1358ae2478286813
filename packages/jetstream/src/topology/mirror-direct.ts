// `mirror_direct`: a mirror answers DIRECT.GET for its origin once it has mostly caught up (nats-server
// subscribes the mirror to the origin's direct-get subject when fewer than dgetCaughtUpThresh = 10 messages
// are pending).
import type { Stream } from '../stream/stream.js';

const CAUGHT_UP_LAG = 10;

/** A mirror of `origin` with mirror_direct that serves here and lags fewer than 10 messages, or undefined. */
export function mirrorServingDirect(streams: Iterable<Stream>, origin: string): Stream | undefined {
  for (const s of streams) {
    const m = s.config.mirror;
    if (m === undefined || m.name !== origin || !s.config.mirror_direct || m.external !== undefined || !s.isServing) continue;
    const info = s.topology.mirrorInfo();
    if (info !== undefined && info.active >= 0 && info.lag < CAUGHT_UP_LAG) return s;
  }
  return undefined;
}
