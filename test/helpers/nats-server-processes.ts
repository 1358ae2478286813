// Real nats-server processes (/usr/sbin/nats-server) started by an interop test from a config file, each
// stopped with SIGTERM after the file's tests (and waited for), so none outlives the run.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';

export const NATS_SERVER_BIN = '/usr/sbin/nats-server';

export interface NatsServerProcesses {
  /** Starts `nats-server -c <confFile>`; the caller waits for it to serve. */
  spawn(confFile: string): ChildProcess;
}

export function useNatsServerProcesses(): NatsServerProcesses {
  const procs: ChildProcess[] = [];
  afterAll(async () => {
    for (const p of procs) {
      if (p.exitCode === null && p.signalCode === null) {
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        await exited;
      }
    }
  });
  return {
    spawn(confFile: string): ChildProcess {
      const proc = spawn(NATS_SERVER_BIN, ['-c', confFile], { stdio: 'ignore' });
      procs.push(proc);
      return proc;
    },
  };
}
