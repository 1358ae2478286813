// The signals a NATS operator sends besides stop and lame duck (main.ts): SIGUSR1 reopens the log file
// (logrotate, as nats-server), SIGHUP reloads the config file (config-reload.ts; a reload that fails is
// logged and the server keeps its old config). A listener on SIGUSR1 also stops Node from opening its
// inspector (a debugger on 127.0.0.1:9229) on that signal; bin/flotilla.js installs placeholders before
// anything loads so the window before main() is covered too (SIGHUP would otherwise end the process).
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
}

/** SIGHUP: `reload` resolves once the new config is applied, rejects with why it was not. */
export function handleReloadSignal(log: Logger, reload: () => Promise<void>): void {
  // The placeholder bin/flotilla.js installed would otherwise stay beside this one; it does nothing.
  process.on('SIGHUP', () => {
    log.info({ signal: 'SIGHUP' }, 'Trapped "hangup" signal: reloading the configuration');
    reload().catch((err: unknown) => {
      // nats-server's wording; the old configuration stays in force
      log.error({ signal: 'SIGHUP', code: (err as { code?: string }).code }, `Failed to reload server configuration: ${(err as Error).message}`);
    });
  });
}
