// The subject a message gets when it crosses into another account: an import's `to` or `prefix`. Wildcard
// tokens of the destination take the tokens the source's wildcards matched, in order (`*` the next one,
// `$N` the N-th, `>` the rest), as nats-server's import transforms do.

/** Maps a subject matched by the source pattern to the destination's; null when it stays the same. */
export type SubjectMapping = ((subject: string) => string) | null;

export function subjectMapping(from: string, to: string): SubjectMapping {
  if (from === to) return null;
  const fromTokens = from.split('.');
  if (!fromTokens.some((t) => t === '*' || t === '>')) return () => to;
  const starAt: number[] = [];
  let restAt = -1;
  fromTokens.forEach((t, i) => {
    if (t === '*') starAt.push(i);
    else if (t === '>') restAt = i;
  });
  const toTokens = to.split('.');
  return (subject) => {
    const tokens = subject.split('.');
    let nextStar = 0;
    const out: string[] = [];
    for (const t of toTokens) {
      if (t === '*') out.push(tokens[starAt[nextStar++]!] ?? '');
      else if (t === '>') out.push(restAt < 0 ? '' : tokens.slice(restAt).join('.'));
      else if (/^\$\d+$/.test(t)) out.push(tokens[starAt[Number(t.slice(1)) - 1]!] ?? '');
      else out.push(t);
    }
    return out.join('.');
  };
}
