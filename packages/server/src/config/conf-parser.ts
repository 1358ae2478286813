// Parser for nats-server's configuration syntax (the format of nats-server.conf), producing plain JS
// objects. Behaviour follows nats-server 2.9.10's conf package: `key: value`, `key = value`, `key value`,
// `{}` maps, `[]` arrays, `#` and `//` comments, size suffixes, `include`, `$VAR` variables resolved from
// enclosing blocks and then the environment. Key case is preserved (option processing lower-cases keys).
// Line numbers and value kinds are kept in a side table (ConfDocument.positionOf) so that option
// processing can name the offending line for type errors.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

export type ConfValueKind = 'string' | 'integer' | 'float' | 'bool' | 'datetime' | 'map' | 'array';

/** Where a value came from: the key's line for map entries, the element's line for array items. */
export interface ConfPosition {
  file: string;
  line: number;
  kind: ConfValueKind;
  /** source text of scalar tokens, e.g. `2m` for the integer 2000000 */
  raw?: string;
  /** set when some `$name` reference used this entry as a variable definition */
  usedAsVariable?: boolean;
}

export interface ConfDocument {
  root: Record<string, unknown>;
  positionOf(container: object, key: string | number): ConfPosition | undefined;
}

export interface ConfParseOptions {
  filePath?: string;
  env?: Record<string, string | undefined>;
  readInclude?: (path: string) => string;
}

export class ConfParseError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'ConfParseError';
  }
}

export function parseConf(text: string, opts: ConfParseOptions = {}): Record<string, unknown> {
  return parseConfDocument(text, opts).root;
}

export function parseConfDocument(text: string, opts: ConfParseOptions = {}): ConfDocument {
  const positions = new WeakMap<object, Map<string | number, ConfPosition>>();
  const shared: SharedState = {
    positions,
    env: opts.env ?? process.env,
    readInclude: opts.readInclude ?? ((p: string) => readFileSync(p, 'utf8')),
    envLookupsInProgress: new Set(),
  };
  // A byte-order mark from Windows editors would otherwise become part of the first key.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const root = new ConfReader(body, opts.filePath, shared, 0).parseDocument();
  return { root, positionOf: (container, key) => positions.get(container)?.get(key) };
}

// Bounds: include nesting (a self-include would otherwise recurse forever) and block nesting.
const MAX_INCLUDE_DEPTH = 10;
const MAX_NESTING_DEPTH = 64;

interface SharedState {
  positions: WeakMap<object, Map<string | number, ConfPosition>>;
  env: Record<string, string | undefined>;
  readInclude: (path: string) => string;
  /** env variables being expanded right now; an env value referring back to itself is a cycle */
  envLookupsInProgress: Set<string>;
}

interface Parsed {
  value: unknown;
  kind: ConfValueKind;
  raw?: string;
}

type Container = Record<string, unknown> | unknown[];

const BOOL_WORDS: Record<string, boolean> = { true: true, yes: true, on: true, false: false, no: false, off: false };

// Multipliers as nats-server's parser: a bare letter is decimal (1k = 1000), with b/i/ib it is binary.
const SIZE_SHIFT_BY_LETTER: Record<string, number> = { k: 1, m: 2, g: 3, t: 4, p: 5, e: 6 };

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

function isInlineSpace(c: string): boolean {
  return c === ' ' || c === '\t';
}
function isNewline(c: string): boolean {
  return c === '\n' || c === '\r';
}
function isSpace(c: string): boolean {
  return isInlineSpace(c) || isNewline(c) || c === '\f' || c === '\v';
}

class ConfReader {
  private pos = 0;
  private line = 1;
  private readonly fileLabel: string;
  /** open maps, innermost last: variable lookups walk this (arrays are not scopes, as in nats-server) */
  private readonly scopes: Record<string, unknown>[] = [];

  constructor(
    private readonly text: string,
    private readonly filePath: string | undefined,
    private readonly shared: SharedState,
    private readonly includeDepth: number,
  ) {
    this.fileLabel = filePath ?? 'config';
  }

