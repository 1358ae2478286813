// pino logger: info by default, debug with -D, trace with -V/-DV; to stdout or to the -l/log_file file
// (log-file-sink.ts: reopen on SIGUSR1, size-limit rotation). JSON lines by default; readable lines on a
// terminal (tty-log-format.ts); nats-server's text lines with FLOTILLA_LOG_FORMAT=nats (nats-log-format.ts).
// A config reload changes the level (of every child logger too) and the file.
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config/options.js';
import { LogFileSink, type LogFileLimits } from './log-file-sink.js';
import { natsLogLine, natsTextDestination } from './nats-log-format.js';
import { prettyDestination, wantsPrettyLogs } from './tty-log-format.js';

interface LoggerState {
  sink: LogFileSink | null;
  /** child loggers keep the level they were made with: a reload sets each (few: one per component) */
  children: Set<Logger>;
}

const states = new WeakMap<Logger, LoggerState>();

const NO_LIMITS: LogFileLimits = { sizeLimitBytes: 0, maxFiles: 0 };

export function createLogger(level: LogLevel, logFile?: string, limits: LogFileLimits = NO_LIMITS): Logger {
  const natsFormat = process.env['FLOTILLA_LOG_FORMAT'] === 'nats';
  const state: LoggerState = { sink: null, children: new Set() };
  const options = { level, base: { pid: process.pid }, onChild: (child: Logger) => void state.children.add(child) };
  let log: Logger;
  if (logFile) {
    const note = (lvl: 'info' | 'error', msg: string): string => {
      const json = JSON.stringify({ level: lvl === 'info' ? 30 : 50, time: Date.now(), pid: process.pid, msg });
      return `${natsFormat ? natsLogLine(json) : json}\n`;
    };
    state.sink = new LogFileSink(logFile, limits, note);
    log = pino(options, natsFormat ? natsTextDestination(state.sink) : state.sink);
  } else if (!natsFormat && wantsPrettyLogs(process.env, process.stdout.isTTY === true)) {
    const colors = process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined;
    log = pino(options, prettyDestination(process.stdout, colors));
  } else {
    const destination = pino.destination(1);
    // A closed stdout (EPIPE after the parent died) must not crash or wedge the broker.
    destination.on('error', () => undefined);
    log = pino(options, natsFormat ? natsTextDestination(destination) : destination);
  }
  states.set(log, state);
  return log;
}

/**
 * Reopens the log file by name (after logrotate moved it, as nats-server does on SIGUSR1). Lines already
 * buffered go to the old file. False when the logger does not write to a file.
 */
export function reopenLogFile(log: Logger): boolean {
  const sink = states.get(log)?.sink;
  if (!sink) return false;
  sink.reopen();
  return true;
}

/** A reload's debug/trace: this logger and every child made from it. */
export function setLogLevel(log: Logger, level: LogLevel): void {
  log.level = level;
  for (const child of states.get(log)?.children ?? []) child.level = level;
}

/** A reload's log_file and limits; false when this logger writes to stdout (it cannot switch to a file). */
export function reconfigureLogFile(log: Logger, path: string, limits: LogFileLimits): boolean {
  const sink = states.get(log)?.sink;
  if (!sink) return false;
  sink.reconfigure(path, limits);
  return true;
}
