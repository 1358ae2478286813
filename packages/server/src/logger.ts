// pino logger: info by default, debug with -D, trace with -V/-DV; to stdout or to the -l/logfile file.
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config/options.js';

export function createLogger(level: LogLevel, logFile?: string): Logger {
  const destination = logFile ? pino.destination({ dest: logFile, mkdir: true, sync: false }) : pino.destination(1);
  // A closed stdout (EPIPE after the parent died) must not crash or wedge the broker.
  destination.on('error', () => undefined);
  return pino({ level, base: { pid: process.pid } }, destination);
}
