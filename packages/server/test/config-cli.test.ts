import { describe, it, expect } from 'vitest';
import { parseCommandLine, type CliFlags } from '../src/config/cli.js';

function flagsOf(argv: string[]): CliFlags {
  const r = parseCommandLine(argv);
  if (r.kind !== 'flags') throw new Error(`unexpected usage error: ${r.message}`);
  return r.flags;
}

function usageMessage(argv: string[]): string {
  const r = parseCommandLine(argv);
  if (r.kind !== 'usage-error') throw new Error(`expected a usage error for ${argv.join(' ')}`);
  return r.message;
}

describe('cli: flag forms', () => {
  it('takes no flags', () => {
    expect(flagsOf([])).toEqual({ help: false, version: false, checkConfig: false, ignoredFlags: [] });
  });

  it('accepts -flag value, --flag value, -flag=value and --flag=value alike', () => {
    expect(flagsOf(['-p', '4333']).port).toBe(4333);
    expect(flagsOf(['--port', '4334']).port).toBe(4334);
    expect(flagsOf(['-p=4335']).port).toBe(4335);
    expect(flagsOf(['--port=4336']).port).toBe(4336);
  });

  it('takes a negative value as the next argument (-p -1 = random port)', () => {
    expect(flagsOf(['-p', '-1']).port).toBe(-1);
    expect(flagsOf(['-m', '-1']).httpPort).toBe(-1);
  });

  it('lets the last occurrence of a flag win', () => {
    expect(flagsOf(['-p', '1', '--port', '2']).port).toBe(2);
  });

  it('maps every server flag and alias', () => {
    for (const name of ['-a', '--addr', '--net', '-addr']) expect(flagsOf([name, '127.0.0.1']).host).toBe('127.0.0.1');
    for (const name of ['-n', '--name', '--server_name', '-server_name']) expect(flagsOf([name, 'n1']).serverName).toBe('n1');
    for (const name of ['-m', '--http_port']) expect(flagsOf([name, '8222']).httpPort).toBe(8222);
    for (const name of ['-c', '--config']) expect(flagsOf([name, 'x.conf']).configFile).toBe('x.conf');
    for (const name of ['-sd', '--store_dir']) expect(flagsOf([name, './data']).storeDir).toBe('./data');
    for (const name of ['-l', '--log']) expect(flagsOf([name, 'out.log']).logFile).toBe('out.log');
    expect(flagsOf(['--user', 'u', '--pass', 'p'])).toMatchObject({ user: 'u', pass: 'p' });
    expect(flagsOf(['--auth', 's3cr3t']).authToken).toBe('s3cr3t');
    expect(flagsOf(['--cluster_name', 'c1']).clusterName).toBe('c1');
    expect(flagsOf(['--ports_file_dir', '/tmp/p']).portsFileDir).toBe('/tmp/p');
    expect(flagsOf(['-t']).checkConfig).toBe(true);
    expect(flagsOf(['-c', 'a.conf', '-c=']).configFile).toBeUndefined();
  });

  it('handles boolean flags, including multi-letter single-dash ones and =false', () => {
    expect(flagsOf(['-js']).jetstream).toBe(true);
    expect(flagsOf(['--jetstream']).jetstream).toBe(true);
    expect(flagsOf(['-js=false']).jetstream).toBe(false);
    expect(flagsOf(['-D'])).toMatchObject({ debug: true });
    expect(flagsOf(['--debug']).trace).toBeUndefined();
    expect(flagsOf(['-V'])).toMatchObject({ trace: true });
    expect(flagsOf(['--trace']).debug).toBeUndefined();
    expect(flagsOf(['-DV'])).toMatchObject({ debug: true, trace: true });
    expect(flagsOf(['-DV=false'])).toMatchObject({ debug: false, trace: false });
    expect(flagsOf(['-VV'])).toMatchObject({ trace: true });
    expect(flagsOf(['-DVV'])).toMatchObject({ debug: true, trace: true });
    expect(flagsOf(['-D=1', '-V=t'])).toMatchObject({ debug: true, trace: true });
  });

  it('does not let a boolean flag swallow the next argument', () => {
    expect(flagsOf(['-js', '-sd', './data', '-m', '8222'])).toMatchObject({ jetstream: true, storeDir: './data', httpPort: 8222 });
  });

  it('parses the lead npm start command line', () => {
    expect(flagsOf(['-js', '-sd', './data', '-m', '8222'])).toEqual({
      help: false,
      version: false,
      checkConfig: false,
      jetstream: true,
      storeDir: './data',
      httpPort: 8222,
      ignoredFlags: [],
    });
  });

  it('recognises help and version flags and commands', () => {
    expect(flagsOf(['-h']).help).toBe(true);
    expect(flagsOf(['--help']).help).toBe(true);
    expect(flagsOf(['-v']).version).toBe(true);
    expect(flagsOf(['--version']).version).toBe(true);
    expect(flagsOf(['version']).version).toBe(true);
    expect(flagsOf(['-p', '1', 'help']).help).toBe(true);
  });

  it('accepts nats-server-only flags and lists them as ignored', () => {
    const f = flagsOf(['-T=false', '--connect_retries', '3', '-ms', '8443']);
    expect(f.ignoredFlags).toEqual(['T', 'connect_retries', 'ms']);
  });

  it('takes -P/--pid as the pid file', () => {
    expect(flagsOf(['-P', '/tmp/pid']).pidFile).toBe('/tmp/pid');
    expect(flagsOf(['--pid=/tmp/b.pid']).pidFile).toBe('/tmp/b.pid');
  });
});

