// Nats-Schedule patterns as nats-server 2.14.5 computes them (scheduler.go parseMsgSchedule, cron.go): the
// expected instants are worked out by hand from its rules.
import { describe, it, expect } from 'vitest';
import { formatRfc3339Nano, MsgSchedules, scheduleHeaderVerdict } from '../src/stream/msg-schedule.js';
import { nextFiring, parseCron, parseRfc3339Ms } from '../src/stream/msg-schedule-pattern.js';

const T = Date.parse('2026-12-02T12:00:00.400Z'); // a Wednesday

describe('nextFiring', () => {
  it('@at: the time given, once; refused with a time zone or a bad time', () => {
    expect(nextFiring('@at 2027-01-01T00:00:00Z', undefined, T, T)).toEqual({ atMs: Date.parse('2027-01-01T00:00:00Z'), repeat: false });
    expect(nextFiring('@at 2027-01-01T01:00:00+01:00', undefined, T, T)).toEqual({ atMs: Date.parse('2027-01-01T00:00:00Z'), repeat: false });
    expect(nextFiring('@at 2027-01-01T00:00:00Z', 'UTC', T, T)).toBeNull();
    expect(nextFiring('@at 2027-02-30T00:00:00Z', undefined, T, T)).toBeNull();
    expect(nextFiring('@at tomorrow', undefined, T, T)).toBeNull();
  });

  it('@every: from the rounded time, at least 1s, never in the past', () => {
    expect(nextFiring('@every 5s', undefined, T, T)).toEqual({ atMs: Date.parse('2026-12-02T12:00:05Z'), repeat: true });
    expect(nextFiring('@every 1m30s', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-02T12:01:30Z'));
    expect(nextFiring('@every 5s', undefined, T - 60_000, T)!.atMs).toBe(Date.parse('2026-12-02T12:00:05Z'));
    expect(nextFiring('@every 999ms', undefined, T, T)).toBeNull();
    expect(nextFiring('@every 5s', 'Europe/Amsterdam', T, T)).toBeNull();
  });

  it('cron: six fields, steps, ranges, names, macros', () => {
    expect(nextFiring('*/15 * * * * *', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-02T12:00:15Z'));
    expect(nextFiring('0 30 9 * * mon-fri', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-03T09:30:00Z'));
    expect(nextFiring('0 0 0 1 jan *', undefined, T, T)!.atMs).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(nextFiring('@hourly', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-02T13:00:00Z'));
    expect(nextFiring('@weekly', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-06T00:00:00Z'));
    // Day of month and day of week both restricted: either matches (Friday 4th before the 15th).
    expect(nextFiring('0 0 0 15 * fri', undefined, T, T)!.atMs).toBe(Date.parse('2026-12-04T00:00:00Z'));
    expect(nextFiring('0 0 0 30 feb *', undefined, T, T)).toBeNull();
    for (const bad of ['* * * * *', '60 * * * * *', '* * * * * 7', '5-1 * * * * *', '*/0 * * * * *', 'a * * * * *']) expect(parseCron(bad), bad).toBeNull();
  });

  it('cron in a time zone: the wall clock of that zone', () => {
    // 09:00 in Amsterdam (UTC+1 in December) is 08:00 UTC.
    expect(nextFiring('0 0 9 * * *', 'Europe/Amsterdam', T, T)!.atMs).toBe(Date.parse('2026-12-03T08:00:00Z'));
    expect(nextFiring('0 0 9 * * *', 'America/New_York', T, T)!.atMs).toBe(Date.parse('2026-12-02T14:00:00Z'));
  });

  it('formats and reads RFC 3339 as Go does', () => {
    expect(formatRfc3339Nano(Date.parse('2026-12-02T12:00:05Z'))).toBe('2026-12-02T12:00:05Z');
    expect(formatRfc3339Nano(Date.parse('2026-12-02T12:00:05.250Z'))).toBe('2026-12-02T12:00:05.25Z');
    expect(parseRfc3339Ms('2026-12-02T12:00:05.25Z')).toBe(Date.parse('2026-12-02T12:00:05.250Z'));
    expect(parseRfc3339Ms('2026-12-02 12:00:05Z')).toBeNull();
  });
});

describe('scheduleHeaderVerdict', () => {
  const ok = (h: Record<string, string>) => scheduleHeaderVerdict(h, 's.a', true, false, ['s.>'], T);
  it('a valid schedule is stored with a subject rollup', () => {
    expect(ok({ schedule: '@every 1s', scheduleTarget: 's.b' })).toEqual({ rollupNeeded: true });
    expect(ok({ schedule: '@every 1s', scheduleTarget: 's.b', rollup: 'sub' })).toEqual({ rollupNeeded: false });
    expect(ok({})).toEqual({ rollupNeeded: false });
  });
  it('the errors in 2.14 order', () => {
    const code = (h: Record<string, string>) => {
      const v = ok(h);
      return 'error' in v ? v.error.errCode : 0;
    };
    expect(code({ schedule: '@every 1s', scheduleTarget: 's.b', rollup: 'all' })).toBe(10192);
    expect(code({ schedule: '@every 1s', scheduleTarget: 's.*' })).toBe(10190);
    expect(code({ schedule: '@every 1s', scheduleTarget: 's.b', scheduleSource: 's.a' })).toBe(10203);
    expect(code({ schedule: '@every 1s', scheduleTarget: 's.b', scheduleSource: 'x.y' })).toBe(10203);
    expect(code({ scheduleTimeZone: '' })).toBe(10223);
    expect(code({ scheduleNext: 'purge', scheduler: 's.a' })).toBe(10212);
    expect(code({ scheduleNext: 'purge', scheduler: 's.x' })).toBe(0);
  });
});

describe('MsgSchedules', () => {
  it('moves a schedule on with its copies and forgets it on purge or a plain message', () => {
    const store = { lastSeqsPerSubject: () => [], get: async () => null } as never;
    const s = new MsgSchedules(store, () => undefined);
    const hdr = (lines: string[]) => Buffer.from(`NATS/1.0\r\n${lines.join('\r\n')}\r\n\r\n`);
    s.stored(1, 'sch.a', hdr(['Nats-Schedule: @every 5s', 'Nats-Schedule-Target: out']), T);
    s.stored(2, 'sch.b', hdr(['Nats-Schedule: @at 2027-01-01T00:00:00Z', 'Nats-Schedule-Target: out']), T);
    expect(s.size).toBe(2);
    s.stored(3, 'out', hdr(['Nats-Scheduler: sch.b', 'Nats-Schedule-Next: purge']), T);
    expect(s.size).toBe(1);
    // The copy lands on the target subject without ending the schedule there.
    s.stored(4, 'out', hdr(['Nats-Scheduler: sch.a', 'Nats-Schedule-Next: 2026-12-02T12:00:10Z']), T);
    expect(s.size).toBe(1);
    s.stored(5, 'sch.a', null, T);
    expect(s.size).toBe(0);
  });
});
