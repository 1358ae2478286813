// A strict reader of the YAML subset the deploy files are written in (no YAML parser is installed):
// block mappings and sequences by indentation, `---` documents, comments, plain / "double" / 'single'
// quoted scalars, flow sequences of scalars, `{}`. Anchors, tags, block scalars and flow mappings throw,
// so a deploy file that leaves the subset fails its test instead of being misread.

interface Line {
  indent: number;
  text: string;
  no: number;
}

export function parseYamlDocuments(source: string): unknown[] {
  const docs: Line[][] = [[]];
  source.split('\n').forEach((raw, idx) => {
    if (raw.includes('\t')) throw new Error(`line ${idx + 1}: tab`);
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    if (text === '---') {
      docs.push([]);
      return;
    }
    const indent = text.length - text.trimStart().length;
    docs[docs.length - 1]!.push({ indent, text: text.trimStart(), no: idx + 1 });
  });
  return docs
    .filter((d) => d.length > 0)
    .map((lines) => {
      const [value, next] = parseBlock(lines, 0, lines[0]!.indent);
      if (next !== lines.length) throw new Error(`line ${lines[next]!.no}: unexpected indentation`);
      return value;
    });
}

export function parseYaml(source: string): unknown {
  const docs = parseYamlDocuments(source);
  if (docs.length !== 1) throw new Error(`${docs.length} documents, expected 1`);
  return docs[0];
}

function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== '') {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || line[i - 1] === ' ')) return line.slice(0, i);
  }
  return line;
}

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

function parseBlock(lines: Line[], i: number, indent: number): [unknown, number] {
  return isSequenceItem(lines[i]!.text) ? parseSequence(lines, i, indent) : parseMapping(lines, i, indent);
}

const KEY_RE = /^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s'"#\-[{][^:]*?|-[^\s:][^:]*?):(?: +(.*))?$/;

function parseMapping(lines: Line[], start: number, indent: number): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  let i = start;
  while (i < lines.length && lines[i]!.indent === indent && !isSequenceItem(lines[i]!.text)) {
    const line = lines[i]!;
    const m = KEY_RE.exec(line.text);
    if (m === null) throw new Error(`line ${line.no}: not a 'key: value' line: ${line.text}`);
    const key = String(parseScalar(m[1]!, line.no));
    if (Object.hasOwn(out, key)) throw new Error(`line ${line.no}: duplicate key ${key}`);
    const rest = m[2];
    i++;
    if (rest !== undefined && rest !== '') {
      out[key] = parseScalar(rest, line.no);
    } else if (i < lines.length && lines[i]!.indent > indent) {
      [out[key], i] = parseBlock(lines, i, lines[i]!.indent);
    } else if (i < lines.length && lines[i]!.indent === indent && isSequenceItem(lines[i]!.text)) {
      [out[key], i] = parseSequence(lines, i, indent);
    } else out[key] = null;
  }
  if (i < lines.length && lines[i]!.indent > indent) throw new Error(`line ${lines[i]!.no}: unexpected indentation`);
  return [out, i];
}

function parseSequence(lines: Line[], start: number, indent: number): [unknown[], number] {
  const out: unknown[] = [];
  let i = start;
  while (i < lines.length && lines[i]!.indent === indent && isSequenceItem(lines[i]!.text)) {
    const line = lines[i]!;
    const rest = line.text.slice(1).trimStart();
    if (rest === '') {
      i++;
      if (i >= lines.length || lines[i]!.indent <= indent) out.push(null);
      else {
        let v: unknown;
        [v, i] = parseBlock(lines, i, lines[i]!.indent);
        out.push(v);
      }
    } else if (KEY_RE.test(rest) && !/^["'[]/.test(rest)) {
      // `- key: value`: a mapping whose lines sit at the item's content column.
      const column = indent + (line.text.length - rest.length);
      const patched = [...lines];
      patched[i] = { indent: column, text: rest, no: line.no };
      let v: unknown;
      [v, i] = parseMapping(patched, i, column);
      out.push(v);
    } else {
      out.push(parseScalar(rest, line.no));
      i++;
    }
  }
  return [out, i];
}

function parseScalar(text: string, no: number): unknown {
  const t = text.trim();
  if (t.startsWith('"')) {
    if (!t.endsWith('"') || t.length < 2) throw new Error(`line ${no}: unterminated string`);
    return JSON.parse(t) as string;
  }
  if (t.startsWith("'")) {
    if (!t.endsWith("'") || t.length < 2) throw new Error(`line ${no}: unterminated string`);
    return t.slice(1, -1).replace(/''/g, "'");
  }
  if (t.startsWith('[')) {
    if (!t.endsWith(']')) throw new Error(`line ${no}: flow sequence must end on its line`);
    const inner = t.slice(1, -1).trim();
    return inner === '' ? [] : splitFlow(inner, no).map((item) => parseScalar(item, no));
  }
  if (t === '{}') return {};
  if (/^[&*!|>{%@`]/.test(t)) throw new Error(`line ${no}: outside the YAML subset: ${t}`);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null' || t === '~') return null;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  return t;
}

function splitFlow(inner: string, no: number): string[] {
  const items: string[] = [];
  let quote = '';
  let cur = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (quote !== '') {
      cur += c;
      if (c === '\\' && quote === '"') cur += inner[++i] ?? '';
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
      cur += c;
    } else if (c === ',') {
      items.push(cur.trim());
      cur = '';
    } else if (c === '[' || c === '{') throw new Error(`line ${no}: nested flow collections are outside the subset`);
    else cur += c;
  }
  if (quote !== '') throw new Error(`line ${no}: unterminated string in flow sequence`);
  items.push(cur.trim());
  return items;
}
