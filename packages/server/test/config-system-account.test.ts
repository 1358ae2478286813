// system_account / system / no_system_account as nats-server reads them, and which account that makes the
// system account (systemAccountName).
import { describe, expect, it } from 'vitest';
import { systemAccountName } from '../src/config/system-account-name.js';
import { configError, options } from './support/conf-text.js';

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