  parseDocument(): Record<string, unknown> {
    const root: Record<string, unknown> = {};
    this.scopes.push(root);
    this.parseEntries(root, undefined, undefined, 0);
    return root;
  }

  // ---- character access ----
  private peek(offset = 0): string {
    return this.text[this.pos + offset] ?? '';
  }
  private advance(): string {
    const c = this.text[this.pos] ?? '';
    this.pos++;
    if (c === '\n') this.line++;
    return c;
  }
  private atEnd(): boolean {
    return this.pos >= this.text.length;
  }
  private fail(reason: string, line = this.line): never {
    throw new ConfParseError(this.fileLabel, line, reason);
  }
  private describe(c: string): string {
    if (c === '') return 'end of file';
    if (c === '\n' || c === '\r') return 'new line';
    return `'${c}'`;
  }
  private skipInlineSpace(): void {
    while (isInlineSpace(this.peek())) this.advance();
  }
  private atCommentStart(): boolean {
    return this.peek() === '#' || (this.peek() === '/' && this.peek(1) === '/');
  }
  private skipComment(): void {
    while (!this.atEnd() && !isNewline(this.peek())) this.advance();
  }

  // ---- structure ----

  /**
   * Entries of a map until `}` (closeLine set) or end of file (top level). The top level tolerates a
   * wrapping `{ ... }` as nats-server does, so JSON-like files parse.
   */
  private parseEntries(target: Record<string, unknown>, closeLine: number | undefined, closeKey: string | undefined, depth: number): void {
    for (;;) {
      const c = this.peek();
      if (c === '') {
        if (closeLine !== undefined) this.fail(`block '${closeKey ?? ''}' opened on line ${closeLine} is never closed (missing '}')`, closeLine);
        return;
      }
      if (isSpace(c) || c === ',' || c === ';') {
        this.advance();
        continue;
      }
      if (this.atCommentStart()) {
        this.skipComment();
        continue;
      }
      if (c === '}') {
        this.advance();
        if (closeLine !== undefined) return;
        continue; // stray top-level '}' ends a JSON-like wrapper
      }
      if (c === '{' && closeLine === undefined) {
        this.advance();
        continue;
      }
      this.parseEntry(target, closeLine !== undefined, depth);
    }
  }

  private parseEntry(target: Record<string, unknown>, inBlock: boolean, depth: number): void {
    const keyLine = this.line;
    const key = this.parseKey();
    if (key.toLowerCase() === 'include' && isInlineSpace(this.peek())) {
      this.skipInlineSpace();
      this.parseInclude(target, keyLine);
      this.expectValueEnd(inBlock);
      return;
    }
    this.skipInlineSpace();
    let sawSeparator = false;
    if (this.peek() === ':' || this.peek() === '=') {
      this.advance();
      sawSeparator = true;
      this.skipInlineSpace();
    }
    if (!sawSeparator && isNewline(this.peek()) && this.nextNonSpaceIsBrace()) {
      while (isSpace(this.peek())) this.advance(); // `key` then `{` on the next line
    }
    const c = this.peek();
    if (c === '' || isNewline(c) || c === ';' || c === ',' || c === '}' || (!sawSeparator && this.atCommentStart())) {
      this.fail(`missing value for key '${key}'`, keyLine);
    }
    if (sawSeparator && this.atCommentStart()) this.fail(`missing value for key '${key}'`, keyLine);
    const parsed = this.parseValue(depth + 1, key);
    this.store(target, key, parsed, keyLine);
    this.expectValueEnd(inBlock);
  }

  private nextNonSpaceIsBrace(): boolean {
    let i = this.pos;
    while (i < this.text.length && isSpace(this.text[i]!)) i++;
    return this.text[i] === '{';
  }

  private parseKey(): string {
    const c = this.peek();
    if (c === '"' || c === "'") {
      const openLine = this.line;
      this.advance();
      let key = '';
      for (;;) {
        if (this.atEnd()) this.fail('unterminated quoted key', openLine);
        const k = this.advance();
        if (k === c) return key;
        key += k;
      }
    }
    if (c === ':' || c === '=') this.fail(`unexpected key separator '${c}' (no key before it)`);
    if (c === '[' || c === ']') this.fail(`unexpected '${c}' where a key was expected`);
    let key = '';
    while (!this.atEnd()) {
      const k = this.peek();
      if (isSpace(k) || k === ':' || k === '=' || k === '{' || k === '}') break;
      key += this.advance();
    }
    return key;
  }

