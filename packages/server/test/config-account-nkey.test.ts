// An account's own `nkey` (nats-server's parseAccounts: checked with IsValidPublicAccountKey and kept on the
// account), and account names that would escape the JetStream store directory.
import { describe, expect, it } from 'vitest';
import { configError, options } from './support/conf-text.js';

const ACCOUNT_KEY = 'ADY3RJ72HNGELNEK5BWSRDWIABGZJNOUSHLRYY37WZ5WVNFNB3RW66RZ';
const USER_KEY = 'UABU5PUJ4NFO6E3WRE33D4ZTJAXXK7WGETIFBDOKQTMBZU2XXWZB5CRX';

describe("an account's nkey", () => {
  it('a public account key is kept on the account; its name stays the config name', () => {
    const o = options(`accounts {\n  A: { nkey: "${ACCOUNT_KEY}", users: [ { user: a, password: a } ] }\n  B: {}\n}`);
    expect(o.accounts?.map((a) => [a.name, a.nkey])).toEqual([
      ['A', ACCOUNT_KEY],
      ['B', undefined],
    ]);
  });

  it("a user key, a seed, a broken checksum or a number: nats-server's error at the key's line", () => {
    for (const bad of [`"${USER_KEY}"`, '"SAAGNJOZTRPYYXG2NJX3ZNGXYUSDYX2BWO447W3SHG6XQ7U66RWHQ3JUXM"', `"${ACCOUNT_KEY.slice(0, -1)}A"`, '12']) {
      // Go's %q of the integer 12 is the rune it codes
      const shown = bad.startsWith('"') ? bad : "'\\f'";
      expect(configError(`accounts {\n  A: {\n    nkey: ${bad}\n  }\n}`)).toContain(`test.conf:3: Not a valid public nkey for an account: ${shown}`);
    }
  });
});

describe('account names and the JetStream store directory', () => {
  it.each(['../escape', 'a/b', 'a\\\\b', '..', '.'])('%s with jetstream: refused at the account, saying why', (name) => {
    const message = configError(`jetstream { store_dir: "/tmp/x" }\naccounts {\n  "${name}": { jetstream: enabled, users: [ { user: a, password: a } ] }\n}`);
    expect(message).toContain('test.conf:3: account name');
    expect(message).toContain('can not have JetStream in flotilla: the name is its store directory');
  });

  it('the same names without JetStream, and dotted names with it, run (nats-server accepts them)', () => {
    const o = options(`jetstream { store_dir: "/tmp/x" }\naccounts {\n  "a/b": { users: [ { user: a, password: a } ] }\n  "a..b": { jetstream: enabled }\n  "x.y": { jetstream: enabled }\n}`);
    expect(o.accounts?.map((a) => a.name)).toEqual(['a/b', 'a..b', 'x.y']);
  });
});
