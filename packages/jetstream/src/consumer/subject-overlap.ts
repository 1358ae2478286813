// Relations between subject filters (wildcards on both sides) that consumer validation needs.

/** True when some literal subject matches both filters (nats-server's subjectsCollide). */
export function subjectsCollide(a: string, b: string): boolean {
  if (a === b) return true;
  const ta = a.split('.');
  const tb = b.split('.');
  const n = Math.min(ta.length, tb.length);
  for (let i = 0; i < n; i++) {
    const x = ta[i]!;
    const y = tb[i]!;
    if (x === '>' || y === '>') return true;
    if (x !== '*' && y !== '*' && x !== y) return false;
  }
  // A '>' in the shared prefix returned above; otherwise only equal lengths can meet.
  return ta.length === tb.length;
}

/** True when every subject matching `sub` also matches `sup`. */
export function subjectIsSubset(sub: string, sup: string): boolean {
  const ts = sub.split('.');
  const tp = sup.split('.');
  for (let i = 0; i < tp.length; i++) {
    const p = tp[i]!;
    if (p === '>') return i < ts.length;
    const s = ts[i];
    if (s === undefined) return false;
    if (p === '*') {
      if (s === '>') return false;
      continue;
    }
    if (s !== p) return false;
  }
  return ts.length === tp.length;
}
