// Fail closed: a config that asks for a security or durability setting Flotilla does not implement must
// not start (exit 1, the key named on stderr), and `-t` must fail the same way. Blocks not served yet (a
// listener that is simply not opened) only warn. Each case is a realistic nats-server config.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { UNIMPLEMENTED_KEYS, type ConfScope } from '../packages/server/src/config/unimplemented-keys.js';
import { runFlotilla } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-failclosed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TLS = 'cert_file: "s.pem", key_file: "s.key"';
const CLUSTER_TLS = `${TLS}, ca_file: "ca.pem"`;

interface Case {
  scope: ConfScope;
  key: string;
  conf: string;
}

/** One config per refused key, the key in the block where nats-server reads it. */
const REFUSED: Case[] = [
  { scope: 'top', key: 'resolver_tls', conf: `resolver_tls { ${TLS} }` },
  { scope: 'top', key: 'resolver_pinned_accounts', conf: 'resolver_pinned_accounts: ["ACCT"]' },
  { scope: 'top', key: 'max_sub_tokens', conf: 'max_sub_tokens: 8' },
  { scope: 'top', key: 'max_subscription_tokens', conf: 'max_subscription_tokens: 8' },
  { scope: 'top', key: 'ocsp', conf: 'ocsp { mode: must }' },
  { scope: 'jetstream', key: 'key', conf: 'jetstream { store_dir: "js", key: "s3cr3t" }' },
  { scope: 'jetstream', key: 'ek', conf: 'jetstream { store_dir: "js", ek: "s3cr3t" }' },
  { scope: 'jetstream', key: 'encryption_key', conf: 'jetstream { store_dir: "js", encryption_key: "s3cr3t" }' },
  { scope: 'jetstream', key: 'prev_encryption_key', conf: 'jetstream { store_dir: "js", prev_encryption_key: "old" }' },
  { scope: 'jetstream', key: 'cipher', conf: 'jetstream { store_dir: "js", cipher: chachapoly }' },
  { scope: 'jetstream', key: 'limits', conf: 'jetstream { store_dir: "js", limits { max_ack_pending: 100 } }' },
  { scope: 'tls', key: 'cipher_suites', conf: `tls { ${TLS}, cipher_suites: ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"] }` },
  { scope: 'tls', key: 'curve_preferences', conf: `tls { ${TLS}, curve_preferences: ["CurveP521"] }` },
  { scope: 'tls', key: 'pinned_certs', conf: `tls { ${TLS}, verify: true, pinned_certs: ["a9d0f5c3"] }` },
  { scope: 'tls', key: 'verify_cert_and_check_known_urls', conf: `tls { ${TLS}, verify_cert_and_check_known_urls: true }` },
  { scope: 'websocket tls', key: 'cipher_suites', conf: `websocket { port: -1, tls { ${TLS}, cipher_suites: ["TLS_AES_128_GCM_SHA256"] } }` },
  { scope: 'websocket tls', key: 'curve_preferences', conf: `websocket { port: -1, tls { ${TLS}, curve_preferences: ["X25519"] } }` },
  { scope: 'websocket tls', key: 'pinned_certs', conf: `websocket { port: -1, tls { ${TLS}, pinned_certs: ["a9d0f5c3"] } }` },
  { scope: 'websocket tls', key: 'verify_cert_and_check_known_urls', conf: `websocket { port: -1, tls { ${TLS}, verify_cert_and_check_known_urls: true } }` },
  { scope: 'cluster', key: 'permissions', conf: 'cluster { port: -1, permissions { import: "a.>", export: "b.>" } }' },
  { scope: 'cluster tls', key: 'cipher_suites', conf: `cluster { port: -1, tls { ${CLUSTER_TLS}, cipher_suites: ["TLS_AES_128_GCM_SHA256"] } }` },
  { scope: 'cluster tls', key: 'curve_preferences', conf: `cluster { port: -1, tls { ${CLUSTER_TLS}, curve_preferences: ["X25519"] } }` },
  { scope: 'cluster tls', key: 'pinned_certs', conf: `cluster { port: -1, tls { ${CLUSTER_TLS}, pinned_certs: ["a9d0f5c3"] } }` },
  { scope: 'cluster tls', key: 'verify_and_map', conf: `cluster { port: -1, tls { ${CLUSTER_TLS}, verify_and_map: true } }` },
  { scope: 'cluster tls', key: 'verify_cert_and_check_known_urls', conf: `cluster { port: -1, tls { ${CLUSTER_TLS}, verify_cert_and_check_known_urls: true } }` },
  { scope: 'leafnodes', key: 'tls', conf: `leafnodes { port: -1, tls { ${TLS} } }` },
  { scope: 'leafnodes', key: 'min_version', conf: 'leafnodes { port: -1, min_version: "2.8.0" }' },
  { scope: 'leafnodes remote', key: 'credentials', conf: 'leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:7422", credentials: "/etc/nats/u.creds" } ] }' },
  { scope: 'leafnodes remote', key: 'nkey', conf: 'leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:7422", nkey: "UABC" } ] }' },
  { scope: 'leafnodes remote', key: 'tls', conf: `leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:7422", tls { ${TLS} } } ] }` },
  { scope: 'leafnodes remote', key: 'deny_imports', conf: 'leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:7422", deny_imports: ["a.>"] } ] }' },
  { scope: 'leafnodes remote', key: 'deny_exports', conf: 'leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:7422", deny_exports: ["a.>"] } ] }' },
  { scope: 'users', key: 'allowed_connection_types', conf: 'authorization { users: [ { user: a, password: a, allowed_connection_types: ["WEBSOCKET"] } ] }' },
  { scope: 'users', key: 'connection_types', conf: 'authorization { users: [ { user: a, password: a, connection_types: ["MQTT"] } ] }' },
  { scope: 'users', key: 'clients', conf: 'authorization { users: [ { user: a, password: a, clients: ["LEAFNODE"] } ] }' },
  { scope: 'users', key: 'proxy_required', conf: 'authorization { users: [ { user: a, password: a, proxy_required: true } ] }' },
];

