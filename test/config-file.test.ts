// The binary with nats-server-style config files and flags, as scripts written for nats-server use it.
import { describe, it, expect, afterAll } from 'vitest';
import { writeFileSync, mkdtempSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { startFlotilla, runFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

const servers: FlotillaProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'flotilla-conf-'));
}

describe('flotilla -c FILE', () => {
  it('binds port -1 and http "127.0.0.1:-1", writes the ports file, and serves the nats client', async () => {
    const dir = tempDir();
    const portsDir = join(dir, 'ports');
    const conf = join(dir, 'nats-server.conf');
    writeFileSync(
      conf,
      [
        '# a config written for nats-server',
        'server_name: conf-test',
        'listen: 127.0.0.1:-1',
        'port: -1',
        'http: "127.0.0.1:-1"',
        `ports_file_dir: "${portsDir}"`,
        'max_payload: 2MB',
        'jetstream {',
        `  store_dir: "${join(dir, 'js')}"`,
        '  max_file_store: 1GB',
        '}',
        'leafnodes { listen: "127.0.0.1:-1" }',
        '',
      ].join('\n'),
    );
    const s = await startFlotilla({ rawArgs: ['-c', conf], portsDir });
    servers.push(s);
    const [file] = readdirSync(portsDir);
    expect(file).toBe(`flotilla_${s.proc.pid}.ports`);
    const ports = JSON.parse(readFileSync(join(portsDir, file!), 'utf8')) as { nats: string[]; monitoring: string[] };
    expect(ports.nats).toEqual([`nats://127.0.0.1:${s.port}`]);
    expect(ports.monitoring).toEqual([`http://127.0.0.1:${s.httpPort}`]);
    expect(s.port).toBeGreaterThan(0);
    expect(s.port).not.toBe(4222);
    const nc = await connect({ servers: `127.0.0.1:${s.port}`, reconnect: false });
    expect(nc.info?.server_name).toBe('conf-test');
    expect(nc.info?.max_payload).toBe(2 * 1024 * 1024);
    await nc.close();
    const health = await (await fetch(`http://127.0.0.1:${s.httpPort}/healthz`)).json();
    expect(health).toEqual({ status: 'ok' });
    expect(s.output()).toMatch(/listening for leafnode connections/);
    expect(existsSync(join(dir, 'js'))).toBe(true);
  });

  it('names the ports file after the executable name it was started under', async () => {
    const dir = tempDir();
    const s = await startFlotilla({ argv0: 'nats-server', portsDir: dir, rawArgs: ['-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir] });
    servers.push(s);
    expect(readdirSync(dir)).toEqual([`nats-server_${s.proc.pid}.ports`]);
    await s.stop();
    expect(readdirSync(dir)).toEqual([]); // removed on shutdown, as nats-server does
  });

  it('-t checks a good file and exits 0', async () => {
    const dir = tempDir();
    const conf = join(dir, 'ok.conf');
    writeFileSync(conf, 'port = 4999\nauthorization { token: "x" }\n');
    const r = await runFlotilla(['-t', '-c', conf]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('test is successful');
  });

  it('a malformed file is an error naming the line', async () => {
    const dir = tempDir();
    const conf = join(dir, 'bad.conf');
    writeFileSync(conf, 'port: 4222\n\njetstream {\n  store_dir: "/tmp/x"\n');
    const r = await runFlotilla(['-t', '-c', conf]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad\.conf:\d+/);
    const conf2 = join(dir, 'bad2.conf');
    writeFileSync(conf2, 'port: 4222\nmax_payload: "lots"\n');
    const r2 = await runFlotilla(['-c', conf2]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/bad2\.conf:2/);
  });

  it('unknown or bad flags are a usage error with exit status 2', async () => {
    for (const args of [['--no-such-flag'], ['-p', 'abc'], ['--routes', 'http://[bad']]) {
      const r = await runFlotilla(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    }
  });

  it('-v prints the version and -h the usage', async () => {
    const v = await runFlotilla(['-v']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/2\.11\.\d+/);
    const h = await runFlotilla(['-h']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('--ports_file_dir');
  });
});
