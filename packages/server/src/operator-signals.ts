// The signals a NATS operator sends besides stop and lame duck (main.ts): SIGUSR1 reopens the log file
// (logrotate, as nats-server), SIGHUP would reload the config — not implemented yet, so it is logged and
// the server keeps running instead of dying with Node's default action. A listener on SIGUSR1 also stops
// Node from opening its inspector (a debugger on 127.0.0.1:9229) on that signal; bin/flotilla.js installs
// a placeholder before anything loads so the window before main() is covered too.
import type { Logger } from 'pino';
import { reopenLogFile } from './logger.js';

export function handleOperatorSignals(log: Logger): void {
  process.on('SIGUSR1', () => {
    try {
      if (reopenLogFile(log)) log.info({ signal: 'SIGUSR1' }, 'log file reopened');
      else log.info({ signal: 'SIGUSR1' }, 'log file reopen ignored: not logging to a file');
    } catch (err) {
      // a signal must never take the server down
      log.warn({ signal: 'SIGUSR1', err: (err as Error).message }, 'log file reopen failed');
    }
  });
  process.on('SIGHUP', () => {
    log.warn({ signal: 'SIGHUP' }, 'config reload is not supported by flotilla yet; SIGHUP ignored, the server keeps running');
  });
}
