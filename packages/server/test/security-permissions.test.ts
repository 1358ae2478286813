// Permission matching as nats-server does it: publish allow/deny with wildcards, subscribe allow/deny with
// queue-group entries, the delivery filter for wildcard subscriptions over denied subjects, the bounded
// answer cache, and allow_responses permits.
import { describe, it, expect } from 'vitest';
import { UserPermissions } from '../src/security/user-permissions.js';
import { ResponsePermits } from '../src/security/response-permits.js';
import { SubjectRules } from '../src/security/subject-rules.js';

describe('publish permissions', () => {
  const p = new UserPermissions({ publish: { allow: ['foo.>', 'svc.*', '$JS.API.>'], deny: ['foo.secret', 'foo.private.>', '$JS.API.STREAM.DELETE.>'] } });

  it.each([
    ['foo.a', true],
    ['foo.a.b.c', true],
    ['svc.x', true],
    ['$JS.API.INFO', true],
    ['$JS.API.STREAM.CREATE.ORDERS', true],
    ['foo.secret', false],
    ['foo.private.x', false],
    ['foo.private', true], // "foo.private.>" needs one more token
    ['svc.x.y', false],
    ['foo', false],
    ['bar', false],
    ['$JS.API.STREAM.DELETE.ORDERS', false],
  ])('%s -> %s', (subject, allowed) => {
    expect(p.canPublish(subject)).toBe(allowed);
    expect(p.canPublish(subject)).toBe(allowed); // the cached answer agrees
  });

  it('no allow list means everything but the deny list', () => {
    const q = new UserPermissions({ publish: { deny: ['a.*'] } });
    expect(q.canPublish('a.b')).toBe(false);
    expect(q.canPublish('a.b.c')).toBe(true);
    expect(q.canPublish('zzz')).toBe(true);
  });

  it('an empty allow list (allow_responses without publish) refuses everything', () => {
    const q = new UserPermissions({ publish: { allow: [] }, allowResponses: { maxMsgs: 1, expiresMs: 1000 } });
    expect(q.canPublish('anything')).toBe(false);
    expect(q.responses).toEqual({ maxMsgs: 1, expiresMs: 1000 });
  });

  it('answers stay correct past the cache bound', () => {
    const q = new UserPermissions({ publish: { allow: ['ok.>'] } });
    // Bounded loop: more distinct subjects than the cache holds (4096).
    for (let i = 0; i < 6000; i++) expect(q.canPublish(i % 2 === 0 ? `ok.${i}` : `no.${i}`)).toBe(i % 2 === 0);
    expect(q.canPublish('ok.0')).toBe(true);
    expect(q.canPublish('no.1')).toBe(false);
  });
});

describe('subscribe permissions', () => {
  const p = new UserPermissions({
    subscribe: { allow: ['foo.>', 'q.* grp', 'v.* workers.*', '_INBOX.>'], deny: ['foo.hidden', 'foo.deny.* badq'] },
  });

  it.each([
    ['foo.x', null, true],
    ['foo.>', null, true],
    ['foo.*', null, true],
    ['foo.hidden', null, false],
    ['bar', null, false],
    ['q.a', 'grp', true],
    ['q.a', null, false], // only the queue group may
    ['q.a', 'other', false],
    ['v.a', 'workers.east', true], // queue names may match by wildcard
    ['v.a', 'builders', false],
    ['foo.x', 'anyq', true], // a plain allow admits any queue
    ['foo.deny.x', 'badq', false], // a queue deny entry refuses that queue
    ['foo.deny.x', 'goodq', true],
    ['foo.deny.x', null, true],
  ])('%s (queue %s) -> %s', (subject, queue, allowed) => {
    expect(p.canSubscribe(subject, queue)).toBe(allowed);
  });

  it('a wildcard subscription over a denied subject switches on the delivery filter', () => {
    expect(p.subscriptionNeedsDeliveryFilter('foo.*')).toBe(true);
    expect(p.subscriptionNeedsDeliveryFilter('foo.>')).toBe(true);
    expect(p.subscriptionNeedsDeliveryFilter('foo.x')).toBe(false); // literal: already checked
    expect(p.subscriptionNeedsDeliveryFilter('_INBOX.>')).toBe(false);
    expect(p.deniesDelivery('foo.hidden')).toBe(true);
    expect(p.deniesDelivery('foo.shown')).toBe(false);
  });

  it('without a deny list nothing is filtered', () => {
    const q = new UserPermissions({ subscribe: { allow: ['>'] } });
    expect(q.subscriptionNeedsDeliveryFilter('>')).toBe(false);
    expect(q.deniesDelivery('x')).toBe(false);
  });

  it('permission subjects are validated', () => {
    expect(() => new SubjectRules(['foo..bar'])).toThrow(/invalid permission subject/);
  });
});

describe('allow_responses permits', () => {
  it('one response per received reply subject by default', () => {
    const r = new ResponsePermits({ maxMsgs: 1, expiresMs: 120_000 });
    expect(r.use('reply.a', 0)).toBe(false);
    r.grant('reply.a', 0);
    expect(r.use('reply.a', 10)).toBe(true);
    expect(r.use('reply.a', 20)).toBe(false);
    expect(r.size).toBe(0);
  });

  it('max responses within expires', () => {
    const r = new ResponsePermits({ maxMsgs: 2, expiresMs: 1000 });
    r.grant('a', 0);
    r.grant('b', 0);
    expect(r.use('a', 100)).toBe(true);
    expect(r.use('a', 200)).toBe(true);
    expect(r.use('a', 300)).toBe(false);
    expect(r.use('b', 1001)).toBe(false); // expired
  });

  it('unlimited when max is 0 and expires is 0', () => {
    const r = new ResponsePermits({ maxMsgs: 0, expiresMs: 0 });
    r.grant('a', 0);
    for (let i = 0; i < 100; i++) expect(r.use('a', i * 1_000_000)).toBe(true);
  });

  it('is bounded: expired permits are pruned, then the oldest dropped', () => {
    const r = new ResponsePermits({ maxMsgs: 1, expiresMs: 1000 });
    for (let i = 0; i < 10_000; i++) r.grant(`reply.${i}`, i);
    expect(r.size).toBeLessThanOrEqual(4096);
    expect(r.use('reply.9999', 9999)).toBe(true);
  });
});
