// pid_file / -P and `--signal` (nats-server's processSignal) against a real server process: the pid file
// holds the server's pid, `--signal <command>=<pid file>` sends the command's signal to it, errors are
// nats-server's (exit 1, "<binary>: <message>"). E2E_SERVER=nats-server runs the same against nats-server.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'nats';
import { FLOTILLA_NODE_ARGS, startFlotilla } from './helpers/flotilla-process.js';
import { useConfServers } from './helpers/conf-servers.js';
import { untilEvery } from './helpers/until.js';

const until = untilEvery(20);
const againstNatsServer = process.env['E2E_SERVER'] === 'nats-server';
const binaryName = againstNatsServer ? 'nats-server' : 'flotilla';
const { dir, serverWith, writeConf } = useConfServers('pidsig');

/** Runs `<binary> ...args` to its end (the --signal client). */
function runBinary(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const [cmd, cmdArgs] = againstNatsServer ? ['nats-server', args] : [process.execPath, [...FLOTILLA_NODE_ARGS, ...args]];
  const proc = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

function exited(proc: { exitCode: number | null; signalCode: string | null; once(e: 'exit', f: () => void): unknown }): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once('exit', () => resolve()));
}

describe.concurrent('pid file and --signal', () => {
  it('pid_file holds the pid; --signal reopen / quit reach the process; the file is gone after a clean exit', async () => {
    const pidFile = join(dir, 'a.pid');
    const logFile = join(dir, 'a.log');
    const server = await serverWith(`pid_file: "${pidFile}"\nlog_file: "${logFile}"`);
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(server.proc.pid));
    expect(await runBinary(['--signal', `reopen=${pidFile}`])).toMatchObject({ code: 0, stderr: '' });
    await until(() => existsSync(logFile) && /log file reopened|File log re-opened/.test(readFileSync(logFile, 'utf8')), 5_000, 'the reopen log line');
    const nc = await connect({ servers: server.url });
    await nc.flush();
    expect(await runBinary(['-sl', `quit=${pidFile}`])).toMatchObject({ code: 0, stderr: '' });
    await exited(server.proc);
    expect(server.proc.exitCode).toBe(0);
    await nc.close().catch(() => undefined);
    // nats-server leaves its pid file behind; flotilla removes it when it still holds its pid.
    if (!againstNatsServer) expect(existsSync(pidFile)).toBe(false);
  });

  it('-P overrides pid_file; --signal stop=<pid> kills the process', async () => {
    const flagPid = join(dir, 'flag.pid');
    const server = await startFlotilla({ args: ['-c', writeConf(`pid_file: "${join(dir, 'unused.pid')}"`), '-P', flagPid] });
    expect(readFileSync(flagPid, 'utf8').trim()).toBe(String(server.proc.pid));
    expect(existsSync(join(dir, 'unused.pid'))).toBe(false);
    expect(await runBinary(['--signal', `stop=${server.proc.pid}`])).toMatchObject({ code: 0, stderr: '' });
    await exited(server.proc);
    expect(server.proc.signalCode).toBe('SIGKILL');
    await server.stop();
  });

  it('a reload moves pid_file: the new file holds the pid (flotilla also removes the old, and the new at exit)', async () => {
    const [first, second] = [join(dir, 'first.pid'), join(dir, 'second.pid')];
    const conf = writeConf(`pid_file: "${first}"`);
    const server = await startFlotilla({ args: ['-c', conf] });
    expect(readFileSync(first, 'utf8').trim()).toBe(String(server.proc.pid));
    writeFileSync(conf, `pid_file: "${second}"\n`);
    expect(await runBinary(['--signal', `reload=${first}`])).toMatchObject({ code: 0 });
    await until(() => existsSync(second), 5_000, 'the new pid file');
    expect(readFileSync(second, 'utf8').trim()).toBe(String(server.proc.pid));
    expect(await runBinary(['--signal', `quit=${second}`])).toMatchObject({ code: 0 });
    await exited(server.proc);
    if (!againstNatsServer) {
      expect(existsSync(first)).toBe(false);
      expect(existsSync(second)).toBe(false);
    }
    await server.stop();
  });

  it("answers nats-server's errors with exit 1", async () => {
    const missing = await runBinary(['--signal', 'reload=999999999']);
    expect(missing.code).toBe(1);
    // nats-server 2.14's text (2.9.10 prints the bare errno text)
    expect(missing.stderr).toContain(againstNatsServer ? 'nats-server: no such process' : 'flotilla: \nsignal "reload" 999999999: no such process');
    const badPid = await runBinary(['--signal', 'reload=notapid']);
    expect(badPid).toMatchObject({ code: 1 });
    expect(badPid.stderr).toContain(`${binaryName}: invalid pid: notapid`);
    const badCommand = await runBinary(['--signal', 'hup=999999999']);
    expect(badCommand.code).toBe(1);
    expect(badCommand.stderr).toContain(`${binaryName}: unknown signal "hup"`);
    const extra = await runBinary(['--signal', 'reload=1=2']);
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain(`${binaryName}: invalid signal parameters: [2]`);
  });
});
