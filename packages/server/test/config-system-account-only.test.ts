// A config whose only account is the system account, as nats-server reads it: a generated no_auth_user in $G
// (only when the system account is named and nothing else decides who anonymous clients are), JetStream
// that stays the global account's (also in a cluster), and the refusal of JetStream on the system account.
import { describe, expect, it } from 'vitest';
import { accountsBesidesSystem } from '../src/config/system-account-only.js';
import { configError, options } from './support/conf-text.js';

const SYS_ONLY = 'accounts { SYS: { users: [ { user: sys, password: sys } ] } }\nsystem_account: SYS';
const DOLLAR_SYS_ONLY = 'accounts { $SYS: { users: [ { user: sys, password: sys } ] } }';
const CLUSTER = 'cluster { name: c, listen: "127.0.0.1:-1", routes: ["nats://127.0.0.1:1"] }\njetstream { store_dir: "/tmp/x" }';

describe('only the system account configured', () => {
  it('named by system_account or by being $SYS: anonymous clients get a generated no_auth_user in $G', () => {
    for (const conf of [SYS_ONLY, DOLLAR_SYS_ONLY]) {
      const o = options(conf);
      expect(o.noAuthUser).toMatch(/^nats-[0-9]{8}$/);
      expect(o.authorization?.users?.map((u) => u.user)).toEqual([o.noAuthUser]);
      // a $G user: no account of the configured ones has it
      expect(o.accounts!.flatMap((a) => a.users.map((u) => u.user))).toEqual(['sys']);
    }
  });

  it('no generated user with an authorization block, a no_auth_user, another account, or an unnamed system account', () => {
    expect(options(`${SYS_ONLY}\nauthorization { users: [ { user: g, password: g } ] }`).noAuthUser).toBeUndefined();
    expect(options(`accounts { SYS: { users: [ { user: sys, password: sys } ] }, A: { users: [ { user: a, password: a } ] } }\nsystem_account: SYS`).noAuthUser).toBeUndefined();
    expect(options(`${SYS_ONLY}\nno_auth_user: sys`).noAuthUser).toBe('sys');
    // SYS is an ordinary account here (the system account is a $SYS of the server's own)
    const plain = options('accounts { SYS: { users: [ { user: sys, password: sys } ] } }');
    expect(plain.noAuthUser).toBeUndefined();
    expect(plain.authorization).toBeUndefined();
  });

  it('JetStream stays the global account\'s: no account besides the system one', () => {
    expect(accountsBesidesSystem(options(SYS_ONLY))).toBe(false);
    expect(accountsBesidesSystem(options(DOLLAR_SYS_ONLY))).toBe(false);
    expect(accountsBesidesSystem(options('accounts { SYS: { users: [ { user: sys, password: sys } ] } }'))).toBe(true);
    expect(accountsBesidesSystem(options('port: 4222'))).toBe(false);
    expect(options(`${SYS_ONLY}\n${CLUSTER}`).jetstream.enabled).toBe(true);
    // Another account besides the system one: JetStream is per account, in a cluster too.
    const perAccount = options(`accounts { SYS: { users: [ { user: sys, password: sys } ] }, A: { users: [ { user: a, password: a } ] } }\nsystem_account: SYS\n${CLUSTER}`);
    expect(accountsBesidesSystem(perAccount)).toBe(true);
    expect(perAccount.jetstream.enabled).toBe(true);
  });

  it('refuses JetStream on the system account when the server runs JetStream, as nats-server does', () => {
    const sysJs = 'accounts { SYS: { jetstream: enabled, users: [ { user: sys, password: sys } ] }, A: { jetstream: enabled } }\nsystem_account: SYS';
    expect(configError(`${sysJs}\njetstream { store_dir: "/tmp/x" }`)).toBe('Not allowed to enable JetStream on the system account');
    expect(configError(`accounts { $SYS: { jetstream: enabled } }\njetstream { store_dir: "/tmp/x" }`)).toBe('Not allowed to enable JetStream on the system account');
    // without JetStream on the server nats-server starts
    expect(options(sysJs).jetstream.enabled).toBe(false);
  });
});
