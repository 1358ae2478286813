// Whether two subjects (wildcards allowed on both sides) can match a common literal subject —
// nats-server's SubjectsCollide, used for stream subject overlap and NAMES/LIST `subject` filters.

export function subjectsCollide(a: string, b: string): boolean {
  if (a === b) return true;
  const at = a.split('.');
  const bt = b.split('.');
  const n = Math.min(at.length, bt.length);
  for (let i = 0; i < n; i++) {
    const x = at[i]!;
    const y = bt[i]!;
    if (x === '>' || y === '>') return true;
    if (x !== y && x !== '*' && y !== '*') return false;
  }
  return at.length === bt.length;
}

/** True when any subject of `as` collides with any subject of `bs`. */
export function anySubjectsCollide(as: readonly string[], bs: readonly string[]): boolean {
  for (const a of as) for (const b of bs) if (subjectsCollide(a, b)) return true;
  return false;
}

/** nats-server's subjectIsSubsetMatch: every subject `sub` matches is also matched by `test`. */
export function subjectIsSubsetOf(sub: string, test: string): boolean {
  const st = sub.split('.');
  const tt = test.split('.');
  for (let i = 0; i < tt.length; i++) {
    const t = tt[i]!;
    if (t === '>') return st.length > i;
    if (i >= st.length) return false;
    const s = st[i]!;
    if (t === '*') {
      if (s === '>') return false;
      continue;
    }
    if (s !== t) return false;
  }
  return st.length === tt.length;
}
