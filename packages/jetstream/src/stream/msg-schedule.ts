// Message schedules (ADR-51, nats-server 2.14 scheduler.go, stream.go, jetstream_batching.go). On a stream
// with allow_msg_schedules a message with `Nats-Schedule: <pattern>` (msg-schedule-pattern.ts) is a schedule:
// it is stored on its own subject (with `Nats-Rollup: sub`, so a subject holds one schedule), and at each
// firing the stream's leader publishes a copy of it to `Nats-Schedule-Target` through the stream's writer —
// for a replicated stream through its Raft log, like any publish. The copy drops the Nats-Schedule*,
// Nats-Expected-*, Nats-Msg-Id, Nats-TTL and Nats-Rollup headers and gets
//   Nats-Scheduler: <schedule subject>     Nats-Schedule-Next: purge | <next firing, RFC 3339>
//   Nats-TTL: <Nats-Schedule-TTL>          Nats-Rollup: <Nats-Schedule-Rollup>        (when given)
// and its body is the schedule's, or that of the last message on Nats-Schedule-Source when given.
// Storing (applying, on every replica) the copy moves the schedule on: `purge` removes the schedule's
// subject, a time is the next firing. So a firing whose copy was committed is never fired again, by this or
// a later leader, and one whose copy was lost is fired again by the next leader: once per firing.
import type { MessageStore } from '@flotilla/store';
import { isValidSubject, subjectHasWildcard } from '@flotilla/protocol';
import type { ApiError } from '../api/api-error.js';
import { JsErrors } from '../api/api-errors.js';
import { jsError } from '../api/js-error-table.js';
import { headerValue } from './msg-counter.js';
import { parseMessageTtl } from './message-ttl.js';
import { nextFiring, parseRfc3339Ms } from './msg-schedule-pattern.js';
import { subjectsCollide } from './subjects-collide.js';

export const SCHEDULE_HEADER = 'Nats-Schedule';
export const SCHEDULER_HEADER = 'Nats-Scheduler';
export const SCHEDULE_NEXT_HEADER = 'Nats-Schedule-Next';

const isValidPublishSubjectName = (s: string): boolean => isValidSubject(s) && !subjectHasWildcard(s);

const errors = {
  pattern: () => jsError('JSMessageSchedulesPatternInvalidErr'),
  target: () => jsError('JSMessageSchedulesTargetInvalidErr'),
  ttl: () => jsError('JSMessageSchedulesTTLInvalidErr'),
  rollup: () => jsError('JSMessageSchedulesRollupInvalidErr'),
  source: () => jsError('JSMessageSchedulesSourceInvalidErr'),
  timeZone: () => jsError('JSMessageSchedulesTimeZoneInvalidErr'),
};

/** The schedule headers of a publish (first value of each, exact case). */
export interface ScheduleHeaders {
  schedule?: string;
  scheduleTimeZone?: string;
  scheduleTtl?: string;
  scheduleRollup?: string;
  scheduleTarget?: string;
  scheduleSource?: string;
  scheduleNext?: string;
  scheduler?: string;
  rollup?: string;
}

export const SCHEDULE_HEADER_KEYS: Readonly<Record<string, keyof ScheduleHeaders>> = {
  'Nats-Schedule': 'schedule',
  'Nats-Schedule-Time-Zone': 'scheduleTimeZone',
  'Nats-Schedule-TTL': 'scheduleTtl',
  'Nats-Schedule-Rollup': 'scheduleRollup',
  'Nats-Schedule-Target': 'scheduleTarget',
  'Nats-Schedule-Source': 'scheduleSource',
  'Nats-Schedule-Next': 'scheduleNext',
  'Nats-Scheduler': 'scheduler',
};