describe('cli: cluster and routes', () => {
  it('normalises --routes URLs of every accepted form to host:port', () => {
    const f = flagsOf(['--routes', 'nats://a:6222, nats-route://b:6223,grpc://c:6224,d:6225,nats://u:p@e:6226/']);
    expect(f.routes).toEqual(['a:6222', 'b:6223', 'c:6224', 'd:6225', 'e:6226']);
  });

  it('keeps IPv6 route hosts bracketed', () => {
    expect(flagsOf(['--routes=nats://[::1]:6222']).routes).toEqual(['[::1]:6222']);
  });

  it('treats an empty --routes as no routes', () => {
    expect(flagsOf(['--routes', '']).routes).toEqual([]);
  });

  it('parses --cluster and --cluster_listen URLs, including a random port', () => {
    expect(flagsOf(['--cluster', 'nats://0.0.0.0:6222']).clusterListen).toEqual({ host: '0.0.0.0', port: 6222 });
    expect(flagsOf(['--cluster', 'nats-route://127.0.0.1:-1']).clusterListen).toEqual({ host: '127.0.0.1', port: -1 });
    expect(flagsOf(['--cluster_listen=:6333']).clusterListen).toEqual({ host: '0.0.0.0', port: 6333 });
    expect(flagsOf(['--cluster', '']).clusterListen).toBeNull();
  });

  it('rejects bad route and cluster URLs', () => {
    expect(usageMessage(['--routes', 'nats://a:notaport'])).toContain('notaport');
    expect(usageMessage(['--routes', 'nats://a:70000'])).toContain('70000');
    expect(usageMessage(['--routes', 'justahost'])).toContain('justahost');
    expect(usageMessage(['--routes', 'http://a:1'])).toContain('unsupported URL scheme');
    expect(usageMessage(['--routes', 'nats://:6222'])).toContain('missing host');
    expect(usageMessage(['--cluster', 'nats://h:x'])).toContain('-cluster');
  });
});

describe('cli: usage errors', () => {
  it('rejects unknown flags in the Go flag wording', () => {
    expect(usageMessage(['--bogus'])).toBe('flag provided but not defined: -bogus');
    expect(usageMessage(['-max_payload', '10'])).toBe('flag provided but not defined: -max_payload');
  });

  it('rejects a flag that needs a value but has none', () => {
    expect(usageMessage(['-p'])).toBe('flag needs an argument: -p');
    expect(usageMessage(['-js', '--config'])).toBe('flag needs an argument: -config');
  });

  it('rejects non-numeric and out-of-range ports', () => {
    expect(usageMessage(['-p', 'abc'])).toBe('invalid value "abc" for flag -p: parse error');
    expect(usageMessage(['--port=12x'])).toContain('parse error');
    expect(usageMessage(['-p', '65536'])).toContain('-1..65535');
    expect(usageMessage(['-m', '-2'])).toContain('-1..65535');
  });

  it('rejects bad boolean values', () => {
    expect(usageMessage(['-js=maybe'])).toBe('invalid boolean value "maybe" for -js: parse error');
  });

  it('rejects positional arguments other than help/version', () => {
    expect(usageMessage(['foo'])).toBe('unrecognized command: "foo"');
    expect(usageMessage(['-p', '1', 'extra', '-D'])).toBe('unrecognized command: "extra"');
    expect(usageMessage(['--', 'x'])).toBe('unrecognized command: "x"');
  });

  it('rejects bad flag syntax', () => {
    expect(usageMessage(['---p', '1'])).toBe('bad flag syntax: ---p');
    expect(usageMessage(['-=x'])).toBe('bad flag syntax: -=x');
  });

  it('takes -sl/--signal with its command and pid', () => {
    expect(flagsOf(['--signal', 'stop']).signal).toBe('stop');
    expect(flagsOf(['-sl', 'reload=/var/run/flotilla.pid']).signal).toBe('reload=/var/run/flotilla.pid');
    expect(usageMessage(['-sl'])).toBe('flag needs an argument: -sl');
  });
});
