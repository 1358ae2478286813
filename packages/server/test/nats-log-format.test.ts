// nats-server's text log lines (nats-log-format.ts).
import { describe, expect, it } from 'vitest';
import { natsLogLine, natsLogTime } from '../src/nats-log-format.js';

describe('nats log format', () => {
  it('writes [pid] date time.micros [LBL] message fields', () => {
    const t = new Date(2026, 11, 2, 6, 49, 28, 689).getTime();
    expect(natsLogTime(t)).toBe('2026/12/02 06:49:28.689000');
    const line = JSON.stringify({ level: 40, time: t, pid: 1296, msg: 'Server is ready', port: 4222, why: 'a b' });
    expect(natsLogLine(line)).toBe('[1296] 2026/12/02 06:49:28.689000 [WRN] Server is ready port=4222 why="a b"');
    expect(natsLogLine(JSON.stringify({ level: 10, time: t, pid: 1, msg: 'x' }))).toMatch(/\[TRC\] x$/);
    expect(natsLogLine('not json')).toBe('not json');
  });
});
