// The human summary printed at the end of a run (the JSON summary is the same object, written as is).
const fmtMs = (v) => (v === null || v === undefined ? 'n/a' : `${Math.round(v)} ms`);

export function humanSummary(s) {
  const lines = [];
  lines.push(`flotilla-chaos: ${s.server}, ${s.nodes} nodes, ${Math.round(s.durationMs / 1000)} s of faults, seed ${s.seed}`);
  for (const [name, st] of Object.entries(s.streams)) {
    const last = Object.entries(st.lastSeq).map(([n, q]) => `${n}=${q}`).join(' ');
    const lat = st.publishLatencyMs;
    lines.push(`  ${name} (R${st.replicas}): acked ${st.acked} (publish attempts ${st.publishAttempts}, duplicate acks ${st.duplicateAcks}, ack latency p50 ${fmtMs(lat.p50)} p99 ${fmtMs(lat.p99)}); replicas read: ${st.replicasRead.join(',') || 'none'} last seq ${last || 'n/a'}`);
    if (st.lostEverywhere) lines.push(`    acknowledged but on no replica: ${st.lostEverywhere}`);
    lines.push(`    consumer: received ${st.received} of ${st.acked} acked, deliveries ${st.deliveries}, redeliveries ${st.redeliveries}, out-of-order first deliveries ${st.outOfOrderFirstDeliveries}`);
    if (st.topology) lines.push(`    mirror holds ${st.topology.mirrorHeld ?? "unread"}, sourcing stream holds ${st.topology.sourceHeld ?? "unread"} (every acked message checked in both)`);
  }
  const kinds = Object.entries(s.faults.byKind).map(([k, n]) => `${k} ${n}`).join(', ');
  lines.push(`  faults: ${s.faults.injected} injected (${kinds || 'none'}), ${s.faults.skipped} skipped, ${s.faults.errors} failed to inject`);
  lines.push(`  elections seen: ${Object.entries(s.elections).map(([g, n]) => `${g} ${n}`).join(', ')}`);
  const w = s.failoverWindows.streamLeaderFaults;
  lines.push(`  failover windows, faults that hit a stream's leader (n=${w.count}): max ${fmtMs(w.maxMs)}, p50 ${fmtMs(w.p50Ms)}, p99 ${fmtMs(w.p99Ms)}`);
  const ow = s.failoverWindows.otherFaults;
  if (ow) lines.push(`  no-ack windows, faults that missed the leader (n=${ow.count}): max ${fmtMs(ow.maxMs)}, p50 ${fmtMs(ow.p50Ms)}, p99 ${fmtMs(ow.p99Ms)}`);
  lines.push(`  by kind (stream-leader kinds on the stream hit, other kinds on every stream):`);
  for (const [k, ws] of Object.entries(s.failoverWindows.byKind)) {
    lines.push(`    ${k.padEnd(24)} n=${String(ws.count).padEnd(3)} max ${fmtMs(ws.maxMs)}, p50 ${fmtMs(ws.p50Ms)}, p99 ${fmtMs(ws.p99Ms)}`);
  }
  const errs = Object.entries(s.publishErrors).map(([c, n]) => `${c} ${n}`).join(', ');
  lines.push(`  publish errors (retried): ${errs || 'none'}`);
  if (s.violations.total === 0) {
    lines.push(`  verdict: PASS, 0 violations`);
  } else {
    const by = Object.entries(s.violations.byType).map(([t, n]) => `${t} ${n}`).join(', ');
    lines.push(`  verdict: FAIL, ${s.violations.total} violations (${by})`);
    for (const [t, ex] of Object.entries(s.violations.examples)) lines.push(`    e.g. ${t}: ${JSON.stringify(ex[0])}`);
    lines.push(`  replay: ${s.replay}`);
  }
  if (s.runDir) lines.push(`  stores and logs: ${s.runDir}`);
  return lines.join('\n');
}
