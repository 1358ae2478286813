// pino logger: info by default, debug with -D, trace with -V/-DV; to stdout or to the -l/logfile file.
// JSON lines by default; readable lines on a terminal (see tty-log-format.ts).
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config/options.js';
import { prettyDestination, wantsPrettyLogs } from './tty-log-format.js';

/** The file destination of each logger that writes to a file (for SIGUSR1's reopen). */
const fileDestinations = new WeakMap<Logger, { reopen(): void }>();

export function createLogger(level: LogLevel, logFile?: string): Logger {
  if (!logFile && wantsPrettyLogs(process.env, process.stdout.isTTY === true)) {
    const colors = process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined;
    return pino({ level, base: { pid: process.pid } }, prettyDestination(process.stdout, colors));
  }
  const destination = logFile ? pino.destination({ dest: logFile, mkdir: true, sync: false }) : pino.destination(1);
  // A closed stdout (EPIPE after the parent died) must not crash or wedge the broker.
  destination.on('error', () => undefined);
  const log = pino({ level, base: { pid: process.pid } }, destination);
  if (logFile) fileDestinations.set(log, destination);
  return log;
}

/**
 * Reopens the log file by name (after logrotate moved it, as nats-server does on SIGUSR1). Lines already
 * buffered go to the old file. False when the logger does not write to a file.
 */
export function reopenLogFile(log: Logger): boolean {
  const destination = fileDestinations.get(log);
  if (destination === undefined) return false;
  destination.reopen();
  return true;
}
