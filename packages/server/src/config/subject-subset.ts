// Whether every subject one pattern matches is also matched by another: how nats-server decides that an
// import's subject is covered by an export (its isSubsetMatch).

/** true when each subject matched by `subject` is matched by `pattern` (both may hold wildcards). */
export function isSubsetMatch(subject: string, pattern: string): boolean {
  const tokens = subject.split('.');
  const test = pattern.split('.');
  for (let i = 0; i < test.length; i++) {
    if (i >= tokens.length) return false;
    const t2 = test[i]!;
    if (t2 === '') return false;
    if (t2 === '>') return true;
    const t1 = tokens[i]!;
    if (t1 === '' || t1 === '>') return false;
    if (t1 === '*') {
      if (t2 !== '*') return false;
      continue;
    }
    if (t2 !== '*' && t1 !== t2) return false;
  }
  return tokens.length === test.length;
}
