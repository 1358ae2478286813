// Relations between two subject filters (wildcards on both sides), as nats-server computes them: stream
// subject overlap, consumer filter checks, NAMES/LIST `subject` filters.

/** nats-server's SubjectsCollide: some literal subject matches both `a` and `b`. */
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
  // A '>' in the shared prefix returned above; otherwise only equal lengths can meet.
  return at.length === bt.length;
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