/** Go's time.LoadLocation for a non-empty name. */
export function isTimeZone(name: string): boolean {
  if (name === 'UTC' || name === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** What a schedule stream checks of a publish; `rollupNeeded`: the message is a schedule, stored with `Nats-Rollup: sub`. */
export type ScheduleVerdict = { error: ApiError } | { rollupNeeded: boolean };

const NONE: ScheduleVerdict = { rollupNeeded: false };

/**
 * checkMsgHeadersPreClusteredProposal's schedule part, in its order, for a stream with `allowSchedules`
 * (without, the errors are 10188 where 2.14 says so). `subjects` are the stream's.
 */
export function scheduleHeaderVerdict(
  h: ScheduleHeaders,
  subject: string,
  allowSchedules: boolean,
  allowMsgTtl: boolean,
  subjects: readonly string[],
  nowMs: number,
): ScheduleVerdict {
  if (h.schedule !== undefined || h.scheduleTimeZone !== undefined) {
    let error: ApiError | null = null;
    const zone = h.scheduleTimeZone;
    if (zone !== undefined && (zone === '' || !isTimeZone(zone))) error = errors.timeZone();
    else if (h.schedule !== undefined && h.schedule !== '' && nextFiring(h.schedule, zone, nowMs, nowMs) === null) error = errors.pattern();
    if (error !== null) return { error: allowSchedules ? error : JsErrors.messageSchedulesDisabled() };
  }
  let rollupNeeded = false;
  if (h.schedule) {
    if (!allowSchedules) return { error: JsErrors.messageSchedulesDisabled() };
    if (h.scheduleTtl && parseMessageTtl(h.scheduleTtl) === 'invalid') return { error: errors.ttl() };
    if (h.scheduleRollup && h.scheduleRollup !== 'sub') return { error: errors.rollup() };
    if (h.scheduleTtl && !allowMsgTtl) return { error: JsErrors.messageTtlDisabled() };
    const target = h.scheduleTarget;
    if (!target || !isValidPublishSubjectName(target) || target === subject) return { error: errors.target() };
    const source = h.scheduleSource;
    if (source && (source === target || source === subject || !isValidPublishSubjectName(source))) return { error: errors.source() };
    if (!subjects.some((s) => subjectsCollide(s, target))) return { error: errors.target() };
    if (source && !subjects.some((s) => subjectsCollide(s, source))) return { error: errors.source() };
    if (h.rollup === undefined || h.rollup === '') rollupNeeded = true;
    else if (h.rollup !== 'sub') return { error: errors.rollup() };
  }
  if (h.scheduleNext) {
    if (h.scheduleNext !== 'purge') return { error: JsErrors.messageSchedulesSchedulerInvalid() };
    const s = h.scheduler;
    if (!s || s === subject || !isValidPublishSubjectName(s)) return { error: JsErrors.messageSchedulesSchedulerInvalid() };
    if (!allowSchedules) return { error: JsErrors.messageSchedulesDisabled() };
  } else if (h.scheduler) return { error: JsErrors.messageSchedulesSchedulerInvalid() };
  return rollupNeeded ? { rollupNeeded } : NONE;
}

/** checkStreamCfg's refusal for a schedule stream (10052), or null. */
export function scheduleConfigError(cfg: { allow_msg_schedules?: boolean; discard?: string }): ApiError | null {
  if (cfg.allow_msg_schedules === true && cfg.discard === 'new') return JsErrors.streamInvalidConfig('message scheduling cannot use discard new');
  return null;
}

// ---- the schedules of one stream ---------------------------------------------------------------------

/** 2.14 never arms its timer for less than this (a burst of due schedules is taken together). */
const MIN_TIMER_MS = 250;
/** A copy the writer refused is fired again after this long. */
const RETRY_MS = 1000;

interface Schedule {
  seq: number;
  dueMs: number;
  /** Its copy was handed to the writer and is not stored yet (no second copy meanwhile). */
  inFlight: boolean;
}

/** A copy to publish: `subject` the target. */
export interface ScheduledCopy {
  subject: string;
  header: Buffer;
  data: Buffer;
}

/**
 * Every replica's record of its stream's schedules (subject → the schedule message and its next firing),
 * kept from the messages as they are stored; the one next-due timer runs only while `start`ed (the leader).
 */
export class MsgSchedules {
  private readonly bySubject = new Map<string, Schedule>();
  private timer: NodeJS.Timeout | null = null;
  private timerDueMs = 0;
  private produce: ((copy: ScheduledCopy) => Promise<unknown>) | null = null;
  private firing = false;

  constructor(
    private readonly store: MessageStore,
    private readonly onError: (err: unknown) => void,
  ) {}

  get size(): number {
    return this.bySubject.size;
  }

  /** A message was stored (or applied) at `seq` with `timestampMs`: a schedule, a copy, or another message. */
  stored(seq: number, subject: string, header: Uint8Array | null, timestampMs: number): void {
    const pattern = headerValue(header, SCHEDULE_HEADER);
    const scheduler = headerValue(header, SCHEDULER_HEADER);
    if (pattern !== undefined && pattern !== '') {
      const next = nextFiring(pattern, headerValue(header, 'Nats-Schedule-Time-Zone'), timestampMs, Date.now());
      if (next !== null) this.bySubject.set(subject, { seq, dueMs: next.atMs, inFlight: false });
      else this.bySubject.delete(subject);
    } else if (scheduler === undefined || scheduler === '') {
      // A plain message (the common case): the timer only changes when it ended a schedule.
      if (this.bySubject.delete(subject)) this.arm();
      return;
    }
    const nextText = headerValue(header, SCHEDULE_NEXT_HEADER);
    if (scheduler !== undefined && scheduler !== '' && nextText !== undefined && nextText !== '') {
      const s = this.bySubject.get(scheduler);
      if (s !== undefined) {
        if (nextText === 'purge') this.bySubject.delete(scheduler);
        else {
          const at = parseRfc3339Ms(nextText);
          if (at !== null) {
            s.dueMs = at;
            s.inFlight = false;
          }
        }
      }
    }
    this.arm();
  }

  /** Reads the schedules back from the store (at start): the last message of each subject. */
  async rebuild(): Promise<void> {
    this.bySubject.clear();
    for (const seq of this.store.lastSeqsPerSubject('>')) {
      const m = await this.store.get(seq);
      if (m === null || headerValue(m.header, SCHEDULE_HEADER) === undefined) continue;
      this.stored(m.seq, m.subject, m.header, Number(m.timestampNs / 1_000_000n));
    }
  }

  /** This node leads: fire what is due through `produce` (the stream writer's ingest: stored like a sourced message). */
  start(produce: (copy: ScheduledCopy) => Promise<unknown>): void {
    this.produce = produce;
    for (const s of this.bySubject.values()) s.inFlight = false;
    this.arm();
  }

  stop(): void {
    this.produce = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One timer for the earliest schedule not in flight (a scan of the schedules: one per subject). */
  private arm(): void {
    if (this.produce === null || this.firing) return;
    let due = Infinity;
    for (const s of this.bySubject.values()) if (!s.inFlight && s.dueMs < due) due = s.dueMs;
    if (due === Infinity) {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      return;
    }
    if (this.timer !== null && this.timerDueMs <= due) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerDueMs = due;
    this.timer = setTimeout(() => void this.fire(), Math.max(MIN_TIMER_MS, due - Date.now()));
    this.timer.unref();
  }

  private async fire(): Promise<void> {
    this.timer = null;
    this.firing = true;
    try {
      const now = Date.now();
      const due = [...this.bySubject.entries()].filter(([, s]) => !s.inFlight && s.dueMs <= now).sort((a, b) => a[1].seq - b[1].seq);
      for (const [subject, s] of due) {
        if (this.produce === null) return;
        const copy = await this.copyOf(subject, s, now);
        if (copy === null) {
          if (this.bySubject.get(subject) === s) this.bySubject.delete(subject);
          continue;
        }
        if (this.bySubject.get(subject) !== s || s.inFlight || this.produce === null) continue;
        s.inFlight = true;
        const retry = (): void => {
          // Refused or lost before it was stored: fire it again a little later (not while stored meanwhile).
          if (this.bySubject.get(subject) !== s || !s.inFlight) return;
          s.inFlight = false;
          s.dueMs = Date.now() + RETRY_MS;
          this.arm();
        };
        try {
          this.produce(copy).catch(retry);
        } catch {
          retry();
        }
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.firing = false;
      this.arm();
    }
  }

  /** The copy of the schedule at `s`, or null when it is gone or no longer a valid schedule. */
  private async copyOf(subject: string, s: Schedule, nowMs: number): Promise<ScheduledCopy | null> {
    if (this.store.lastSeqForSubject(subject) !== s.seq) return null;
    const m = await this.store.get(s.seq);
    if (m === null) return null;
    const pattern = headerValue(m.header, SCHEDULE_HEADER);
    const target = headerValue(m.header, 'Nats-Schedule-Target');
    if (!pattern || !target) return null;
    const zone = headerValue(m.header, 'Nats-Schedule-Time-Zone');
    if (zone !== undefined && (zone === '' || !isTimeZone(zone))) return null;
    const next = nextFiring(pattern, zone, s.dueMs, nowMs);
    if (next === null) return null;
    const ttl = headerValue(m.header, 'Nats-Schedule-TTL');
    if (ttl && parseMessageTtl(ttl) === 'invalid') return null;
    const rollup = headerValue(m.header, 'Nats-Schedule-Rollup');
    const source = headerValue(m.header, 'Nats-Schedule-Source');
    let from = m;
    if (source) {
      const src = await this.store.lastBySubject(source);
      if (src !== null) from = src;
    }
    const kept = keptHeaderLines(from.header);
    kept.push(`${SCHEDULER_HEADER}: ${subject}`);
    kept.push(`${SCHEDULE_NEXT_HEADER}: ${next.repeat ? formatRfc3339Nano(next.atMs) : 'purge'}`);
    if (ttl) kept.push(`Nats-TTL: ${ttl}`);
    if (rollup) kept.push(`Nats-Rollup: ${rollup}`);
    const header = Buffer.from(`NATS/1.0\r\n${kept.join('\r\n')}\r\n\r\n`, 'latin1');
    return { subject: target, header, data: Buffer.from(from.data) };
  }
}

/** The header lines a copy keeps: all but Nats-Schedule*, Nats-Expected-*, Nats-Msg-Id, Nats-TTL, Nats-Rollup. */
function keptHeaderLines(block: Uint8Array): string[] {
  if (block.length === 0) return [];
  const lines = Buffer.from(block.buffer, block.byteOffset, block.byteLength).toString('latin1').split('\r\n').slice(1);
  return lines.filter((l) => {
    if (l === '') return false;
    const key = l.slice(0, Math.max(0, l.indexOf(':')));
    return !(key.startsWith('Nats-Schedule') || key.startsWith('Nats-Expected-') || key === 'Nats-Msg-Id' || key === 'Nats-TTL' || key === 'Nats-Rollup');
  });
}

/** Go's time.RFC3339Nano of a UTC time: fraction without trailing zeros, `Z`. */
export function formatRfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-02T12:00:00.500Z
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac === '' ? 'Z' : `.${frac}Z`));
}
