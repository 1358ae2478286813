// Security options from config files and flags: permissions, allow_responses, tls {}, max_subscriptions,
// and the TLS flags with nats-server's start-up errors.
import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import type { ServerOptions } from '../src/config/options.js';
import { resolveOptions, type OptionsResult } from '../src/config/load-options.js';

function withConf(text: string, extraArgs: string[] = []): OptionsResult {
  return resolveOptions(['-c', 'test.conf', ...extraArgs], {}, (p) => {
    if (path.basename(p) !== 'test.conf') throw new Error(`ENOENT: ${p}`);
    return text;
  });
}

function options(result: OptionsResult): ServerOptions {
  if (result.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(result)}`);
  return result.options;
}

function configError(result: OptionsResult): string {
  if (result.kind !== 'config-error') throw new Error(`expected config-error, got ${JSON.stringify(result)}`);
  return result.message;
}

describe('permissions in the config file', () => {
  it('reads allow/deny maps, bare strings and arrays (= allow), queue entries and default_permissions', () => {
    const o = options(
      withConf(`authorization {
  default_permissions: { publish: "def.>" }
  users = [
    { user: a, password: p, permissions: { publish: { allow: ["foo.>", "bar"], deny: "foo.secret" }, subscribe: ["q.* grp", "x"] } }
    { user: b, password: "$2a$11$abcdefghijklmnopqrstuu", permissions: { pub: "one", sub: { deny: [">"] } } }
    { user: c, password: p }
  ]
}`),
    );
    expect(o.authorization?.defaultPermissions).toEqual({ publish: { allow: ['def.>'] } });
    expect(o.authorization?.users).toEqual([
      { user: 'a', password: 'p', permissions: { publish: { allow: ['foo.>', 'bar'], deny: ['foo.secret'] }, subscribe: { allow: ['q.* grp', 'x'] } } },
      { user: 'b', password: '$2a$11$abcdefghijklmnopqrstuu', permissions: { publish: { allow: ['one'] }, subscribe: { deny: ['>'] } } },
      { user: 'c', password: 'p' },
    ]);
  });

  it('allow_responses: true is one response within 2 minutes and limits publishing to responses', () => {
    const o = options(withConf('authorization { users = [ { user: r, password: p, permissions: { subscribe: "req.>", allow_responses: true } } ] }'));
    expect(o.authorization?.users?.[0]?.permissions).toEqual({
      subscribe: { allow: ['req.>'] },
      publish: { allow: [] },
      allowResponses: { maxMsgs: 1, expiresMs: 120_000 },
    });
  });

  it('allow_responses { max, expires } keeps an explicit publish allow list', () => {
    const o = options(
      withConf('authorization { users = [ { user: r, password: p, permissions: { publish: "x", allow_responses: { max: 5, expires: "30s" } } } ] }'),
    );
    expect(o.authorization?.users?.[0]?.permissions).toEqual({ publish: { allow: ['x'] }, allowResponses: { maxMsgs: 5, expiresMs: 30_000 } });
  });

  it('allow_responses: false grants nothing', () => {
    const o = options(withConf('authorization { users = [ { user: r, password: p, permissions: { allow_responses: false } } ] }'));
    expect(o.authorization?.users?.[0]?.permissions).toEqual({});
  });

  it('refuses invalid subjects, queue entries in the wrong place, and unknown keys, naming file:line', () => {
    expect(configError(withConf('authorization {\n users = [\n { user: a, password: p, permissions: { publish: "foo..bar" } }\n ]\n}'))).toMatch(
      /test\.conf:3: subject "foo\.\.bar" is not a valid subject/,
    );
    expect(configError(withConf('authorization { users = [ { user: a, password: p, permissions: { publish: "foo grp" } } ] }'))).toMatch(
      /subject "foo grp" is not a valid subject/,
    );
    expect(configError(withConf('authorization { users = [ { user: a, password: p, permissions: { publish: { permit: "x" } } } ] }'))).toMatch(
      /Unknown field "permit" parsing subject permissions/,
    );
    expect(configError(withConf('authorization { users = [ { user: a, password: p, permissions: { bogus: 1 } } ] }'))).toMatch(/unknown field "bogus"/);
  });
});

describe('limits', () => {
  it('reads max_subscriptions and its alias max_subs; default 0 (unlimited)', () => {
    expect(options(withConf('port: 1')).maxSubscriptions).toBe(0);
    expect(options(withConf('max_subscriptions: 100')).maxSubscriptions).toBe(100);
    expect(options(withConf('max_subs: 7')).maxSubscriptions).toBe(7);
    expect(configError(withConf('max_subscriptions: -1'))).toMatch(/can not be negative/);
  });
});

describe('tls {} in the config file', () => {
  it('reads cert_file, key_file, ca_file, verify and timeout (seconds or duration)', () => {
    expect(options(withConf('tls { cert_file: "s.pem", key_file: "s.key", ca_file: "ca.pem", verify: true, timeout: 0.5 }')).tls).toEqual({
      certFile: 's.pem',
      keyFile: 's.key',
      caFile: 'ca.pem',
      verify: true,
      verifyAndMap: false,
      timeoutMs: 500,
    });
    expect(options(withConf('tls { cert_file: a, key_file: b, timeout: "3s" }')).tls).toMatchObject({ timeoutMs: 3000, verify: false });
  });

  it('verify_and_map implies verify', () => {
    expect(options(withConf('tls { cert_file: a, key_file: b, verify_and_map: true }')).tls).toMatchObject({ verify: true, verifyAndMap: true });
  });

  it('needs cert_file and key_file; unknown keys and unimplemented restrictions are errors, other Go-only keys warnings', () => {
    expect(configError(withConf('tls {\n  key_file: b\n}'))).toMatch(/test\.conf:1: missing 'cert_file' in TLS configuration/);
    expect(configError(withConf('tls { cert_file: a }'))).toMatch(/missing 'key_file'/);
    expect(configError(withConf('tls { cert_file: a, key_file: b, nonsense: 1 }'))).toMatch(/unknown field "nonsense"/);
    expect(configError(withConf('tls { cert_file: a, key_file: b, cipher_suites: ["x"] }'))).toMatch(/'cipher_suites' in tls is not supported/);
    const r = withConf('tls { cert_file: a, key_file: b, handshake_first: true }');
    expect(r.kind === 'run' && r.warnings.some((w) => /handshake_first/.test(w))).toBe(true);
  });
});

describe('TLS flags', () => {
  const run = (argv: string[]): OptionsResult => resolveOptions(argv, {});

  it('--tls --tlscert --tlskey turn TLS on without verify', () => {
    expect(options(run(['--tls', '--tlscert', 's.pem', '--tlskey', 's.key'])).tls).toEqual({
      certFile: 's.pem',
      keyFile: 's.key',
      verify: false,
      verifyAndMap: false,
      timeoutMs: 2000,
    });
  });

  it('--tlscert and --tlskey alone imply --tls, as in nats-server; --tlsverify and --tlscacert add verification', () => {
    expect(options(run(['--tlscert', 's.pem', '--tlskey', 's.key'])).tls).toMatchObject({ certFile: 's.pem', verify: false });
    expect(options(run(['--tlsverify', '--tlscert', 's.pem', '--tlskey', 's.key', '--tlscacert', 'ca.pem'])).tls).toMatchObject({
      verify: true,
      caFile: 'ca.pem',
    });
  });

  it('flags override the file\'s tls {} field by field', () => {
    const o = options(withConf('tls { cert_file: f.pem, key_file: f.key, ca_file: f-ca.pem, timeout: 1 }', ['--tlscert', 'flag.pem', '--tlsverify']));
    expect(o.tls).toEqual({ certFile: 'flag.pem', keyFile: 'f.key', caFile: 'f-ca.pem', verify: true, verifyAndMap: false, timeoutMs: 1000 });
  });

  it('missing certificate or key: nats-server\'s errors, exit 1 (config error)', () => {
    expect(configError(run(['--tls']))).toBe('TLS Server certificate must be present and valid');
    expect(configError(run(['--tls', '--tlskey', 'k']))).toBe('TLS Server certificate must be present and valid');
    expect(configError(run(['--tls', '--tlscert', 'c']))).toBe('TLS Server private key must be present and valid');
  });

  it('without any TLS flag or block, TLS stays off', () => {
    expect(options(run(['-p', '4222'])).tls).toBeUndefined();
  });
});
