// `flotilla --signal <command>[=<pid|pid file>]` (`-sl`), as nats-server's processSignal: send the
// command's signal to a running server and exit. Without a pid the running flotilla processes are looked
// up (nats-server runs pgrep; flotilla is a node process, so /proc is scanned for its launcher); a pid
// ending in `*` signals every flotilla process whose pid starts with it. Messages are nats-server's.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const PROCESS_NAME = 'flotilla';

/** nats-server's commands and the signal each sends (CommandToSignal). */
export const SIGNAL_OF_COMMAND: Readonly<Record<string, NodeJS.Signals>> = {
  stop: 'SIGKILL',
  quit: 'SIGINT',
  reopen: 'SIGUSR1',
  reload: 'SIGHUP',
  ldm: 'SIGUSR2',
  term: 'SIGTERM',
};

export class SignalCommandError extends Error {
  constructor(readonly code: 'bad_parameters' | 'invalid_pid' | 'no_process' | 'many_processes' | 'unknown_signal' | 'kill_failed', message: string) {
    super(message);
  }
}

export interface SignalDeps {
  readFile(path: string): string | undefined;
  /** pids of running flotilla processes, this one excluded */
  runningPids(): number[];
  kill(pid: number, signal: NodeJS.Signals): void;
}

/** Sends the signal; throws SignalCommandError with nats-server's message when it cannot. */
export function runSignalCommand(expr: string, deps: SignalDeps = defaultSignalDeps()): void {
  const parts = expr.split('=');
  if (parts.length > 2) throw new SignalCommandError('bad_parameters', `invalid signal parameters: [${parts.slice(2).join(' ')}]`);
  const command = parts[0]!;
  // nats-server's maybeReadPidFile: a readable file's content, else the text itself
  const pidExpr = parts.length === 2 ? (deps.readFile(parts[1]!) ?? parts[1]!).trim() : '';
  const isGlob = pidExpr.endsWith('*');
  const pidStr = isGlob ? pidExpr.slice(0, -1) : pidExpr;
  let pids: number[] = [];
  if (pidStr !== '') {
    if (!/^[+-]?\d+$/.test(pidStr)) throw new SignalCommandError('invalid_pid', `invalid pid: ${pidStr}`);
    pids = [Number(pidStr)];
  }
  if (pidStr === '' || isGlob) pids = deps.runningPids();
  if (pids.length > 1 && !isGlob) {
    throw new SignalCommandError('many_processes', `multiple ${PROCESS_NAME} processes running:${pids.map((p) => `\n${p}`).join('')}`);
  }
  if (pids.length === 0) throw new SignalCommandError('no_process', `no ${PROCESS_NAME} processes running`);
  const signal = Object.hasOwn(SIGNAL_OF_COMMAND, command) ? SIGNAL_OF_COMMAND[command]! : undefined;
  if (signal === undefined) throw new SignalCommandError('unknown_signal', `unknown signal "${command}"`);
  let failures = '';
  for (const pid of pids) {
    if (pidStr !== '' && String(pid) !== pidStr && !(isGlob && String(pid).startsWith(pidStr))) continue;
    try {
      deps.kill(pid, signal);
    } catch (err) {
      failures += `\nsignal "${command}" ${pid}: ${errnoText(err)}`;
    }
  }
  if (failures !== '') throw new SignalCommandError('kill_failed', failures);
}

/** Go's syscall.Errno strings for what kill(2) can answer. */
function errnoText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ESRCH') return 'no such process';
  if (code === 'EPERM') return 'operation not permitted';
  if (code === 'EINVAL') return 'invalid argument';
  return (err as Error).message;
}

export function defaultSignalDeps(): SignalDeps {
  return {
    readFile: (path) => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    },
    runningPids: flotillaPids,
    kill: (pid, signal) => void process.kill(pid, signal),
  };
}

/** Processes whose launcher is `flotilla` / `flotilla.js`; bounded by /proc's size. */
function flotillaPids(): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // exited meanwhile, or not ours to read
    }
    // the launcher itself (a `flotilla` executable), or node's script after its flags (`node --flag …/flotilla.js`)
    const script = argv.slice(1).find((a) => !a.startsWith('-'));
    if ([argv[0], script].some((a) => a !== undefined && a !== '' && (basename(a) === PROCESS_NAME || basename(a) === `${PROCESS_NAME}.js`))) pids.push(Number(entry));
  }
  return pids;
}
