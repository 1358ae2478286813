import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { defaultServerOptions, type ServerOptions } from '../src/config/options.js';
import { USAGE_TEXT, defaultJetStreamStoreDir, resolveOptions, type OptionsResult } from '../src/config/load-options.js';

/** resolveOptions with an in-memory file set. */
function resolveWith(files: Record<string, string>, argv: string[], env: Record<string, string> = {}): OptionsResult {
  return resolveOptions(argv, env, (p) => {
    const text = files[p] ?? files[path.basename(p)];
    if (text === undefined) throw new Error(`ENOENT: no such file '${p}'`);
    return text;
  });
}

function runOptions(result: OptionsResult): { options: ServerOptions; warnings: string[] } {
  if (result.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(result)}`);
  return result;
}

function withConf(text: string, extraArgs: string[] = [], env: Record<string, string> = {}): OptionsResult {
  return resolveWith({ 'test.conf': text }, ['-c', 'test.conf', ...extraArgs], env);
}

function configError(result: OptionsResult): string {
  if (result.kind !== 'config-error') throw new Error(`expected config-error, got ${JSON.stringify(result)}`);
  return result.message;
}

describe('resolveOptions: no config file', () => {
  it('returns the defaults with no arguments', () => {
    const { options, warnings } = runOptions(resolveOptions([], {}));
    expect(options).toEqual(defaultServerOptions());
    expect(warnings).toEqual([]);
  });

  it('applies the npm start flags (-js -sd ./data -m 8222)', () => {
    const { options, warnings } = runOptions(resolveOptions(['-js', '-sd', './data', '-m', '8222'], {}));
    expect(options.jetstream).toEqual({ enabled: true, storeDir: './data', maxMemoryStoreBytes: -1, maxFileStoreBytes: -1 });
    expect(options.httpPort).toBe(8222);
    expect(options.httpHost).toBe('0.0.0.0');
    expect(warnings).toEqual([]);
  });

  it('defaults the JetStream store to a temp directory, with a warning, like nats-server', () => {
    const { options, warnings } = runOptions(resolveOptions(['-js'], {}));
    expect(options.jetstream.storeDir).toBe(defaultJetStreamStoreDir());
    expect(options.jetstream.storeDir.startsWith(tmpdir())).toBe(true);
    expect(warnings).toHaveLength(1);
  });

  it('maps logging flags to log levels', () => {
    expect(runOptions(resolveOptions(['-D'], {})).options.logLevel).toBe('debug');
    expect(runOptions(resolveOptions(['-V'], {})).options.logLevel).toBe('trace');
    expect(runOptions(resolveOptions(['-DV'], {})).options.logLevel).toBe('trace');
    expect(runOptions(resolveOptions(['--debug', '-l', 'x.log'], {})).options).toMatchObject({ logLevel: 'debug', logFile: 'x.log' });
  });

  it('maps the remaining flags onto options', () => {
    const { options } = runOptions(
      resolveOptions(
        ['-a', '127.0.0.1', '-p', '-1', '-n', 'srv', '--user', 'u', '--pass', 'p', '--cluster_name', 'c', '--cluster', 'nats://127.0.0.1:-1', '--routes', 'nats://127.0.0.1:7001,127.0.0.1:7002', '--ports_file_dir', '/tmp/pf'],
        {},
      ),
    );
    expect(options).toMatchObject({
      host: '127.0.0.1',
      httpHost: '127.0.0.1',
      port: -1,
      serverName: 'srv',
      authorization: { user: 'u', password: 'p', timeoutSec: 2 },
      cluster: { name: 'c', listen: { host: '127.0.0.1', port: -1 }, routes: ['127.0.0.1:7001', '127.0.0.1:7002'] },
      portsFileDir: '/tmp/pf',
    });
  });

  it('maps --auth to a token', () => {
    expect(runOptions(resolveOptions(['--auth', 'tok'], {})).options.authorization).toEqual({ token: 'tok', timeoutSec: 2 });
  });

  it('returns help, version and usage errors with the usage text', () => {
    expect(resolveOptions(['-h'], {})).toEqual({ kind: 'help', text: USAGE_TEXT });
    expect(resolveOptions(['--version'], {})).toEqual({ kind: 'version' });
    expect(resolveOptions(['-v', '-h'], {})).toEqual({ kind: 'version' });
    expect(resolveOptions(['--nope'], {})).toEqual({ kind: 'usage-error', message: 'flag provided but not defined: -nope', usage: USAGE_TEXT });
    for (const section of ['Server Options:', 'Logging Options:', 'JetStream Options:', 'Authorization Options:', 'Cluster Options:', 'Common Options:']) {
      expect(USAGE_TEXT).toContain(section);
    }
  });

  it('rejects -t without -c, routes without a cluster listener, and user plus token', () => {
    expect(resolveOptions(['-t'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('[-c, --config]') });
    expect(resolveOptions(['--routes', 'a:1'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('--cluster') });
    expect(resolveOptions(['--user', 'u', '--auth', 't'], {})).toMatchObject({ kind: 'usage-error' });
  });

  it('warns about accepted-but-ignored nats-server flags', () => {
    const { warnings } = runOptions(resolveOptions(['-T', '--syslog'], {}));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('-T');
  });

  it('reports an unreadable config file as a config error', () => {
    expect(configError(resolveWith({}, ['-c', 'missing.conf']))).toContain('error opening config file');
  });
});

describe('resolveOptions: config file keys', () => {
  it('reads host/port/listen forms', () => {
    expect(runOptions(withConf('host: 127.0.0.1\nport: 4333')).options).toMatchObject({ host: '127.0.0.1', port: 4333 });
    expect(runOptions(withConf('net: 10.0.0.1')).options.host).toBe('10.0.0.1');
    expect(runOptions(withConf('listen: "127.0.0.2:4444"')).options).toMatchObject({ host: '127.0.0.2', port: 4444 });
    expect(runOptions(withConf('listen: 127.0.0.3:-1')).options).toMatchObject({ host: '127.0.0.3', port: -1 });
    expect(runOptions(withConf('listen: 4555')).options).toMatchObject({ host: '0.0.0.0', port: 4555 });
    expect(runOptions(withConf('port: -1')).options.port).toBe(-1);
  });

  it('reads monitoring http forms; the monitor host follows the client host unless named', () => {
    expect(runOptions(withConf('http: "127.0.0.1:-1"')).options).toMatchObject({ httpHost: '127.0.0.1', httpPort: -1 });
    expect(runOptions(withConf('host: 127.0.0.9\nhttp: 8222')).options).toMatchObject({ httpHost: '127.0.0.9', httpPort: 8222 });
    expect(runOptions(withConf('http_port: 8223')).options.httpPort).toBe(8223);
    expect(runOptions(withConf('monitor_port: 8224')).options.httpPort).toBe(8224);
  });

  it('reads limits, sizes and durations', () => {
    const { options, warnings } = runOptions(
      withConf(
        'max_payload: 2MB\nmax_control_line: 8KB\nmax_pending: 32MB\nmax_connections: 100\nping_interval: "30s"\nping_max: 4\nwrite_deadline: "1.5s"',
      ),
    );
    expect(options).toMatchObject({
      maxPayloadBytes: 2 * 1024 * 1024,
      maxControlLineBytes: 8192,
      maxPendingBytes: 32 * 1024 * 1024,
      maxConnections: 100,
      pingIntervalMs: 30_000,
      pingMax: 4,
      writeDeadlineMs: 1500,
    });
    expect(warnings).toEqual([]);
  });

  it('reads unquoted durations: 1h30m, 10s and 2m (two minutes)', () => {
    expect(runOptions(withConf('ping_interval: 1h30m')).options.pingIntervalMs).toBe(90 * 60_000);
    expect(runOptions(withConf('ping_interval: 10s')).options.pingIntervalMs).toBe(10_000);
    expect(runOptions(withConf('ping_interval: 2m')).options.pingIntervalMs).toBe(120_000);
  });

  it('reads integer durations as seconds with a warning, as nats-server does', () => {
    const { options, warnings } = runOptions(withConf('\nping_interval: 30'));
    expect(options.pingIntervalMs).toBe(30_000);
    expect(warnings).toEqual([expect.stringMatching(/^test\.conf:2: ping_interval should be converted to a duration/)]);
  });

  it('reads logging keys', () => {
    expect(runOptions(withConf('debug: true')).options.logLevel).toBe('debug');
    expect(runOptions(withConf('trace: yes\ndebug: false')).options.logLevel).toBe('trace');
    expect(runOptions(withConf('log_file: "/tmp/a.log"')).options.logFile).toBe('/tmp/a.log');
    expect(runOptions(withConf('logfile: /tmp/b.log')).options.logFile).toBe('/tmp/b.log');
  });

  it('matches keys case-insensitively', () => {
    expect(runOptions(withConf('PORT: 4999\nMax_Payload: 1KB\nServer_Name: up')).options).toMatchObject({ port: 4999, maxPayloadBytes: 1024, serverName: 'up' });
  });

  it('reads authorization with a single user, a token, or a users list', () => {
    expect(runOptions(withConf('authorization { user: a, password: b, timeout: 3 }')).options.authorization).toEqual({ user: 'a', password: 'b', timeoutSec: 3 });
    expect(runOptions(withConf('authorization { token: "s3cr3t" }')).options.authorization).toEqual({ token: 's3cr3t', timeoutSec: 2 });
    expect(runOptions(withConf('authorization { token: t, timeout: "1500ms" }')).options.authorization).toEqual({ token: 't', timeoutSec: 1.5 });
    expect(runOptions(withConf('authorization { users: [ {user: a, password: b}, {username: c, pass: d} ] }')).options.authorization).toEqual({
      users: [
        { user: 'a', password: 'b' },
        { user: 'c', password: 'd' },
      ],
      timeoutSec: 2,
    });
  });

  it('reads jetstream as a boolean, enabled/disabled, or a block', () => {
    expect(runOptions(withConf('jetstream: enabled\nstore_dir: /tmp/js')).options.jetstream.enabled).toBe(true);
    expect(runOptions(withConf('jetstream: disabled')).options.jetstream.enabled).toBe(false);
    expect(runOptions(withConf('jetstream: true\nstore_dir: /tmp/js')).options.jetstream.enabled).toBe(true);
    expect(runOptions(withConf('jetstream: false')).options.jetstream.enabled).toBe(false);
    expect(runOptions(withConf('jetstream { store_dir: "/tmp/js", max_memory_store: 1GB, max_file_store: "10G", domain: hub }')).options.jetstream).toEqual({
      enabled: true,
      storeDir: '/tmp/js',
      maxMemoryStoreBytes: 1024 ** 3,
      maxFileStoreBytes: 10 * 1024 ** 3,
      domain: 'hub',
    });
    expect(runOptions(withConf('jetstream { enabled: false, store_dir: /tmp/js }')).options.jetstream.enabled).toBe(false);
  });

  it('reads the cluster block', () => {
    const conf = `cluster {
  name: c1
  listen: 127.0.0.1:6222
  routes: [
    nats-route://127.0.0.1:6223
    "nats://127.0.0.1:6224"
    127.0.0.1:6225
  ]
}`;
    expect(runOptions(withConf(conf)).options.cluster).toEqual({
      name: 'c1',
      listen: { host: '127.0.0.1', port: 6222 },
      routes: ['127.0.0.1:6223', '127.0.0.1:6224', '127.0.0.1:6225'],
    });
    expect(runOptions(withConf('cluster { host: 10.0.0.1, port: 7000 }')).options.cluster).toEqual({ listen: { host: '10.0.0.1', port: 7000 }, routes: [] });
    expect(runOptions(withConf('cluster { port: -1 }')).options.cluster?.listen).toEqual({ host: '0.0.0.0', port: -1 });
  });

  it('reads ports_file_dir and variables used for values', () => {
    const { options } = runOptions(withConf('dir = "/tmp/ports"\nports_file_dir: $dir\nport: $P', [], { P: '4777' }));
    expect(options).toMatchObject({ portsFileDir: '/tmp/ports', port: 4777 });
  });
});

describe('resolveOptions: ignored blocks and unknown keys', () => {
  it('accepts unserved blocks with exactly one warning each and lists them', () => {
    const conf = `gateway { name: g, port: 7222 }
mqtt { port: 1883 }
server_tags: ["AZ:1", "ssd"]`;
    const { options, warnings } = runOptions(withConf(conf));
    expect(options.ignoredBlocks).toEqual(['gateway', 'mqtt']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^test\.conf:1: 'gateway' is not supported/);
    // server_tags is served: lower-cased as nats-server compares them
    expect(options.serverTags).toEqual(['az:1', 'ssd']);
  });

  it('reads client_advertise, cluster advertise and no_advertise (file and flags)', () => {
    const { options } = runOptions(withConf('client_advertise: "edge:4999"\ncluster { port: 6222, advertise: "10.0.0.1:16222", no_advertise: true }'));
    expect(options.clientAdvertise).toBe('edge:4999');
    expect(options.cluster).toMatchObject({ advertise: '10.0.0.1:16222', noAdvertise: true });
    const flags = runOptions(resolveOptions(['--cluster', 'nats://127.0.0.1:6222', '--cluster_advertise', 'pod-0.svc', '--client_advertise', 'lb.example', '--no_advertise'], {}));
    expect(flags.options.clientAdvertise).toBe('lb.example');
    expect(flags.options.cluster).toMatchObject({ advertise: 'pod-0.svc', noAdvertise: true });
    expect(flags.warnings).toEqual([]);
  });

  it('reads server_tags as one comma-separated string and jetstream unique_tag', () => {
    const { options } = runOptions(withConf('server_tags: "az:2, ssd"\njetstream { store_dir: "/tmp/js", unique_tag: "AZ:" }'));
    expect(options.serverTags).toEqual(['az:2', 'ssd']);
    expect(options.jetstream.uniqueTag).toBe('az:');
  });

  it('leafnodes {}: listener, authorization users bound to accounts, remotes with their account', () => {
    const conf = `leafnodes {
  listen: "127.0.0.1:7422"
  reconnect: "2s"
  authorization { user: leafy, password: s3cret, account: A, timeout: 0.5 }
  remotes: [ { urls: ["nats-leaf://u:p@hub1:7422", "hub2:7422"], account: B } ]
}`;
    const { options, warnings } = runOptions(withConf(conf));
    expect(warnings).toEqual([]);
    expect(options.leafnodes).toEqual({
      host: '127.0.0.1',
      port: 7422,
      reconnectMs: 2000,
      authAccount: 'A',
      authTimeoutMs: 500,
      users: [{ user: 'leafy', password: 's3cret', account: 'A' }],
      remotes: [{ urls: ['nats-leaf://u:p@hub1:7422', 'nats-leaf://hub2:7422'], account: 'B' }],
    });
  });

  it('refuses keys whose absence would weaken security, naming the key and its line', () => {
    expect(configError(withConf('port: 1\nauthorization { users: [ { user: a, password: b, proxy_required: true } ] }'))).toBe(
      "test.conf:2: 'proxy_required' in users is not supported by flotilla yet; ignoring it would let the user connect without the trusted proxy the config requires, so the server refuses to start",
    );
    // an account's own nkey is implemented: one that is not a public account key is refused as nats-server does
    expect(configError(withConf('port: 1\naccounts { A: { users: [ { user: a, password: b } ], nkey: "ADXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4" } }'))).toBe(
      'test.conf:2: Not a valid public nkey for an account: "ADXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"',
    );
    // account limits are implemented: an unknown one is an error, as in nats-server
    expect(configError(withConf('accounts { A: { limits: { max_conns: 1 } } }'))).toBe('test.conf:1: Unknown field "max_conns" parsing account limits');
    expect(configError(withConf('jetstream {\n store_dir: x\n  KEY: s3cr3t }'))).toMatch(/^test\.conf:3: 'KEY' in jetstream is not supported .* unencrypted/);
    // nkey users are implemented: a malformed key is refused as nats-server refuses it
    expect(configError(withConf('authorization { users: [ { nkey: UA } ] }'))).toBe('test.conf:1: Not a valid public nkey for a user');
  });

  it('reads a user entry\'s authorization as its permissions (a nats-server alias)', () => {
    const { options } = runOptions(withConf('authorization { users: [ { user: a, password: b, authorization: { publish: "x" } } ] }'));
    expect(options.authorization?.users?.[0]?.permissions).toEqual({ publish: { allow: ['x'] } });
  });

  it('rejects unknown top-level and nested keys like nats-server 2.9.10', () => {
    expect(configError(withConf('port: 4222\nfoo_bar: 1'))).toBe('test.conf:2: unknown field "foo_bar"');
    expect(configError(withConf('authorization {\n  user: a\n  foo: 1\n}'))).toBe('test.conf:3: unknown field "foo"');
    expect(configError(withConf('cluster { blah: 1 }'))).toBe('test.conf:1: unknown field "blah"');
    expect(configError(withConf('jetstream {\n store_dir: x\n  wat: 1 }'))).toBe('test.conf:3: unknown field "wat"');
  });

  it('treats an unused variable definition as an unknown field, and a used one as fine', () => {
    expect(configError(withConf('x = 5\nport: 1'))).toBe('test.conf:1: unknown field "x"');
    expect(runOptions(withConf('x = 5\nport: $x')).options.port).toBe(5);
  });

  it('does not flag a variable defined and used inside an included file', () => {
    const files = { 'main.conf': 'include vars.conf\nport: $P', 'vars.conf': 'P = 4100\nH = 127.0.0.1\nhost: $H' };
    expect(runOptions(resolveWith(files, ['-c', 'main.conf'])).options).toMatchObject({ port: 4100, host: '127.0.0.1' });
  });

  it('accepts other nats-server keys flotilla does not act on, with a warning', () => {
    const { options, warnings } = runOptions(withConf('prof_port: 6060\nsyslog: true'));
    expect(options.ignoredBlocks).toEqual(['prof_port', 'syslog']);
    expect(warnings).toHaveLength(2);
  });

  it('reads pid_file and the lame-duck durations; -P overrides pid_file', () => {
    const { options, warnings } = runOptions(withConf('pid_file: /tmp/n.pid\nlame_duck_duration: "1m30s"\nlame_duck_grace_period: "0s"'));
    expect(options).toMatchObject({ pidFile: '/tmp/n.pid', lameDuckDurationMs: 90_000, lameDuckGracePeriodMs: 0 });
    expect(warnings).toEqual([]);
    expect(runOptions(withConf('pidfile: /tmp/n.pid', ['-P', '/tmp/flag.pid'])).options.pidFile).toBe('/tmp/flag.pid');
  });

  it('reads logfile_size_limit / logfile_max_num (and their short names); --log_size_limit overrides', () => {
    const { options } = runOptions(withConf('log_file: /tmp/a.log\nlogfile_size_limit: 1MB\nlogfile_max_num: 5'));
    expect(options).toMatchObject({ logFile: '/tmp/a.log', logSizeLimitBytes: 1024 * 1024, logMaxFiles: 5 });
    expect(runOptions(withConf('log_size_limit: 100\nlog_max_num: 2')).options).toMatchObject({ logSizeLimitBytes: 100, logMaxFiles: 2 });
    expect(runOptions(withConf('log_size_limit: 100', ['--log_size_limit', '300'])).options.logSizeLimitBytes).toBe(300);
  });

  it("refuses lame-duck durations nats-server refuses, with its messages", () => {
    expect(configError(withConf('lame_duck_duration: "10s"'))).toContain('invalid lame_duck_duration of 10s, minimum is 30 seconds');
    expect(configError(withConf('lame_duck_duration: "29.5s"'))).toContain('invalid lame_duck_duration of 29.5s, minimum is 30 seconds');
    expect(configError(withConf('lame_duck_duration: "soon"'))).toContain('error parsing lame_duck_duration: time: invalid duration "soon"');
    expect(configError(withConf('lame_duck_grace_period: "-1s"'))).toContain('invalid lame_duck_grace_period, needs to be positive');
  });
});

describe('resolveOptions: wrong types and values name the line', () => {
  const cases: Array<{ text: string; line: number; pattern: RegExp }> = [
    { text: 'port: "abc"', line: 1, pattern: /port: expected an integer, got a string/ },
    { text: '\nport: 70000', line: 2, pattern: /port must be -1\.\.65535/ },
    { text: 'a = 1\nport: 1.5\nb: $a', line: 2, pattern: /expected an integer, got a float/ },
    { text: '\n\nmax_payload: -5', line: 3, pattern: /can not be negative/ },
    { text: 'max_payload: 3GB', line: 1, pattern: /too big/ },
    { text: 'debug: enabled', line: 1, pattern: /expected a boolean/ },
    { text: 'host: 5', line: 1, pattern: /expected a string, got an integer/ },
    { text: 'listen: "nohost"', line: 1, pattern: /could not parse address/ },
    { text: 'ping_interval: "soon"', line: 1, pattern: /invalid duration "soon"/ },
    { text: 'jetstream: maybe', line: 1, pattern: /Expected 'enabled' or 'disabled'/ },
    { text: 'jetstream {\n  max_file_store: "10Gb"\n}', line: 2, pattern: /must be a number ending in K, M, G or T/ },
    { text: 'cluster {\n  routes: [\n    nats://ok:6222\n    "nats://a:abc"\n  ]\n}', line: 4, pattern: /error parsing route url/ },
    { text: 'authorization: 5', line: 1, pattern: /expected a block/ },
    { text: 'authorization {\n user: a\n token: b\n}', line: 1, pattern: /Cannot have a user\/pass and token/ },
    { text: 'authorization { user: x, users: [ {user: a} ] }', line: 1, pattern: /single user\/pass and a users array/ },
    { text: 'authorization {\n users: [\n  {user: a}\n  {user: a}\n ]\n}', line: 4, pattern: /Duplicate user "a"/ },
    { text: 'authorization { users: [ { password: p } ] }', line: 1, pattern: /requires a user/ },
    { text: 'server_name: "has space"', line: 1, pattern: /can not contain spaces/ },
    { text: 'store_dir: /a\njetstream { store_dir: /b }', line: 2, pattern: /Duplicate 'store_dir'/ },
  ];
  for (const c of cases) {
    it(c.text.replace(/\n/g, ' | '), () => {
      const message = configError(withConf(c.text));
      expect(message.startsWith(`test.conf:${c.line}: `)).toBe(true);
      expect(message).toMatch(c.pattern);
    });
  }

  it('reports every error in the file, one per line', () => {
    const message = configError(withConf('port: "x"\nhost: 1\nbogus: 2'));
    expect(message.split('\n')).toEqual([
      'test.conf:1: port: expected an integer, got a string',
      'test.conf:2: host: expected a string, got an integer',
      'test.conf:3: unknown field "bogus"',
    ]);
  });

  it('passes syntax errors through with file and line', () => {
    expect(configError(withConf('port: 1\ncluster {\n name: x\n'))).toMatch(/^test\.conf:2: /);
    expect(configError(withConf('port: $NOT_SET_ANYWHERE'))).toMatch(/^test\.conf:1: .*NOT_SET_ANYWHERE/);
  });

  it('rejects max_payload above max_pending (64 MiB by default) and warns above 8 MiB', () => {
    expect(configError(withConf('\nmax_payload: 65MB'))).toBe('test.conf:2: max_payload (68157440) cannot be higher than max_pending (67108864)');
    expect(runOptions(withConf('max_payload: 64MB')).options.maxPayloadBytes).toBe(64 * 1024 * 1024);
    expect(runOptions(withConf('max_payload: 64MB')).warnings).toEqual([expect.stringContaining('over 8 MiB')]);
    expect(runOptions(withConf('max_payload: 100MB\nmax_pending: 200MB')).options.maxPayloadBytes).toBe(100 * 1024 * 1024);
  });
});

describe('resolveOptions: flags override the file', () => {
  const conf = `port: 4001
host: 10.0.0.1
server_name: from_file
http: 8001
debug: true
trace: true
logfile: file.log
jetstream { store_dir: /file/js }
authorization { user: fu, password: fp }
cluster { name: fc, listen: 0.0.0.0:6001, routes: [ nats://r1:6001 ] }`;

  it('uses file values when no flag is given', () => {
    const { options } = runOptions(withConf(conf));
    expect(options).toMatchObject({
      port: 4001,
      host: '10.0.0.1',
      serverName: 'from_file',
      httpPort: 8001,
      logLevel: 'trace',
      logFile: 'file.log',
      jetstream: { enabled: true, storeDir: '/file/js' },
      authorization: { user: 'fu', password: 'fp' },
      cluster: { name: 'fc', listen: { host: '0.0.0.0', port: 6001 }, routes: ['r1:6001'] },
      configFile: 'test.conf',
    });
  });

  it('lets every flag win over the file, whatever the order on the command line', () => {
    const args = ['-p', '5001', '-a', '127.0.0.1', '-n', 'from_flag', '-m', '9001', '-D=false', '-V=false', '-l', 'flag.log', '-js=false', '-sd', '/flag/js', '--user', 'xu', '--pass', 'xp', '--cluster_name', 'xc', '--cluster', 'nats://127.0.0.1:7001', '--routes', 'nats://r9:7009'];
    const { options } = runOptions(resolveWith({ 'test.conf': conf }, [...args.slice(0, 6), '-c', 'test.conf', ...args.slice(6)]));
    expect(options).toMatchObject({
      port: 5001,
      host: '127.0.0.1',
      serverName: 'from_flag',
      httpPort: 9001,
      logLevel: 'info',
      logFile: 'flag.log',
      jetstream: { enabled: false, storeDir: '/flag/js' },
      authorization: { user: 'xu', password: 'xp' },
      cluster: { name: 'xc', listen: { host: '127.0.0.1', port: 7001 }, routes: ['r9:7009'] },
    });
  });

  it('-D alone still leaves a file trace setting in force', () => {
    expect(runOptions(withConf('trace: true', ['-D'])).options.logLevel).toBe('trace');
    expect(runOptions(withConf('debug: false', ['-D'])).options.logLevel).toBe('debug');
  });

  it('allows --routes when the file provides the cluster listener', () => {
    expect(runOptions(withConf('cluster { port: 6222 }', ['--routes', 'h:1'])).options.cluster).toEqual({ listen: { host: '0.0.0.0', port: 6222 }, routes: ['h:1'] });
  });

  it('--auth replaces a file user', () => {
    expect(runOptions(withConf('authorization { user: a, password: b }', ['--auth', 'tok'])).options.authorization).toEqual({ token: 'tok', timeoutSec: 2 });
  });
});

describe('resolveOptions: a real-world nats-server.conf from disk', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'flotilla-config-'));
    mkdirSync(path.join(dir, 'conf.d'));
    writeFileSync(
      path.join(dir, 'nats-server.conf'),
      `# Production-style nats-server configuration (nats-server 2.9.10 -t accepts it)
server_name: "n1-east"
listen: 0.0.0.0:4222
http: 8222

max_payload: 8MB
max_pending: 64MB
max_connections: 10000
ping_interval: "30s"
ping_max: 3
write_deadline: "5s"

debug: false
trace: false
logfile: "/var/log/nats/nats.log"

jetstream {
  store_dir: "/data/jetstream"
  max_memory_store: 1GB
  max_file_store: 100GB
  domain: hub
}

authorization {
  timeout: 2.5
  users: [
    { user: admin, password: $ADMIN_PASS }
    { user: "app", password: "app-secret" }
  ]
}

cluster {
  name: "east"
  listen: 0.0.0.0:6222
  routes: [
    nats-route://n2-east:6222
    nats-route://n3-east:6222
  ]
}

server_tags: ["az:1"]
pid_file: "/var/run/nats.pid"

leafnodes {
  port: 7422
}

include "conf.d/websocket.conf"
`,
    );
    writeFileSync(path.join(dir, 'conf.d', 'websocket.conf'), 'websocket {\n  port: 8080\n  no_tls: true\n}\n');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('resolves every served option and warns once per unserved block', () => {
    const file = path.join(dir, 'nats-server.conf');
    const { options, warnings } = runOptions(resolveOptions(['-c', file], { ADMIN_PASS: 'pw' }));
    expect(options).toEqual({
      ...defaultServerOptions(),
      serverName: 'n1-east',
      host: '0.0.0.0',
      port: 4222,
      httpHost: '0.0.0.0',
      httpPort: 8222,
      maxPayloadBytes: 8 * 1024 * 1024,
      maxPendingBytes: 64 * 1024 * 1024,
      maxConnections: 10000,
      pingIntervalMs: 30_000,
      pingMax: 3,
      writeDeadlineMs: 5000,
      logLevel: 'info',
      logFile: '/var/log/nats/nats.log',
      jetstream: { enabled: true, storeDir: '/data/jetstream', maxMemoryStoreBytes: 1024 ** 3, maxFileStoreBytes: 100 * 1024 ** 3, domain: 'hub' },
      authorization: {
        timeoutSec: 2.5,
        users: [
          { user: 'admin', password: 'pw' },
          { user: 'app', password: 'app-secret' },
        ],
      },
      cluster: { name: 'east', listen: { host: '0.0.0.0', port: 6222 }, routes: ['n2-east:6222', 'n3-east:6222'] },
      websocket: { host: '0.0.0.0', port: 8080, noTls: true, sameOrigin: false, allowedOrigins: [], compression: false, handshakeTimeoutMs: 0 },
      pidFile: '/var/run/nats.pid',
      serverTags: ['az:1'],
      leafnodes: { host: '0.0.0.0', port: 7422, users: [], remotes: [], reconnectMs: 1000 },
      ignoredBlocks: [],
      configFile: file,
    });
    expect(warnings).toEqual([]); // its leafnodes block and server_tags are both served now
  });

  it('checks the file with -t', () => {
    const file = path.join(dir, 'nats-server.conf');
    expect(resolveOptions(['-t', '-c', file], { ADMIN_PASS: 'pw' })).toMatchObject({ kind: 'check-ok', configFile: file });
    expect(configError(resolveOptions(['-t', '-c', file], {}))).toMatch(/nats-server\.conf:27: .*ADMIN_PASS/);
  });
});