  /** After a value: only spaces, a comment, a terminator, or the end of the enclosing block may follow. */
  private expectValueEnd(inBlock: boolean): void {
    this.skipInlineSpace();
    const c = this.peek();
    if (c === '' || isNewline(c) || c === ';' || c === ',' || c === '}' || this.atCommentStart()) return;
    const where = inBlock ? 'a value in a block' : 'a top-level value';
    this.fail(`expected ${where} to end with a new line, ',', ';' or comment, but got ${this.describe(c)}`);
  }

  private parseValue(depth: number, keyForErrors: string | undefined): Parsed {
    if (depth > MAX_NESTING_DEPTH) this.fail(`blocks nested deeper than ${MAX_NESTING_DEPTH}`);
    const c = this.peek();
    if (c === '{') return this.parseMap(depth, keyForErrors);
    if (c === '[') return this.parseArray(depth, keyForErrors);
    if (c === '"') return { value: this.parseDoubleQuoted(), kind: 'string' };
    if (c === "'") return { value: this.parseSingleQuoted(), kind: 'string' };
    if (c === '(') return { value: this.parseBlockString(), kind: 'string' };
    if (c === '-' || (c >= '0' && c <= '9')) return this.parseNumberLike();
    if (c === '.') this.fail('floats must start with a digit');
    return this.parseBareWord();
  }

  private parseMap(depth: number, key: string | undefined): Parsed {
    const openLine = this.line;
    this.advance(); // '{'
    const map: Record<string, unknown> = {};
    this.scopes.push(map);
    try {
      this.parseEntries(map, openLine, key, depth);
    } finally {
      this.scopes.pop();
    }
    return { value: map, kind: 'map' };
  }

  private parseArray(depth: number, key: string | undefined): Parsed {
    const openLine = this.line;
    this.advance(); // '['
    const array: unknown[] = [];
    let expectingValue = true;
    for (;;) {
      const c = this.peek();
      if (c === '') this.fail(`array${key ? ` '${key}'` : ''} opened on line ${openLine} is never closed (missing ']')`, openLine);
      if (isInlineSpace(c)) {
        this.advance();
        continue;
      }
      if (isNewline(c)) {
        this.advance();
        expectingValue = true;
        continue;
      }
      if (this.atCommentStart()) {
        this.skipComment();
        continue;
      }
      if (c === ']') {
        this.advance();
        return { value: array, kind: 'array' };
      }
      if (c === ',') {
        if (expectingValue) this.fail("unexpected ',' in array (empty element)");
        this.advance();
        expectingValue = true;
        continue;
      }
      if (!expectingValue) this.fail(`expected ',' or ']' between array elements, but got ${this.describe(c)}`);
      const elementLine = this.line;
      const parsed = this.parseValue(depth + 1, key);
      this.store(array, array.length, parsed, elementLine);
      expectingValue = false;
    }
  }

  private parseDoubleQuoted(): string {
    const openLine = this.line;
    this.advance();
    let out = '';
    for (;;) {
      if (this.atEnd()) this.fail('string opened here is never closed (missing \'"\')', openLine);
      const c = this.advance();
      if (c === '"') return out;
      if (c === '\\') out += this.parseEscape();
      else out += c;
    }
  }

  private parseEscape(): string {
    const e = this.advance();
    switch (e) {
      case 't':
        return '\t';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'x': {
        const hex = this.peek() + this.peek(1);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) this.fail(`expected two hexadecimal digits after '\\x', but got '${hex}'`);
        this.advance();
        this.advance();
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        this.fail(`invalid escape '\\${e}'; allowed escapes are \\xXX, \\t, \\n, \\r, \\", \\\\`);
    }
  }

  private parseSingleQuoted(): string {
    const openLine = this.line;
    this.advance();
    let out = '';
    for (;;) {
      if (this.atEnd()) this.fail("string opened here is never closed (missing \"'\")", openLine);
      const c = this.advance();
      if (c === "'") return out;
      out += c;
    }
  }

