// system_account / system / no_system_account as nats-server reads them, and which account that makes the
// system account (systemAccountName).
import { describe, expect, it } from 'vitest';
import { resolveOptions, type OptionsResult } from '../src/config/load-options.js';
import type { ServerOptions } from '../src/config/options.js';
import { systemAccountName } from '../src/config/system-account-name.js';

function withConf(text: string): OptionsResult {
  return resolveOptions(['-c', 'test.conf'], {}, () => text);
}

function options(text: string): ServerOptions {
  const r = withConf(text);
  if (r.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.options;
}

function configError(text: string): string {
  const r = withConf(text);
  if (r.kind !== 'config-error') throw new Error(`expected config-error, got ${JSON.stringify(r)}`);
  return r.message;
}

const SYS = 'accounts { SYS: { users: [ { user: s, password: s } ] } }';

describe('the system account in the config', () => {
  it('nothing configured: $SYS', () => {
    const o = options('port: 4222');
    expect(o.systemAccount).toBeUndefined();
    expect(systemAccountName(o)).toBe('$SYS');
  });

  it('system_account and system name a configured account', () => {
    expect(systemAccountName(options(`${SYS}\nsystem_account: SYS`))).toBe('SYS');
    expect(systemAccountName(options(`${SYS}\nsystem: SYS`))).toBe('SYS');
    expect(systemAccountName(options(`${SYS}\nsystem_account: "$SYS"`))).toBe('$SYS');
  });

  it('no_system_account (and its aliases): none, unless system_account names one', () => {
    for (const key of ['no_system_account', 'no_system', 'no_sys_acc']) expect(systemAccountName(options(`${key}: true`))).toBeNull();
    expect(systemAccountName(options('no_system_account: false'))).toBe('$SYS');
    expect(systemAccountName(options(`${SYS}\nno_system_account: true\nsystem_account: SYS`))).toBe('SYS');
  });

  it('refuses a name that is not a string, a no_system_account that is not a boolean, an account not configured', () => {
    expect(configError('system_account: 5')).toContain('system account name must be a string');
    expect(configError('no_system_account: "yes please"')).toContain('no_system_account: expected a boolean');
    expect(configError('system_account: NOPE')).toBe('error resolving system account: account missing');
  });
});
