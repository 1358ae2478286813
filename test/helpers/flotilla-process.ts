// Starts the real `flotilla` binary as a child process on free ports and finds them through the ports
// file, exactly as a user's harness for nats-server would.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOTILLA_NODE_FLAGS } from '../../bin/node-flags.js';

export const FLOTILLA_BIN = fileURLToPath(new URL('../../bin/flotilla.js', import.meta.url));
/** `node <flags> bin/flotilla.js`: the interpreter arguments every launcher uses (bin/node-flags.js). */
export const FLOTILLA_NODE_ARGS: readonly string[] = [...FLOTILLA_NODE_FLAGS, FLOTILLA_BIN];

/**
 * `E2E_SERVER=nats-server` runs the same end-to-end tests against a real nats-server on PATH (the flags
 * are the same), to check that a test's expectations are nats-server's behaviour. Default: flotilla.
 */
const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';

export interface FlotillaProcess {
  proc: ChildProcess;
  port: number;
  httpPort: number;
  url: string;
  dir: string;
  output: () => string;
  /** SIGTERM, then SIGKILL after a grace period; resolves with the exit code. */
  stop: () => Promise<number | null>;
}

export interface StartOptions {
  /** extra flags after the defaults (`-a 127.0.0.1 -p -1 -m -1 --ports_file_dir <tmp>`) */
  args?: string[];
  /** replace the default flags entirely (then the caller must set ports_file_dir itself via `portsDir`) */
  rawArgs?: string[];
  portsDir?: string;
  env?: Record<string, string>;
  argv0?: string;
  timeoutMs?: number;
}

export async function startFlotilla(opts: StartOptions = {}): Promise<FlotillaProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-e2e-'));
  const portsDir = opts.portsDir ?? join(dir, 'ports');
  mkdirSync(portsDir, { recursive: true }); // nats-server does not create it
  const args = opts.rawArgs ?? ['-a', '127.0.0.1', '-p', '-1', '-m', '-1', '--ports_file_dir', portsDir, ...(opts.args ?? [])];
  const [cmd, cmdArgs] = AGAINST_NATS_SERVER ? ['nats-server', args] : [process.execPath, [...FLOTILLA_NODE_ARGS, ...args]];
  const proc = spawn(cmd, cmdArgs, {
    cwd: dir,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.argv0 ? { argv0: opts.argv0 } : {}),
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let ports: { nats: string[]; monitoring: string[] } | null = null;
  while (ports === null) {
    if (proc.exitCode !== null) throw new Error(`flotilla exited with ${proc.exitCode}: ${out}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`flotilla did not write its ports file: ${out}`);
    }
    const name = readdirSafe(portsDir).find((f) => f.endsWith(`_${proc.pid}.ports`));
    if (name) ports = readPortsFile(join(portsDir, name));
    if (ports === null) await sleep(20);
  }
  const port = Number(new URL(ports.nats[0]!).port);
  const httpPort = ports.monitoring.length > 0 ? Number(new URL(ports.monitoring[0]!).port) : 0;
  const stop = async (): Promise<number | null> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      const code = await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      return code;
    }
    rmSync(dir, { recursive: true, force: true });
    return proc.exitCode;
  };
  return { proc, port, httpPort, url: `127.0.0.1:${port}`, dir, output: () => out, stop };
}

/** Runs the binary to completion (for -v, -h, -t, bad flags). */
export async function runFlotilla(args: string[], cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [...FLOTILLA_NODE_ARGS, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** nats-server writes its ports file in place, so a poll can catch it half-written: retry on bad JSON. */
function readPortsFile(path: string): { nats: string[]; monitoring: string[] } | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { nats: string[]; monitoring: string[] };
  } catch {
    return null;
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
