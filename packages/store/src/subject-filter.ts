/**
 * A compiled NATS subject filter (`*` one token, `>` one or more trailing tokens).
 * Empty filter means "all", like nats-server's `_EMPTY_`.
 */
export class SubjectFilter {
  readonly source: string;
  readonly matchesAll: boolean;
  readonly isLiteral: boolean;
  private readonly tokens: string[];
  private readonly tailWildcard: boolean;

  constructor(filter: string | undefined) {
    this.source = filter ?? '';
    this.matchesAll = this.source === '' || this.source === '>';
    this.tokens = this.source.split('.');
    this.tailWildcard = this.tokens[this.tokens.length - 1] === '>';
    this.isLiteral = !this.matchesAll && !this.tokens.some((t) => t === '*' || t === '>');
  }

  matches(subject: string): boolean {
    if (this.matchesAll) return true;
    if (this.isLiteral) return subject === this.source;
    const parts = subject.split('.');
    const n = this.tokens.length;
    if (this.tailWildcard ? parts.length < n : parts.length !== n) return false;
    const fixed = this.tailWildcard ? n - 1 : n;
    for (let i = 0; i < fixed; i++) {
      const t = this.tokens[i];
      if (t !== '*' && t !== parts[i]) return false;
    }
    return true;
  }
}
