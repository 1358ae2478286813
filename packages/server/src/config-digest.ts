// /varz `config_digest`: nats-server's `sha256:<hex>` of its parsed config encoded as JSON (Go's encoding/json:
// keys sorted, `<`, `>`, `&` escaped, a trailing newline); "" without a config file. Taken from the file as
// it is when first asked after each (re)load, and kept until the next load.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseConf } from './config/conf-parser.js';

let cached: { file: string; loadMs: number; digest: string } | null = null;

export function configDigest(configFile: string | undefined, loadMs: number): string {
  if (configFile === undefined || configFile === '') return '';
  if (cached !== null && cached.file === configFile && cached.loadMs === loadMs) return cached.digest;
  let digest = '';
  try {
    const parsed = parseConf(readFileSync(configFile, 'utf8'), { filePath: configFile });
    digest = `sha256:${createHash('sha256').update(`${goJson(parsed)}\n`).digest('hex')}`;
  } catch {
    digest = ''; // unreadable now: nothing to vouch for
  }
  cached = { file: configFile, loadMs, digest };
  return digest;
}

function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${goString(k)}:${goJson(o[k])}`)
      .join(',')}}`;
  }
  if (typeof v === 'string') return goString(v);
  return JSON.stringify(v);
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}
