// Readable log lines on a terminal (packages/server/src/tty-log-format.ts).
import { describe, it, expect } from 'vitest';
import { formatLogLine, wantsPrettyLogs } from '../packages/server/src/tty-log-format.js';

describe('tty log format', () => {
  it('turns a pino JSON line into time, level, message and fields', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 2, 3, 4, 5, 678), pid: 7, component: 'cluster', peer: 'n2', reason: 'stale link: nothing received', msg: 'route closed' });
    expect(formatLogLine(line, false)).toBe('03:04:05.678 WARN  route closed component=cluster peer=n2 reason="stale link: nothing received"');
    expect(formatLogLine(line, true)).toContain('\x1b[33mWARN ');
  });

  it('keeps non-JSON lines and objects as they are', () => {
    expect(formatLogLine('plain text', false)).toBe('plain text');
    expect(formatLogLine(JSON.stringify({ level: 30, time: 0, msg: 'x', peers: ['n1', 'n2'] }), false)).toBe('00:00:00.000 INFO  x peers=["n1","n2"]');
  });

  it('is pretty on a terminal unless FLOTILLA_LOG_FORMAT=json, and JSON when piped unless asked', () => {
    expect(wantsPrettyLogs({}, true)).toBe(true);
    expect(wantsPrettyLogs({}, false)).toBe(false);
    expect(wantsPrettyLogs({ FLOTILLA_LOG_FORMAT: 'json' }, true)).toBe(false);
    expect(wantsPrettyLogs({ FLOTILLA_LOG_FORMAT: 'pretty' }, false)).toBe(true);
  });
});