function writeConf(name: string, text: string): string {
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, `port: -1\n${text}\n`);
  return file;
}

function scopeText(scope: ConfScope): string {
  return scope === 'top' ? '' : ` in ${scope}`;
}

describe('keys Flotilla does not implement and must not ignore', () => {
  it('every refused key of the table has a case here, and every case is refused by the table', () => {
    const refused = Object.entries(UNIMPLEMENTED_KEYS).flatMap(([scope, keys]) =>
      Object.entries(keys)
        .filter(([, k]) => k.effect === 'refuse')
        .map(([key]) => `${scope}/${key}`),
    );
    expect(REFUSED.map((c) => `${c.scope}/${c.key}`).sort()).toEqual(refused.sort());
  });

  it.concurrent.each(REFUSED)('$scope: $key — the server refuses to start, naming the key (exit 1)', async ({ scope, key, conf }) => {
    const file = writeConf(`${scope.replace(' ', '-')}-${key}`, conf);
    const r = await runFlotilla(['-c', file], dir);
    expect(r.stderr).toContain(`'${key}'${scopeText(scope)} is not supported by flotilla yet`);
    expect(r.stderr).toContain('refuses to start');
    expect(r.code).toBe(1);
  });

  it('-t reports each of them as an error (exit 1), one config holding them all', async () => {
    const byScope = (scope: ConfScope): Case[] => REFUSED.filter((c) => c.scope === scope);
    const conf = [
      // top-level keys, each on its own line
      ...byScope('top').map((c) => c.conf.split('\n').at(-1)!),
      'jetstream { store_dir: "js", key: "s3cr3t", ek: "s3cr3t", encryption_key: "s3cr3t", prev_encryption_key: "old", cipher: aes, limits { max_ack_pending: 1 } }',
      `tls { ${TLS}, cipher_suites: ["x"], curve_preferences: ["X25519"], pinned_certs: ["a9"], verify_cert_and_check_known_urls: true }`,
      `cluster { port: -1, permissions { import: "a" }, tls { ${CLUSTER_TLS}, cipher_suites: ["x"], curve_preferences: ["X25519"], pinned_certs: ["a9"], verify_and_map: true, verify_cert_and_check_known_urls: true } }`,
      `websocket { port: -1, tls { ${TLS}, cipher_suites: ["x"], curve_preferences: ["X25519"], pinned_certs: ["a9"], verify_cert_and_check_known_urls: true } }`,
      `leafnodes { port: -1, min_version: "2.8.0", tls { ${TLS} }, remotes: [ { url: "nats-leaf://127.0.0.1:7422", credentials: "/x.creds", nkey: "UABC", deny_imports: ["a"], deny_exports: ["b"], tls { ${TLS} } } ] }`,
      'authorization { users: [',
      '  { user: a, password: a }',
      '  { user: b, password: b, allowed_connection_types: ["WEBSOCKET"], connection_types: ["MQTT"], clients: ["LEAFNODE"], proxy_required: true }',
      '] }',
    ].join('\n');
    const r = await runFlotilla(['-t', '-c', writeConf('all-refused', conf)], dir);
    for (const c of REFUSED) expect(r.stderr).toContain(`'${c.key}'${scopeText(c.scope)} is not supported by flotilla yet`);
    expect(r.stdout).not.toContain('test is successful');
    expect(r.code).toBe(1);
  });

  it('accounts with JetStream in a cluster are no longer refused: -t passes', async () => {
    const conf = 'accounts { A: { jetstream: enabled, users: [ { user: a, password: a } ] } }\ncluster { port: -1 }\njetstream { store_dir: "js" }';
    const r = await runFlotilla(['-t', '-c', writeConf('accounts-with-js-cluster', conf)], dir);
    expect(r.stdout).toContain('test is successful');
    expect(r.code).toBe(0);
  });
});

