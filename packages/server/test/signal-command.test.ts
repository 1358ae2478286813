// `--signal command[=pid|pid file]`: nats-server's parsing, pid lookup and messages (signal.go / opts.go).
import { describe, expect, it } from 'vitest';
import { runSignalCommand, SignalCommandError, type SignalDeps } from '../src/signal-command.js';
import { formatGoDuration } from '../src/config/go-duration.js';

function deps(files: Record<string, string>, running: number[], fail: Record<number, string> = {}): SignalDeps & { sent: Array<[number, string]> } {
  const sent: Array<[number, string]> = [];
  return {
    sent,
    readFile: (p) => files[p],
    runningPids: () => running,
    kill: (pid, signal) => {
      if (fail[pid] !== undefined) throw Object.assign(new Error('x'), { code: fail[pid] });
      sent.push([pid, signal]);
    },
  };
}

function failure(expr: string, d: SignalDeps): { code: string; message: string } {
  try {
    runSignalCommand(expr, d);
  } catch (err) {
    if (err instanceof SignalCommandError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('no failure');
}

describe('--signal', () => {
  it('maps each command to nats-server signal', () => {
    const d = deps({}, []);
    for (const c of ['stop', 'quit', 'reopen', 'reload', 'ldm', 'term']) runSignalCommand(`${c}=42`, d);
    expect(d.sent).toEqual([
      [42, 'SIGKILL'],
      [42, 'SIGINT'],
      [42, 'SIGUSR1'],
      [42, 'SIGHUP'],
      [42, 'SIGUSR2'],
      [42, 'SIGTERM'],
    ]);
  });

  it('reads the pid from a pid file, else takes the text as a pid', () => {
    const d = deps({ '/run/f.pid': '1234' }, []);
    runSignalCommand('reload=/run/f.pid', d);
    expect(d.sent).toEqual([[1234, 'SIGHUP']]);
    expect(failure('reload=/run/missing.pid', d)).toEqual({ code: 'invalid_pid', message: 'invalid pid: /run/missing.pid' });
  });

  it('finds the one running server without a pid, and refuses none or several', () => {
    const one = deps({}, [77]);
    runSignalCommand('quit', one);
    expect(one.sent).toEqual([[77, 'SIGINT']]);
    expect(failure('quit', deps({}, []))).toEqual({ code: 'no_process', message: 'no flotilla processes running' });
    expect(failure('quit', deps({}, [7, 8]))).toEqual({ code: 'many_processes', message: 'multiple flotilla processes running:\n7\n8' });
  });

  it('signals every matching pid with a trailing *', () => {
    const d = deps({}, [120, 121, 130]);
    runSignalCommand('reopen=12*', d);
    expect(d.sent).toEqual([
      [120, 'SIGUSR1'],
      [121, 'SIGUSR1'],
    ]);
  });

  it("answers nats-server's errors", () => {
    expect(failure('reload=1=2', deps({}, [])).message).toBe('invalid signal parameters: [2]');
    expect(failure('hup=5', deps({}, [])).message).toBe('unknown signal "hup"');
    expect(failure('reload=5', deps({}, [], { 5: 'ESRCH' })).message).toBe('\nsignal "reload" 5: no such process');
  });
});

describe('formatGoDuration', () => {
  it("prints durations as Go's time.Duration does", () => {
    expect([0, 500, 1500, 10_000, 29_500, 90_000, 120_000, 3_600_000, 3_723_000].map(formatGoDuration)).toEqual([
      '0s',
      '500ms',
      '1.5s',
      '10s',
      '29.5s',
      '1m30s',
      '2m0s',
      '1h0m0s',
      '1h2m3s',
    ]);
  });
});
