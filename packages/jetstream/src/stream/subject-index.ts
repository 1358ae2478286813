// The subjects of every stream in one token tree, so "does this new subject overlap a stream's?" costs the
// depth of the subject (plus what its wildcards span), not one comparison per existing subject: a stream
// with 2,000 subjects next to one with 10,000 was 20 million pairwise checks. Overlap is subjectsCollide's:
// some literal subject matches both (wildcards on either side).

// Fields are made on first use: a 10,000-subject stream makes tens of thousands of nodes, most of them leaves.
class IndexNode {
  literals: Map<string, IndexNode> | null = null;
  star: IndexNode | null = null;
  /** Streams with a subject ending here (a path of tokens, `*` included). */
  ends: Set<string> | null = null;
  /** Streams with a subject ending in `>` right below this node. */
  tails: Set<string> | null = null;
  /** Streams with any subject at or below this node (ends and tails included). */
  below: Set<string> | null = null;

  child(token: string): IndexNode {
    if (token === '*') return (this.star ??= new IndexNode());
    const literals = (this.literals ??= new Map());
    let c = literals.get(token);
    if (c === undefined) {
      c = new IndexNode();
      literals.set(token, c);
    }
    return c;
  }
}

/** True when `owners` has a stream other than `except`. */
function hasOther(owners: ReadonlySet<string> | null, except: string | null): boolean {
  return owners !== null && owners.size > (except !== null && owners.has(except) ? 1 : 0);
}

export class SubjectIndex {
  private readonly root = new IndexNode();

  /** Built once per set of streams (the owner rebuilds it after a change): no removal. */
  add(stream: string, subjects: readonly string[]): void {
    for (const subject of subjects) this.insert(stream, subject);
  }

  /** True when some subject in `subjects` overlaps a subject of a stream other than `except`. */
  overlaps(subjects: readonly string[], except: string | null = null): boolean {
    for (const subject of subjects) if (this.collides(this.root, subject.split('.'), 0, except)) return true;
    return false;
  }

  private insert(stream: string, subject: string): void {
    const tokens = subject.split('.');
    let node = this.root;
    const path: IndexNode[] = [];
    for (let i = 0; i < tokens.length; i++) {
      path.push(node);
      const t = tokens[i]!;
      if (t === '>' && i === tokens.length - 1) {
        (node.tails ??= new Set()).add(stream);
        break;
      }
      node = node.child(t);
      if (i === tokens.length - 1) {
        path.push(node);
        (node.ends ??= new Set()).add(stream);
      }
    }
    for (const n of path) (n.below ??= new Set()).add(stream);
  }

  /** Whether tokens[i…] collides with some other stream's subject stored at or below `node`. */
  private collides(node: IndexNode, tokens: readonly string[], i: number, except: string | null): boolean {
    if (i === tokens.length) return hasOther(node.ends, except);
    // A stored `>` here takes every remaining token (there is at least one).
    if (hasOther(node.tails, except)) return true;
    const t = tokens[i]!;
    if (t === '>') {
      // Anything at least one token below this node; `below` counts this node's own ends, which do not.
      for (const c of this.children(node)) if (hasOther(c.below, except)) return true;
      return hasOther(node.tails, except);
    }
    if (node.star !== null && this.collides(node.star, tokens, i + 1, except)) return true;
    if (t === '*') {
      if (node.literals !== null) for (const c of node.literals.values()) if (this.collides(c, tokens, i + 1, except)) return true;
      return false;
    }
    const c = node.literals?.get(t);
    return c !== undefined && this.collides(c, tokens, i + 1, except);
  }

  private *children(node: IndexNode): Iterable<IndexNode> {
    if (node.star !== null) yield node.star;
    if (node.literals !== null) yield* node.literals.values();
  }
}