describe('blocks not served yet', () => {
  it('mqtt and gateway only warn, and the server serves clients', async () => {
    const conf = [
      'mqtt { port: 1883 }',
      'gateway { name: g, port: 7222 }',
    ].join('\n');
    const file = writeConf('unserved', conf);
    const checked = await runFlotilla(['-t', '-c', file], dir);
    expect(checked.code).toBe(0);
    for (const block of ['mqtt', 'gateway']) {
      expect(checked.stderr).toContain(`'${block}' is not supported by flotilla yet and is ignored`);
    }
    const server = await startServer({ args: ['-c', file] });
    try {
      const nc = await connect({ servers: server.url });
      const sub = nc.subscribe('ping.x', { max: 1 });
      nc.publish('ping.x', 'hi');
      for await (const m of sub) expect(m.string()).toBe('hi');
      await nc.close();
    } finally {
      await server.stop();
    }
  });
});

describe('numbers nats-server refuses', () => {
  it.concurrent.each([
    { name: 'int64', text: 'max_payload: 99999999999999999999', error: "integer '99999999999999999999' is out of the range" },
    { name: 'sized', text: 'jetstream { store_dir: "js", max_file_store: 10000P }', error: "integer '10000P' is out of the range" },
    { name: 'exponent', text: 'authorization { users: [ { user: a, password: a, permissions: { allow_responses: { max_msgs: 1e30 } } } ] }', error: "invalid number '1e30'" },
  ])('$text — exit 1 with -t and without', async ({ name, text, error }) => {
    const file = writeConf(`number-${name}`, text);
    for (const args of [['-c', file], ['-t', '-c', file]]) {
      const r = await runFlotilla(args, dir);
      expect(r.stderr).toContain(error);
      expect(r.code).toBe(1);
    }
  });
});
