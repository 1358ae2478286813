// The operator-mode keys of a config file: `operator` (a JWT or a file holding one, or a list of them),
// `resolver` (MEMORY, or a full resolver block) and `resolver_preload` (account key -> account JWT).
// Each parser returns the value or a message naming what is wrong, in nats-server's words where it has them.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, dirname } from 'node:path';
import { parseGoDurationMs } from './go-duration.js';
import { isValidPublicKey } from '../security/nkey-signature.js';
import type { ResolverOptions } from './options.js';

export type Parsed<T> = { value: T } | { error: string };

const JWT_BLOCK = /-{3,}[^\n]*JWT-{3,}\s*\n([A-Za-z0-9_.=-]+)\s*\n/;

/** A JWT given inline, or the text of a file that holds one (plain, or decorated as `nsc` writes it). */
function jwtFrom(value: string, configFile: string | undefined): Parsed<string> {
  if (value.startsWith('eyJ') && value.split('.').length === 3) return { value };
  const path = isAbsolute(value) || configFile === undefined ? value : join(dirname(configFile), value);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      return { error: `error parsing operator JWT: ${(err as Error).message}` };
    }
  }
  const decorated = JWT_BLOCK.exec(text);
  const token = decorated !== null ? decorated[1]! : text.trim();
  if (!token.startsWith('eyJ') || token.split('.').length !== 3) return { error: `error parsing operator JWT: ${value} holds no JWT` };
  return { value: token };
}

export function parseOperators(value: unknown, configFile: string | undefined): Parsed<string[]> {
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return { error: 'operator: expected a JWT or a file name' };
    const r = jwtFrom(item, configFile);
    if ('error' in r) return r;
    out.push(r.value);
  }
  return { value: out };
}

/** `trusted` / `trusted_keys`: one operator public key or a list of them. */
export function parseTrustedKeys(value: unknown): Parsed<string[]> {
  const list = Array.isArray(value) ? value : [value];
  for (const k of list) {
    if (typeof k !== 'string') return { error: `error parsing trusted: unsupported type ${typeof k}` };
    if (!isValidPublicKey(k, 'O')) return { error: `trust key ${JSON.stringify(k)} required to be a valid public operator nkey` };
  }
  return { value: list as string[] };
}

export function parseResolver(value: unknown): Parsed<ResolverOptions> {
  if (typeof value === 'string') {
    if (value.toUpperCase() === 'MEMORY') return { value: { type: 'memory' } };
    return { error: `resolver: ${JSON.stringify(value)} is not supported by flotilla yet (MEMORY and { type: full } are)` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'resolver: expected MEMORY or a block { type: full, dir }' };
  const block = value as Record<string, unknown>;
  let type = '';
  let dir = '';
  let allowDelete = false;
  let intervalMs = 2 * 60_000;
  let limit = 1000;
  for (const [k, v] of Object.entries(block)) {
    switch (k.toLowerCase()) {
      case 'type':
        if (typeof v !== 'string') return { error: 'resolver type must be a string' };
        type = v.toLowerCase();
        break;
      case 'dir':
        if (typeof v !== 'string') return { error: 'resolver dir must be a string' };
        // as nats-server: a relative dir is relative to the working directory
        dir = v;
        break;
      case 'allow_delete':
        if (typeof v !== 'boolean') return { error: 'resolver allow_delete must be a boolean' };
        allowDelete = v;
        break;
      case 'interval': {
        const ms = typeof v === 'string' ? parseGoDurationMs(v) : undefined;
        if (ms === undefined || ms <= 0) return { error: `resolver interval: invalid duration ${JSON.stringify(v)}` };
        intervalMs = ms;
        break;
      }
      case 'limit':
        if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) return { error: 'resolver limit must be a positive integer' };
        limit = v;
        break;
      default:
        // timeout, ttl (cache resolver), hard_delete: not implemented, refused by name
        return { error: `resolver: '${k}' is not supported by flotilla yet` };
    }
  }
  if (type !== 'full') return { error: `resolver type ${JSON.stringify(type)} is not supported by flotilla yet (full is)` };
  if (dir === '') return { error: 'resolver: dir is required for the full resolver' };
  return { value: { type: 'full', dir, allowDelete, intervalMs, limit } };
}

export function parsePreload(value: unknown): Parsed<Record<string, string>> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'resolver_preload: expected a block of account key: JWT' };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') return { error: `resolver_preload: the JWT of ${k} must be a string` };
    out[k] = v.trim();
  }
  return { value: out };
}