  /** `( ... )` raw multi-line text that ends at a `)` alone on its own line. */
  private parseBlockString(): string {
    const openLine = this.line;
    this.advance();
    const start = this.pos;
    for (;;) {
      if (this.atEnd()) this.fail("text block opened here is never closed (missing ')' on its own line)", openLine);
      const c = this.advance();
      if (c === ')' && this.text[this.pos - 2] === '\n' && (this.atEnd() || isNewline(this.peek()))) {
        return this.text.slice(start, this.pos - 2);
      }
    }
  }

  /** Reads an unquoted token up to a value terminator. */
  private readBareToken(allowEscapes: boolean): { token: string; escaped: boolean } {
    let token = '';
    let escaped = false;
    while (!this.atEnd()) {
      const c = this.peek();
      if (isSpace(c) || c === ',' || c === ';' || c === ']' || c === '}') break;
      if (c === '\\' && allowEscapes) {
        this.advance();
        token += this.parseEscape();
        escaped = true;
        continue;
      }
      token += this.advance();
    }
    return { token, escaped };
  }

  private parseNumberLike(): Parsed {
    const { token } = this.readBareToken(false);
    const integer = /^-?\d+$/.exec(token);
    if (integer) return { value: this.toInteger(BigInt(token), token), kind: 'integer', raw: token };
    const sized = /^(-?\d+)([kmgtpe])(b|i|ib)?$/i.exec(token);
    if (sized) {
      const letter = sized[2]!.toLowerCase();
      const base = sized[3] ? 1024n : 1000n;
      const n = BigInt(sized[1]!) * base ** BigInt(SIZE_SHIFT_BY_LETTER[letter]!);
      return { value: this.toInteger(n, token), kind: 'integer', raw: token };
    }
    if (/^-?\d+\.\d+$/.test(token)) {
      const value = Number(token);
      if (!Number.isFinite(value)) this.fail(`float '${token}' is out of the range`);
      return { value, kind: 'float', raw: token };
    }
    // nats-server has no exponent notation: `1e30` lexes as the size `1e` (10^18) followed by garbage.
    if (/^-?\d+(\.\d+)?e[+-]?\d+$/i.test(token)) this.fail(`invalid number '${token}': config numbers have no exponent notation`);
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(token)) {
      const date = new Date(token);
      if (Number.isNaN(date.getTime())) this.fail(`invalid date-time '${token}'`);
      return { value: date, kind: 'datetime', raw: token };
    }
    // Addresses like 127.0.0.1:4222 lex as strings in nats-server.
    if (/^\d+\.\d+\.[\d.:-]*$/.test(token)) return { value: token, kind: 'string', raw: token };
    // Things that began as numbers but broke mid-way are errors; other digit-led words (10s, 1h30m) are strings.
    if (token.startsWith('-') || /^\d+\./.test(token) || /^\d+-/.test(token)) this.fail(`invalid number '${token}'`);
    return { value: token, kind: 'string', raw: token };
  }

  private toInteger(n: bigint, token: string): number {
    if (n > INT64_MAX || n < INT64_MIN) this.fail(`integer '${token}' is out of the range`);
    return Number(n);
  }

  private parseBareWord(): Parsed {
    const startLine = this.line;
    const braced = this.peek() === '$' && this.peek(1) === '{';
    if (braced) {
      // `${NAME}` — accepted in addition to nats-server's `$NAME`
      this.advance();
      this.advance();
      let name = '';
      while (!this.atEnd() && this.peek() !== '}' && !isNewline(this.peek())) name += this.advance();
      if (this.peek() !== '}') this.fail(`unterminated variable reference '\${${name}'`, startLine);
      this.advance();
      return this.resolveVariable(name, startLine);
    }
    const { token, escaped } = this.readBareToken(true);
    if (token === '') this.fail(`expected a value but got ${this.describe(this.peek())}`);
    if (!escaped) {
      const bool = BOOL_WORDS[token.toLowerCase()];
      if (bool !== undefined) return { value: bool, kind: 'bool', raw: token };
      if (token.startsWith('$')) {
        const name = token.slice(1);
        // bcrypt hashes ($2a$...) are written unquoted in configs; they are not variables
        if (name.startsWith('2a$')) return { value: token, kind: 'string', raw: token };
        return this.resolveVariable(name, startLine);
      }
    }
    return { value: token, kind: 'string', raw: token };
  }

  private resolveVariable(name: string, line: number): Parsed {
    if (name === '') this.fail("empty variable reference '$'", line);
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const scope = this.scopes[i]!;
      if (Object.prototype.hasOwnProperty.call(scope, name)) {
        const pos = this.shared.positions.get(scope)?.get(name);
        if (pos) pos.usedAsVariable = true;
        return { value: scope[name], kind: pos?.kind ?? 'string', raw: pos?.raw };
      }
    }
    const envValue = this.shared.env[name];
    if (envValue === undefined) this.fail(`variable reference for '${name}' can not be found (not defined earlier in scope nor in the environment)`, line);
    if (this.shared.envLookupsInProgress.has(name)) this.fail(`variable reference cycle for '${name}'`, line);
    // Environment values are parsed as config values, so PORT=4222 gives an integer, as in nats-server.
    this.shared.envLookupsInProgress.add(name);
    try {
      const sub = new ConfReader(`pk=${envValue}`, `environment variable ${name}`, this.shared, this.includeDepth);
      const doc = sub.parseDocument();
      const pos = this.shared.positions.get(doc)?.get('pk');
      return { value: doc['pk'], kind: pos?.kind ?? 'string', raw: pos?.raw };
    } catch (err) {
      if (err instanceof ConfParseError) this.fail(`variable reference for '${name}' could not be parsed: ${err.reason}`, line);
      throw err;
    } finally {
      this.shared.envLookupsInProgress.delete(name);
    }
  }

  private parseInclude(target: Record<string, unknown>, line: number): void {
    const c = this.peek();
    let includePath: string;
    if (c === '"' || c === "'") {
      includePath = c === '"' ? this.parseDoubleQuoted() : this.parseSingleQuoted();
    } else {
      if (c === '' || isNewline(c)) this.fail('include needs a file path', line);
      includePath = '';
      while (!this.atEnd() && !isSpace(this.peek()) && this.peek() !== ';' && this.peek() !== '}') includePath += this.advance();
    }
    if (this.includeDepth >= MAX_INCLUDE_DEPTH) this.fail(`includes nested deeper than ${MAX_INCLUDE_DEPTH} (include cycle?)`, line);
    const baseDir = this.filePath !== undefined ? path.dirname(this.filePath) : '.';
    const resolved = path.resolve(baseDir, includePath);
    let text: string;
    try {
      text = this.shared.readInclude(resolved);
    } catch (err) {
      this.fail(`error reading include file '${includePath}': ${(err as Error).message}`, line);
    }
    const included = new ConfReader(text, resolved, this.shared, this.includeDepth + 1).parseDocument();
    const includedPositions = this.shared.positions.get(included);
    for (const [k, v] of Object.entries(included)) {
      const pos = includedPositions?.get(k);
      this.store(target, k, { value: v, kind: pos?.kind ?? 'string', raw: pos?.raw }, pos?.line ?? line, pos?.file);
      if (pos?.usedAsVariable) this.shared.positions.get(target)!.get(k)!.usedAsVariable = true;
    }
  }

  private store(container: Container, key: string | number, parsed: Parsed, line: number, file = this.fileLabel): void {
    if (Array.isArray(container)) container.push(parsed.value);
    // defineProperty: a key named __proto__ must become data, not change the prototype
    else Object.defineProperty(container, key as string, { value: parsed.value, enumerable: true, writable: true, configurable: true });
    let table = this.shared.positions.get(container);
    if (!table) {
      table = new Map();
      this.shared.positions.set(container, table);
    }
    const pos: ConfPosition = { file, line, kind: parsed.kind };
    if (parsed.raw !== undefined) pos.raw = parsed.raw;
    table.set(key, pos);
  }
}
