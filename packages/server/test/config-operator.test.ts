// Operator-mode config keys: operator JWT inline or from a file, MEMORY and full resolvers, preloaded
// accounts becoming options.accounts, and the refusals (an unknown resolver type, a bad JWT, missing parts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveOptions, type OptionsResult } from '../src/config/load-options.js';
import { TestOperator, type TestAccount } from '../../../test/helpers/operator-jwts.js';
import { createAccount, createCurve } from '@nats-io/jwt';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-config-operator-'));
let op: TestOperator;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let a: TestAccount;

function load(text: string): OptionsResult {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.conf`);
  writeFileSync(file, text);
  return resolveOptions(['-c', file], {});
}

function message(r: OptionsResult): string {
  if (r.kind !== 'config-error') throw new Error(`expected config-error, got ${r.kind}`);
  return r.message;
}

beforeAll(async () => {
  op = await TestOperator.create();
  a = await op.account('A', { limits: { conn: 5, subs: 7, payload: 100 } as never });
});

describe('operator config', () => {
  it('MEMORY + resolver_preload: each account is an options account named by its key, with its limits; the operator names the system account', () => {
    const r = load(op.conf([a]).replace(/system_account: .*\n/, ''));
    if (r.kind !== 'run') throw new Error(message(r));
    expect(r.options.systemAccount).toBe(op.system.pub);
    const acc = r.options.accounts!.find((x) => x.name === a.pub)!;
    expect(acc.limits).toEqual({ maxConnections: 5, maxSubscriptions: 7, maxPayloadBytes: 100, maxLeafnodes: -1 });
    expect(r.options.operator!.resolver).toEqual({ type: 'memory' });
  });

  it('the operator JWT may come from a file, decorated as nsc writes it', () => {
    const file = join(dir, 'op.jwt');
    writeFileSync(file, `-----BEGIN NATS OPERATOR JWT-----\n${op.jwt}\n------END NATS OPERATOR JWT------\n`);
    const r = load(op.conf([a]).replace(`operator: "${op.jwt}"`, `operator: "${file}"`));
    expect(r.kind).toBe('run');
  });

  it('a full resolver block is parsed with its defaults', () => {
    const r = load(op.conf([a], `{ type: full, dir: "${join(dir, 'jwt')}", allow_delete: true, interval: "30s", limit: 10 }`));
    if (r.kind !== 'run') throw new Error(message(r));
    expect(r.options.operator!.resolver).toEqual({ type: 'full', dir: join(dir, 'jwt'), allowDelete: true, intervalMs: 30_000, limit: 10 });
  });

  it('trusted_keys alone trust the operator key; account_resolver is resolver by another name', () => {
    const conf = op.conf([a]).replace(`operator: "${op.jwt}"`, `trusted_keys: [ "${op.kp.getPublicKey()}", "${op.signingKp.getPublicKey()}" ]`).replace('resolver: MEMORY', 'account_resolver: MEMORY');
    const r = load(conf);
    if (r.kind !== 'run') throw new Error(message(r));
    expect(r.options.operator!.trustedKeys).toEqual([op.kp.getPublicKey(), op.signingKp.getPublicKey()]);
    expect(r.options.accounts!.map((x) => x.name)).toContain(a.pub);
    expect(message(load(`trusted: "ABAD"\nresolver: MEMORY`))).toMatch(/trust key "ABAD" required to be a valid public operator nkey/);
  });

  it('refuses a URL resolver, a cache resolver, a bad operator JWT, and operator mode without a resolver', () => {
    expect(message(load(op.conf([a], 'URL("http://localhost:9090/jwt/v1/accounts/")')))).toMatch(/resolver: .* is not supported by flotilla yet/);
    expect(message(load(op.conf([a], `{ type: cache, dir: "${dir}" }`)))).toMatch(/resolver type "cache" is not supported/);
    expect(message(load(op.conf([a]).replace(op.jwt, `${op.jwt.slice(0, -4)}AAAA`)))).toMatch(/error parsing operator JWT/);
    expect(message(load(`operator: "${op.jwt}"`))).toMatch(/requires a resolver/);
    expect(message(load(`${op.conf([a])}\naccounts { X: { users: [ { user: x, password: x } ] } }`))).toMatch(/does not allow accounts/);
  });
});

describe('auth_callout config', () => {
  const issuer = createAccount().getPublicKey();
  const xkey = createCurve().getPublicKey();
  const block = (inner: string): string => `authorization { users: [ { user: auth, password: pwd } ]\n auth_callout { ${inner} } }`;

  it('is parsed into authorization.callout', () => {
    const r = load(block(`issuer: "${issuer}", auth_users: [ auth ], xkey: "${xkey}"`));
    if (r.kind !== 'run') throw new Error(message(r));
    expect(r.options.authorization!.callout).toEqual({ issuer, authUsers: ['auth'], xkey });
  });

  it("refuses a bad issuer, a bad xkey, no auth_users and unknown fields with nats-server's messages", () => {
    expect(message(load(block(`issuer: "UABC", auth_users: [ auth ]`)))).toMatch(/Expected callout user to be a valid public account nkey/);
    expect(message(load(block(`issuer: "${issuer}", auth_users: [ auth ], xkey: "${issuer}"`)))).toMatch(/Expected callout xkey to be a valid public xkey/);
    expect(message(load(block(`issuer: "${issuer}"`)))).toMatch(/Authorization callouts require authorized users to be specified/);
    expect(message(load(block(`issuer: "${issuer}", auth_users: [ auth ], nope: 1`)))).toMatch(/Unknown field "nope" parsing authorization callout/);
  });

  it('refuses an allowed account that is not configured, as nats-server does after reading the file', () => {
    const conf = (allowed: string): string =>
      `accounts { APP: { users: [ { user: app, password: p } ] } }\n${block(`issuer: "${issuer}", auth_users: [ auth ], allowed_accounts: [ ${allowed} ]`)}`;
    expect(message(load(conf('NOPE')))).toMatch(/auth_callout allowed account "NOPE" not found in configured accounts/);
    const ok = load(conf('APP'));
    if (ok.kind !== 'run') throw new Error(message(ok));
    expect(ok.options.authorization!.callout!.allowedAccounts).toEqual(['APP']);
  });
});
