// --topology: beside each main stream an R<r> mirror (<name>_MIR) and an R<r> sourcing stream (<name>_SRC)
// follow it through the faults; afterwards, once they caught up, every acknowledged origin message must be in
// the mirror at its origin sequence, and in the sourcing stream exactly once, in origin order.
import { sleep } from './sleep.js';

export function topologyConfigs(s) {
  return [
    { name: `${s.name}_MIR`, mirror: { name: s.name }, num_replicas: s.replicas, storage: 'file' },
    { name: `${s.name}_SRC`, sources: [{ name: s.name }], num_replicas: s.replicas, storage: 'file' },
  ];
}

/** Waits (bounded) until the mirror's last sequence and the source's count reach the origin's. */
export async function waitTopologyCaughtUp(admin, s, timeoutMs, log) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [o, m, src] = await Promise.all([s.name, `${s.name}_MIR`, `${s.name}_SRC`].map((n) => admin.streamInfo(n, 2_000).catch(() => null)));
    if (o && m && src && m.state.last_seq >= o.state.last_seq && src.state.messages >= o.state.messages) return true;
    await sleep(500);
  }
  log(`${s.name}: mirror/source not caught up within ${timeoutMs} ms`);
  return false;
}

/** seq → id of every message the stream's leader holds (bounded parallel reads), or null with the reason. */
export async function readStreamIds(admin, stream, idOf) {
  try {
    const info = await admin.streamInfo(stream, 5_000);
    const out = new Map();
    let next = info.state.first_seq;
    const last = info.state.last_seq;
    const worker = async () => {
      while (next <= last && info.state.messages > 0) {
        const seq = next++;
        const m = await admin.getMessage(stream, seq, 5_000);
        if (m !== null) out.set(seq, idOf(m.data));
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    return { ok: true, ids: new Map([...out].sort((a, b) => a[0] - b[0])) };
  } catch (err) {
    return { ok: false, reason: String(err?.message ?? err) };
  }
}

/** Adds the mirror and source violations of one stream to `v` (verdict.js's Violations). */
export function checkTopology(v, s) {
  const { origin, mirror, source } = s.topology;
  const stream = s.name;
  if (!mirror.ok) v.add('mirror-unread', { stream, reason: mirror.reason });
  if (!source.ok) v.add('source-unread', { stream, reason: source.reason });
  if (mirror.ok) {
    for (const [id, seq] of s.acks) if (mirror.ids.get(seq) !== id) v.add('mirror-missing', { stream, id, ackedSeq: seq, held: mirror.ids.get(seq) ?? null });
    if (origin.ok) for (const [seq, id] of mirror.ids) if (origin.ids.get(seq) !== id) v.add('mirror-foreign', { stream, seq, id });
  }
  if (source.ok) {
    const count = new Map();
    for (const id of source.ids.values()) count.set(id, (count.get(id) ?? 0) + 1);
    for (const [id, seq] of s.acks) {
      const n = count.get(id) ?? 0;
      if (n === 0) v.add('source-missing', { stream, id, ackedSeq: seq });
      else if (n > 1) v.add('source-duplicate', { stream, id, copies: n });
    }
    if (origin.ok) {
      const originSeqOf = new Map([...origin.ids].map(([seq, id]) => [id, seq]));
      let last = 0;
      for (const [seq, id] of source.ids) {
        const o = originSeqOf.get(id);
        if (o === undefined) v.add('source-foreign', { stream, seq, id });
        else if (o <= last) v.add('source-order', { stream, seq, id, originSeq: o, after: last });
        else last = o;
      }
    }
  }
  return { mirrorHeld: mirror.ok ? mirror.ids.size : null, sourceHeld: source.ok ? source.ids.size : null };
}
