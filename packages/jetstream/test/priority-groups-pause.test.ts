// The rules of consumer pause and priority groups as 2.14 applies them (consumer.go nextWaiting,
// processNextMsgRequest, insertSorted; jetstream_api.go jsConsumerPauseRequest), without a server.
import { describe, expect, it } from 'vitest';
import { isPausedAt, normalisePauseUntil, parsePauseRequest, pauseInfo, pauseResponse } from '../src/consumer/consumer-pause.js';
import { overflowAllows, pinDecision, pullPriorityRefusal, type PullPriority } from '../src/consumer/priority-groups.js';
import { PullRequestQueue, type PullRequest } from '../src/consumer/pull-request.js';
import type { ConsumerConfig } from '../src/consumer/consumer-config.js';

const p = (o: Partial<PullPriority> = {}): PullPriority => ({ group: 'jobs', minPending: 0, minAckPending: 0, id: '', priority: 0, ...o });
const base: ConsumerConfig = { deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 };

describe('pause', () => {
  it('keeps pause_until in UTC as Go prints it; only the zero time is unset', () => {
    expect(normalisePauseUntil('2030-01-02T03:04:05.120+01:00')).toBe('2030-01-02T02:04:05.12Z');
    expect(normalisePauseUntil('0001-01-01T00:00:00Z')).toBeUndefined();
    expect(normalisePauseUntil('1970-01-01T00:00:00.000Z')).toBe('1970-01-01T00:00:00Z');
    expect(normalisePauseUntil('tomorrow')).toBeNull();
  });

  it('is paused strictly before the deadline; info and response fields follow', () => {
    const until = '2030-01-01T00:00:01Z';
    const ms = Date.parse(until);
    expect(isPausedAt(until, ms - 1)).toBe(true);
    expect(isPausedAt(until, ms)).toBe(false);
    expect(pauseInfo(until, ms - 1000)).toEqual({ paused: true, pause_remaining: 1_000_000_000 });
    expect(pauseInfo(until, ms)).toEqual({});
    expect(pauseResponse(undefined, ms)).toEqual({ paused: false, pause_until: '0001-01-01T00:00:00Z' });
  });

  it('an empty or non-object body resumes; a bad time is invalid JSON', () => {
    expect(parsePauseRequest(Buffer.from(''))).toEqual({ pauseUntil: undefined });
    expect(parsePauseRequest(Buffer.from('x'))).toEqual({ pauseUntil: undefined });
    expect(parsePauseRequest(Buffer.from('{"pause_until":"2030-01-01T00:00:00Z"}'))).toEqual({ pauseUntil: '2030-01-01T00:00:00Z' });
    expect('error' in parsePauseRequest(Buffer.from('{"pause_until":"soon"}'))).toBe(true);
  });
});

describe('priority groups', () => {
  it('pull refusals in 2.14 order', () => {
    const overflow = { ...base, priority_policy: 'overflow' as const, priority_groups: ['jobs'] };
    const pinned = { ...base, priority_policy: 'pinned_client' as const, priority_groups: ['jobs'] };
    expect(pullPriorityRefusal(overflow, p({ group: '' }), '')).toEqual({ code: 400, text: 'Bad Request - Priority Group missing' });
    expect(pullPriorityRefusal(overflow, p({ group: 'x' }), '')).toEqual({ code: 400, text: 'Bad Request - Invalid Priority Group' });
    expect(pullPriorityRefusal(pinned, p({ minPending: 1 }), '')).toEqual({ code: 400, text: 'Bad Request - Not a Overflow Priority consumer' });
    expect(pullPriorityRefusal(pinned, p({ id: 'other' }), 'pin')).toEqual({ code: 423, text: 'Nats-Pin-Id mismatch' });
    expect(pullPriorityRefusal(pinned, p({ id: 'pin' }), 'pin')).toBeNull();
    // No pin yet: a request with an id is queued, and answered 423 Nats-Wrong-Pin-Id when it comes up.
    expect(pullPriorityRefusal(pinned, p({ id: 'old' }), '')).toBeNull();
    expect(pinDecision(p({ id: 'old' }), '')).toBe('wrong-pin');
    expect(pinDecision(p(), '')).toBe('assign');
    expect(pinDecision(p(), 'pin')).toBe('skip');
    expect(pinDecision(p({ id: 'pin' }), 'pin')).toBe('serve');
  });

  it('overflow serves a threshold request once either threshold is reached', () => {
    expect(overflowAllows(p(), 0, 0)).toBe(true);
    expect(overflowAllows(p({ minPending: 5 }), 4, 100)).toBe(false);
    expect(overflowAllows(p({ minPending: 5 }), 5, 0)).toBe(true);
    expect(overflowAllows(p({ minAckPending: 2 }), 0, 2)).toBe(true);
    expect(overflowAllows(p({ minPending: 5, minAckPending: 2 }), 1, 1)).toBe(false);
  });

  it('prioritized: lower numbers first, equal ones in arrival order, a partly served one back in its place', () => {
    const q = new PullRequestQueue(10);
    const req = (reply: string, priority: number, batch = 1): PullRequest => ({
      reply, batch, maxBytes: 0, noWait: false, expiresAtMs: 0, heartbeatMs: 0, nextHeartbeatAtMs: 0, delivered: 0, receivedAtMs: 0, priority: p({ priority }),
    });
    q.addSorted(req('a5', 5));
    q.addSorted(req('b1', 1, 2));
    q.addSorted(req('c5', 5));
    q.addSorted(req('d1', 1));
    expect(q.all().map((r) => r.reply)).toEqual(['b1', 'd1', 'a5', 'c5']);
    q.popOne(true);
    expect(q.all().map((r) => r.reply)).toEqual(['d1', 'b1', 'a5', 'c5']);
  });
});
