import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import { ConfParseError, parseConf, parseConfDocument } from '../src/config/conf-parser.js';

const noEnv = { env: {} };

/** Runs the parser expecting a ConfParseError, returning it. */
function parseError(text: string, opts: Parameters<typeof parseConf>[1] = noEnv): ConfParseError {
  try {
    parseConf(text, opts);
  } catch (err) {
    if (err instanceof ConfParseError) return err;
    throw err;
  }
  throw new Error('expected a ConfParseError');
}

describe('conf parser: separators and structure', () => {
  it('accepts colon, equals and whitespace separators', () => {
    expect(parseConf('a: 1\nb = 2\nc 3\nd:4\ne=5', noEnv)).toEqual({ a: 1, b: 2, c: 3, d: 4, e: 5 });
  });

  it('accepts semicolons and commas as top-level terminators', () => {
    expect(parseConf('a: 1; b: 2, c: "x"', noEnv)).toEqual({ a: 1, b: 2, c: 'x' });
  });

  it('parses blocks with and without a separator, nested', () => {
    const conf = parseConf(
      `cluster {
  name: c1
  inner: { deep { x: 1 } }
}
jetstream: { store_dir: "/tmp/js", max_mem: 1G }
after = { a: 1, b: 2 }`,
      noEnv,
    );
    expect(conf).toEqual({
      cluster: { name: 'c1', inner: { deep: { x: 1 } } },
      jetstream: { store_dir: '/tmp/js', max_mem: 1_000_000_000 },
      after: { a: 1, b: 2 },
    });
  });

  it('accepts an opening brace on the next line', () => {
    expect(parseConf('cluster\n{\n  port: 6222\n}', noEnv)).toEqual({ cluster: { port: 6222 } });
  });

  it('parses arrays separated by commas, newlines, or both, with a trailing comma', () => {
    const conf = parseConf(
      `a: [1, 2, 3]
b: [
  x
  y   # comment inside
  // another comment
  "z",
]
c: [ { user: u1, password: p1 }, { user: u2 } ]
d: []`,
      noEnv,
    );
    expect(conf).toEqual({
      a: [1, 2, 3],
      b: ['x', 'y', 'z'],
      c: [{ user: 'u1', password: 'p1' }, { user: 'u2' }],
      d: [],
    });
  });

  it('reads CRLF line endings and ignores a byte-order mark, counting lines once per CRLF', () => {
    const doc = parseConfDocument('\uFEFFport: 1\r\nb {\r\n  c: [x\r\n y]\r\n}\r\nname: n\r\n', noEnv);
    expect(doc.root).toEqual({ port: 1, b: { c: ['x', 'y'] }, name: 'n' });
    expect(doc.positionOf(doc.root, 'name')?.line).toBe(6);
  });

  it('parses a JSON-like file wrapped in braces', () => {
    expect(parseConf('{\n  "port": 4222,\n  "debug": true\n}\n', noEnv)).toEqual({ port: 4222, debug: true });
  });

  it('skips # and // comments, including after values', () => {
    const conf = parseConf(
      `# leading comment
// slash comment
port: 4222 # trailing hash
debug: true // trailing slashes
url: "nats://a:1" # a '#' inside quotes stays
word: foo#bar`,
      noEnv,
    );
    expect(conf).toEqual({ port: 4222, debug: true, url: 'nats://a:1', word: 'foo#bar' });
  });

  it('keeps key case as written and lets the last duplicate win', () => {
    expect(parseConf('Port: 1\nMAX_payload: 2\nport: 3\nport: 4', noEnv)).toEqual({ Port: 1, MAX_payload: 2, port: 4 });
  });

  it('accepts quoted keys', () => {
    expect(parseConf(`"my key": 1\n'other': 2\nm { "in": 3 }`, noEnv)).toEqual({ 'my key': 1, other: 2, m: { in: 3 } });
  });

  it('stores __proto__ as an ordinary key', () => {
    const conf = parseConf('__proto__: { polluted: true }', noEnv);
    expect(Object.keys(conf)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('conf parser: scalar values', () => {
  it('parses quoted strings with escapes and raw single-quoted strings', () => {
    const conf = parseConf(
      String.raw`a: "tab\there"
b: "nl\nq\"bs\\x\x41"
c: 'raw \n stays $NOPE'
d: "multi
line"`,
      noEnv,
    );
    expect(conf).toEqual({ a: 'tab\there', b: 'nl\nq"bs\\xA', c: 'raw \\n stays $NOPE', d: 'multi\nline' });
  });

  it('parses unquoted strings up to whitespace or a terminator', () => {
    expect(parseConf('a: nats://h:4222\nb: hello, c: x-y.z/w', noEnv)).toEqual({ a: 'nats://h:4222', b: 'hello', c: 'x-y.z/w' });
  });

  it('parses the booleans nats-server knows, case-insensitively, and leaves enabled/disabled as strings', () => {
    const conf = parseConf('a: true\nb: FALSE\nc: yes\nd: No\ne: on\nf: off\ng: enabled\nh: disabled', noEnv);
    expect(conf).toEqual({ a: true, b: false, c: true, d: false, e: true, f: false, g: 'enabled', h: 'disabled' });
  });

  it('parses integers, negatives and floats', () => {
    expect(parseConf('a: 42\nb: -1\nc: 1.5\nd: -0.25\ne: 0', noEnv)).toEqual({ a: 42, b: -1, c: 1.5, d: -0.25, e: 0 });
  });

  it('applies size suffixes with nats-server multipliers (k = 1000, kb/ki/kib = 1024)', () => {
    const conf = parseConf('a: 1k\nb: 1kb\nc: 1KiB\nd: 1MB\ne: 2GB\nf: 1m\ng: 2G\nh: 1Ti\ni: -2k\nj: 3MI', noEnv);
    expect(conf).toEqual({
      a: 1000,
      b: 1024,
      c: 1024,
      d: 1024 * 1024,
      e: 2 * 1024 ** 3,
      f: 1_000_000,
      g: 2_000_000_000,
      h: 1024 ** 4,
      i: -2000,
      j: 3 * 1024 * 1024,
    });
  });

  it('keeps durations as strings and records the raw text of sized integers', () => {
    const doc = parseConfDocument('a: 10s\nb: 1h30m\nc: 2m\nd: "2m"\ne: 250ms', noEnv);
    expect(doc.root).toEqual({ a: '10s', b: '1h30m', c: 2_000_000, d: '2m', e: '250ms' });
    expect(doc.positionOf(doc.root, 'c')).toMatchObject({ kind: 'integer', raw: '2m', line: 3 });
    expect(doc.positionOf(doc.root, 'a')).toMatchObject({ kind: 'string', line: 1 });
  });

  it('lexes dotted addresses as strings and date-times as dates', () => {
    const conf = parseConf('listen: 127.0.0.1:4222\nip: 10.0.0.1\nwhen: 2024-01-02T03:04:05Z', noEnv);
    expect(conf['listen']).toBe('127.0.0.1:4222');
    expect(conf['ip']).toBe('10.0.0.1');
    expect(conf['when']).toEqual(new Date('2024-01-02T03:04:05Z'));
  });

  it('reads a ( ... ) text block up to a ) on its own line', () => {
    expect(parseConf('text: (\nline one\n  line (two)\n)\nport: 1', noEnv)).toEqual({ text: '\nline one\n  line (two)', port: 1 });
  });

  it('records line numbers and kinds for map entries and array elements', () => {
    const doc = parseConfDocument('a: 1\n\nb {\n  c: "x"\n  d: [\n    1,\n    2.5\n  ]\n}', noEnv);
    const b = doc.root['b'] as Record<string, unknown>;
    expect(doc.positionOf(doc.root, 'b')).toMatchObject({ line: 3, kind: 'map', file: 'config' });
    expect(doc.positionOf(b, 'c')).toMatchObject({ line: 4, kind: 'string' });
    const d = b['d'] as unknown[];
    expect(doc.positionOf(d, 0)).toMatchObject({ line: 6, kind: 'integer' });
    expect(doc.positionOf(d, 1)).toMatchObject({ line: 7, kind: 'float' });
  });
});

describe('conf parser: variables', () => {
  it('resolves $VAR from an earlier definition in the file and marks it used', () => {
    const doc = parseConfDocument('PORT = 4333\nport: $PORT\nname: ${PORT}', noEnv);
    expect(doc.root).toEqual({ PORT: 4333, port: 4333, name: 4333 });
    expect(doc.positionOf(doc.root, 'PORT')?.usedAsVariable).toBe(true);
    expect(doc.positionOf(doc.root, 'port')).toMatchObject({ line: 2, kind: 'integer' });
  });

  it('looks variables up in enclosing blocks but not in closed sibling blocks', () => {
    const conf = parseConf('user = outer\na { pass = p1; inner { u: $user, p: $pass } }', noEnv);
    expect(conf['a']).toEqual({ pass: 'p1', inner: { u: 'outer', p: 'p1' } });
    const err = parseError('a { secret = 1 }\nb: $secret');
    expect(err.line).toBe(2);
    expect(err.message).toContain("'secret'");
  });

  it('falls back to the environment and parses env values as config values', () => {
    const env = { PORT_FROM_ENV: '5555', NAME_FROM_ENV: 'node-a', ON_FROM_ENV: 'true', SIZE: '2MB' };
    const conf = parseConf('port: $PORT_FROM_ENV\nname: ${NAME_FROM_ENV}\ndebug: $ON_FROM_ENV\nmax: $SIZE', { env });
    expect(conf).toEqual({ port: 5555, name: 'node-a', debug: true, max: 2 * 1024 * 1024 });
  });

  it('prefers a file definition over the environment', () => {
    expect(parseConf('X = 1\nv: $X', { env: { X: '2' } })).toEqual({ X: 1, v: 1 });
  });

  it('reports an undefined variable with its line', () => {
    const err = parseError('port: 4222\n\nserver_name: $MISSING_VAR', { env: {}, filePath: 'my.conf' });
    expect(err.line).toBe(3);
    expect(err.file).toBe('my.conf');
    expect(err.message).toMatch(/^my\.conf:3: .*'MISSING_VAR'.*can not be found/);
  });

  it('detects an environment variable that refers to itself', () => {
    const err = parseError('a: $LOOP', { env: { LOOP: '$LOOP' } });
    expect(err.message).toContain('cycle');
    expect(err.line).toBe(1);
  });

  it('keeps unquoted bcrypt hashes as strings', () => {
    const hash = '$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG';
    expect(parseConf(`password: ${hash}`, noEnv)).toEqual({ password: hash });
  });
});

describe('conf parser: include', () => {
  it('includes a file relative to the including file, at top level and inside blocks', () => {
    const files: Record<string, string> = {
      [path.resolve('/etc/nats/sub/auth.conf')]: 'user: alice\npassword: secret\n',
      [path.resolve('/etc/nats/sub/limits.conf')]: 'max_payload: 2MB\ninclude "deeper.conf"',
      [path.resolve('/etc/nats/sub/deeper.conf')]: 'ping_max: 5',
    };
    const read = (p: string): string => {
      const text = files[p];
      if (text === undefined) throw new Error(`ENOENT: ${p}`);
      return text;
    };
    const doc = parseConfDocument(
      `port: 4222
authorization {
  include ./sub/auth.conf
}
include 'sub/limits.conf'
copy: $max_payload`,
      { filePath: '/etc/nats/main.conf', readInclude: read, env: {} },
    );
    expect(doc.root).toEqual({
      port: 4222,
      authorization: { user: 'alice', password: 'secret' },
      max_payload: 2 * 1024 * 1024,
      ping_max: 5,
      copy: 2 * 1024 * 1024,
    });
    expect(doc.positionOf(doc.root, 'ping_max')).toMatchObject({ file: path.resolve('/etc/nats/sub/deeper.conf'), line: 1 });
  });

  it('names the included file and its line when the included file is malformed', () => {
    const read = (): string => 'a: 1\nb: [1, 2\n';
    const err = parseError('include other.conf', { filePath: '/x/main.conf', readInclude: read, env: {} });
    expect(err.file).toBe(path.resolve('/x/other.conf'));
    expect(err.line).toBe(2);
  });

  it('reports a missing include file at the include line', () => {
    const read = (): string => {
      throw new Error('ENOENT: no such file');
    };
    const err = parseError('port: 1\ninclude nope.conf', { filePath: 'main.conf', readInclude: read, env: {} });
    expect(err.message).toMatch(/^main\.conf:2: error reading include file 'nope\.conf'/);
  });

  it('stops an include cycle with an error instead of recursing forever', () => {
    const err = parseError('include self.conf', { filePath: '/d/self.conf', readInclude: () => 'include self.conf', env: {} });
    expect(err.message).toContain('nested deeper');
  });
});

describe('conf parser: malformed input names the right line', () => {
  const cases: Array<{ name: string; text: string; line: number; pattern: RegExp }> = [
    { name: 'unclosed block', text: 'port: 1\ncluster {\n  name: x\n', line: 2, pattern: /never closed/ },
    { name: 'unclosed nested block', text: 'a {\n  b {\n    c: 1\n  }\n', line: 1, pattern: /never closed/ },
    { name: 'unclosed double-quoted string', text: 'port: 1\nname: "abc\nport: 2', line: 2, pattern: /never closed/ },
    { name: 'unclosed single-quoted string', text: "\n\nname: 'abc", line: 3, pattern: /never closed/ },
    { name: 'unclosed array at end of file', text: 'a: 1\nroutes: [\n  a\n  b\n', line: 2, pattern: /never closed/ },
    { name: 'array running into the next key', text: 'routes = [\n a, b\nport 1', line: 3, pattern: /expected ',' or '\]'/ },
    { name: 'missing value before new line', text: 'port: 1\nhost:\ndebug: true', line: 2, pattern: /missing value for key 'host'/ },
    { name: 'missing value at end of file', text: 'port: 1\nhost =', line: 2, pattern: /missing value/ },
    { name: 'key with no value', text: 'port: 1\n\nlonely\n', line: 3, pattern: /missing value for key 'lonely'/ },
    { name: 'bad number', text: 'a: 1\nport: 12.3.x', line: 2, pattern: /invalid number '12\.3\.x'/ },
    { name: 'bad negative number', text: 'port: -5x', line: 1, pattern: /invalid number/ },
    { name: 'float without leading digit', text: '\nratio: .5', line: 2, pattern: /digit/ },
    { name: 'integer out of int64', text: 'big: 99999999999999999999', line: 1, pattern: /^bad\.conf:1: integer '99999999999999999999' is out of the range$/ },
    { name: 'negative integer out of int64', text: 'a: 1\nbig: -9223372036854775809', line: 2, pattern: /integer '-9223372036854775809' is out of the range/ },
    { name: 'sized integer out of int64', text: 'max_file: 10000P', line: 1, pattern: /integer '10000P' is out of the range/ },
    { name: 'float out of float64', text: `ratio: 1${'0'.repeat(400)}.5`, line: 1, pattern: /float '10+\.5' is out of the range/ },
    { name: 'exponent notation', text: 'max_msgs: 1e30', line: 1, pattern: /invalid number '1e30'/ },
    { name: 'exponent notation in a block', text: 'a {\n  max_msgs: 1.5E+30\n}', line: 2, pattern: /invalid number '1\.5E\+30'/ },
    { name: 'invalid escape', text: 'a: 1\nb: "bad \\q escape"', line: 2, pattern: /invalid escape/ },
    { name: 'garbage after a value', text: 'port: 4222 4223', line: 1, pattern: /to end with a new line/ },
    { name: 'empty array element', text: 'a: [1,,2]', line: 1, pattern: /empty element/ },
    { name: 'separator without key', text: 'a: 1\n: 2', line: 2, pattern: /key separator/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const err = parseError(c.text, { env: {}, filePath: 'bad.conf' });
      expect(err.line).toBe(c.line);
      expect(err.message.startsWith(`bad.conf:${c.line}: `)).toBe(true);
      expect(err.message).toMatch(c.pattern);
    });
  }

  it('bounds nesting depth', () => {
    const deep = 'a: ' + '['.repeat(200) + ']'.repeat(200);
    expect(parseError(deep).message).toContain('nested deeper');
  });
});
