// The consumer entries a stream's Raft group carries (opaque to the group): a consumer's config (create or
// update), its whole state (coalesced on the leader), its removal, or every consumer at once (`sync`: what a
// replica that caught up from a stream snapshot asks the leader for). Whole states rather than per-ack
// deltas: applying one is idempotent and needs nothing earlier, so a replica that caught up from a snapshot
// or replays its log after a restart ends in the same place.
import type { ConsumerMeta } from '../consumer/consumer-storage.js';
import type { ConsumerStateSnapshot } from '../consumer/consumer-state.js';

export type ConsumerReplicationEntry =
  | { op: 'meta'; meta: ConsumerMeta }
  | { op: 'state'; name: string; state: ConsumerStateSnapshot }
  | { op: 'remove'; name: string }
  /** The complete set: consumers not in it are removed. */
  | { op: 'sync'; consumers: Array<{ meta: ConsumerMeta; state: ConsumerStateSnapshot | null }> };

/** First byte of every consumer entry, so a misrouted stream entry is recognised and refused. */
const TAG = 0x43; // 'C'

export function encodeConsumerEntry(entry: ConsumerReplicationEntry): Buffer {
  const body = Buffer.from(JSON.stringify(entry), 'utf8');
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = TAG;
  body.copy(out, 1);
  return out;
}

/** null for anything that is not a well-formed consumer entry. */
export function decodeConsumerEntry(payload: Uint8Array): ConsumerReplicationEntry | null {
  if (payload.length < 2 || payload[0] !== TAG) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset + 1, payload.length - 1).toString('utf8'));
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object') return null;
  const e = v as Record<string, unknown>;
  switch (e['op']) {
    case 'meta': {
      const m = e['meta'] as Record<string, unknown> | undefined;
      if (!m || typeof m['name'] !== 'string' || typeof m['config'] !== 'object' || m['config'] === null) return null;
      return e as unknown as ConsumerReplicationEntry;
    }
    case 'state': {
      const s = e['state'] as Record<string, unknown> | undefined;
      if (typeof e['name'] !== 'string' || !s || !Array.isArray(s['pending']) || !Array.isArray(s['redelivered'])) return null;
      return e as unknown as ConsumerReplicationEntry;
    }
    case 'remove':
      return typeof e['name'] === 'string' ? (e as unknown as ConsumerReplicationEntry) : null;
    case 'sync': {
      const list = e['consumers'];
      if (!Array.isArray(list)) return null;
      for (const c of list as Array<Record<string, unknown> | null>) {
        const m = c?.['meta'] as Record<string, unknown> | undefined;
        if (!m || typeof m['name'] !== 'string' || typeof m['config'] !== 'object' || m['config'] === null) return null;
      }
      return e as unknown as ConsumerReplicationEntry;
    }
    default:
      return null;
  }
}
