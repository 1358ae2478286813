// log_file as nats-server keeps it, against real processes: `logfile_size_limit` rotates the file into
// `<file>.YYYY.MM.DD.hh.mm.ss.nnnnnnnnn` backups (the new file opens with "Rotated log, backup saved as …"),
// `logfile_max_num` bounds the files kept, a reload moves logging to another file, and
// FLOTILLA_LOG_FORMAT=nats writes nats-server's text lines. E2E_SERVER=nats-server runs what 2.9.10 has.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(20);
const againstNatsServer = process.env['E2E_SERVER'] === 'nats-server';
const root = mkdtempSync(join(tmpdir(), 'flotilla-logfile-'));
const servers: FlotillaProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(root, { recursive: true, force: true });
});

const BACKUP = /\.log\.\d{4}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{9}$/;
let dirs = 0;

async function serverIn(conf: (dir: string) => string, env: Record<string, string> = {}): Promise<{ server: FlotillaProcess; dir: string; confFile: string }> {
  const dir = join(root, `d${++dirs}`);
  mkdirSync(dir);
  const confFile = join(dir, 'server.conf');
  writeFileSync(confFile, conf(dir));
  const server = await startFlotilla({ args: ['-c', confFile], env });
  servers.push(server);
  return { server, dir, confFile };
}

/** Debug lines for each connection made and closed: a bounded way to grow the log. */
async function churn(server: FlotillaProcess, connections: number): Promise<void> {
  for (let i = 0; i < connections; i++) {
    const nc = await connect({ servers: server.url, name: `churn-${i}-${'x'.repeat(40)}` });
    await nc.close();
  }
}

const backupsIn = (dir: string): string[] => readdirSync(dir).filter((f) => BACKUP.test(f));
/** The file's text, '' while it does not exist (between a rotation's rename and reopen on nats-server). */
function readSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

describe.concurrent('log file', () => {
  it('rotates past logfile_size_limit into time-stamped backups', async () => {
    const { server, dir } = await serverIn((d) => `debug: true\nlog_file: "${join(d, 'server.log')}"\nlogfile_size_limit: 4096\n`);
    const live = join(dir, 'server.log');
    await until(() => existsSync(live), 5_000, 'the log file');
    for (let round = 0; round < 20 && backupsIn(dir).length < 2; round++) await churn(server, 10);
    await until(() => backupsIn(dir).length >= 2, 5_000, 'two backups');
    await until(() => readSafe(live).includes('Rotated log, backup saved as'), 5_000, 'the rotation note');
    const note = /Rotated log, backup saved as \\?"([^"\\]+)\\?"/.exec(readSafe(live));
    expect(note).not.toBeNull();
    expect(note![1]).toMatch(BACKUP);
    for (const b of backupsIn(dir)) expect(readFileSync(join(dir, b)).length).toBeGreaterThan(4096);
  });

  it.skipIf(againstNatsServer)('keeps logfile_max_num files (nats-server 2.10+; 2.9.10 has no such key)', async () => {
    const { server, dir } = await serverIn((d) => `debug: true\nlog_file: "${join(d, 'server.log')}"\nlogfile_size_limit: 2048\nlogfile_max_num: 3\n`);
    await until(() => existsSync(join(dir, 'server.log')), 5_000, 'the log file');
    for (let round = 0; round < 30 && !readSafe(join(dir, 'server.log')).includes('Purged log file'); round++) await churn(server, 10);
    await churn(server, 20);
    await until(() => backupsIn(dir).length === 2, 5_000, 'two backups kept');
    expect(readdirSync(dir).filter((f) => f.startsWith('server.log')).length).toBe(3);
  });

  it('a reload moves logging to the new log_file', async () => {
    const { server, dir, confFile } = await serverIn((d) => `log_file: "${join(d, 'first.log')}"\n`);
    await until(() => existsSync(join(dir, 'first.log')) && readSafe(join(dir, 'first.log')).includes('eady'), 5_000, 'the first log file');
    writeFileSync(confFile, `log_file: "${join(dir, 'second.log')}"\n`);
    server.proc.kill('SIGHUP');
    await until(() => existsSync(join(dir, 'second.log')) && readSafe(join(dir, 'second.log')).includes('Reloaded server configuration'), 10_000, 'the second log file');
    expect(readSafe(join(dir, 'first.log'))).not.toContain('Failed to reload');
  });

  it("FLOTILLA_LOG_FORMAT=nats writes nats-server's text lines", async () => {
    const { dir } = await serverIn((d) => `log_file: "${join(d, 'text.log')}"\n`, { FLOTILLA_LOG_FORMAT: 'nats' });
    const file = join(dir, 'text.log');
    await until(() => existsSync(file) && /Server is ready|server is ready/.test(readSafe(file)), 5_000, 'the ready line');
    const lines = readSafe(file).split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^\[\d+\] \d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}\.\d{6} \[(INF|DBG|TRC|WRN|ERR|FTL)\] /);
  });
});
