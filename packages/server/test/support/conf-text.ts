// Resolving options from config text as `-c test.conf` (plus flags), for config unit tests.
import { resolveOptions, type OptionsResult } from '../../src/config/load-options.js';
import type { ServerOptions } from '../../src/config/options.js';

export function withConf(text: string, args: string[] = []): OptionsResult {
  return resolveOptions(['-c', 'test.conf', ...args], {}, () => text);
}

/** The options of a config that runs (throws otherwise). */
export function options(text: string, args: string[] = []): ServerOptions {
  const r = withConf(text, args);
  if (r.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.options;
}

/** The message of a config that is refused (throws otherwise). */
export function configError(text: string): string {
  const r = withConf(text);
  if (r.kind !== 'config-error') throw new Error(`expected config-error, got ${JSON.stringify(r)}`);
  return r.message;
}
