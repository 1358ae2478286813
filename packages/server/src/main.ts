// The `flotilla` process: resolve options (flags over config file over defaults), start, stop on signals
// (SIGUSR1/SIGHUP: operator-signals.ts; SIGHUP reloads the config file: config-reload.ts).
import { resolveOptions, type OptionsResult } from './config/load-options.js';
import { gracefulShutdown } from './graceful-shutdown.js';
import { enterLameDuck, lameDuckTimingFrom } from './lame-duck.js';
import { createLogger } from './logger.js';
import { ConfigReloader } from './config-reload.js';
import { handleOperatorSignals, handleReloadSignal } from './operator-signals.js';
import { removePidFile, writePidFile } from './pid-file.js';
import { runSignalCommand, SignalCommandError } from './signal-command.js';
import { FlotillaServer } from './server.js';
import { ADVERTISED_NATS_VERSION, FLOTILLA_VERSION } from './version.js';

const SHUTDOWN_TIMEOUT_MS = 15_000;

function exitAfterFlush(log: { flush(): void }, code: number): void {
  try {
    log.flush();
  } catch {
    // stdout may be gone (a parent that died); exiting matters more than the last log line.
  }
  process.exit(code);
}

export async function main(argv: string[]): Promise<number | null> {
  let result: OptionsResult;
  try {
    result = resolveOptions(argv, process.env);
  } catch (err) {
    process.stderr.write(`flotilla: ${(err as Error).message}\n`);
    return 1;
  }
  switch (result.kind) {
    case 'version':
      process.stdout.write(`flotilla: v${FLOTILLA_VERSION} (nats-server compatible v${ADVERTISED_NATS_VERSION})\n`);
      return 0;
    case 'help':
      process.stdout.write(result.text);
      return 0;
    case 'signal':
      try {
        runSignalCommand(result.expr);
      } catch (err) {
        if (!(err instanceof SignalCommandError)) throw err;
        process.stderr.write(`flotilla: ${err.message}\n`);
        return 1;
      }
      return 0;
    case 'usage-error':
      process.stderr.write(`${result.message}\n${result.usage}`);
      return 2;
    case 'config-error':
      process.stderr.write(`flotilla: ${result.message}\n`);
      return 1;
    case 'check-ok':
      for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
      process.stdout.write(`flotilla: configuration file ${result.configFile} test is successful\n`);
      return 0;
    case 'run':
      break;
  }
  const options = result.options;
  const log = createLogger(options.logLevel, options.logFile, { sizeLimitBytes: options.logSizeLimitBytes ?? 0, maxFiles: options.logMaxFiles ?? 0 });
  handleOperatorSignals(log);
  for (const w of result.warnings) log.warn(w);
  const pidFile = options.pidFile;
  if (pidFile) {
    try {
      writePidFile(pidFile);
    } catch (err) {
      log.fatal({ err: (err as Error).message }, 'could not write pidfile');
      process.stderr.write(`flotilla: Could not write pidfile: ${(err as Error).message}\n`);
      log.flush();
      return 1;
    }
  }
  // the pid file named at exit: a reload may have moved it
  process.once('exit', () => {
    if (options.pidFile) removePidFile(options.pidFile);
  });
  const server = new FlotillaServer(options, log);
  // Signals are handled from the start: a SIGTERM while starting (npm start's Ctrl-C, say) waits for the
  // start to settle and then shuts down cleanly instead of killing the process half-way.
  const starting = server.start();
  starting.catch(() => undefined);
  let stopping = false;
  let inLameDuck = false;
  const reloader = new ConfigReloader(server, log, { argv, env: process.env });
  // A reload waits for the start; a server that is going away reloads nothing.
  handleReloadSignal(log, () =>
    stopping || inLameDuck ? Promise.reject(new Error('the server is shutting down')) : starting.then(() => reloader.reload()),
  );
  const finish = (p: Promise<void>): void => {
    void p.then(
      () => exitAfterFlush(log, 0),
      (err: Error) => {
        log.error({ err: err.message }, 'shutdown failed');
        exitAfterFlush(log, 1);
      },
    );
  };
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signal received');
    // Bounded: a shutdown that hangs (a stuck socket, a store that never flushes) still ends the process.
    setTimeout(() => exitAfterFlush(log, 1), SHUTDOWN_TIMEOUT_MS).unref();
    finish(starting.then(() => gracefulShutdown(server, log), () => server.shutdown()));
  };
  // nats-server's `--signal ldm`: SIGUSR2 starts lame-duck mode, which ends in a shutdown.
  // A SIGTERM during lame-duck mode still shuts down at once.
  const lameDuck = (): void => {
    if (stopping || inLameDuck) return;
    inLameDuck = true;
    const timing = lameDuckTimingFrom(options, process.env);
    setTimeout(() => exitAfterFlush(log, 1), timing.durationMs + SHUTDOWN_TIMEOUT_MS).unref();
    finish(starting.then(() => enterLameDuck(server, log, timing)));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.on('SIGUSR2', lameDuck);
  try {
    await starting;
  } catch (err) {
    if (stopping) return null; // the shutdown under way ends the process
    log.error({ err: (err as Error).message }, 'failed to start');
    log.flush();
    process.stderr.write(`flotilla: ${(err as Error).message}\n`);
    // Whatever did start (a bound port, a store) must not keep the failed process alive.
    await server.shutdown().catch(() => undefined);
    return 1;
  }
  return null; // keep running
}
