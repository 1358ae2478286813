import { describe, it, expect } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import {
  checkCreateRequest,
  checkStreamUpdate,
  normaliseStreamConfig,
  parseStreamConfigRequest,
  sameStreamConfig,
} from '../src/stream/stream-config.js';
import { subjectsCollide, subjectIsSubsetOf } from '../src/stream/subjects-collide.js';

function errorOf(fn: () => unknown): { code: number; errCode: number; description: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, errCode: err.errCode, description: err.description };
  }
}

const normalise = (body: object) => normaliseStreamConfig(parseStreamConfigRequest(body));

describe('stream config defaults', () => {
  it('matches the config nats-server 2.9.10 returns for {name, subjects}, plus 2.14\'s stored API level', () => {
    const cfg = normalise({ name: 'S1', subjects: ['s1.>'] });
    expect(cfg).toEqual({
      name: 'S1',
      subjects: ['s1.>'],
      retention: 'limits',
      max_consumers: -1,
      max_msgs: -1,
      max_bytes: -1,
      max_age: 0,
      max_msgs_per_subject: -1,
      max_msg_size: -1,
      discard: 'old',
      storage: 'file',
      num_replicas: 1,
      duplicate_window: 120_000_000_000,
      compression: 'none',
      allow_direct: false,
      mirror_direct: false,
      sealed: false,
      deny_delete: false,
      deny_purge: false,
      allow_rollup_hdrs: false,
      consumer_limits: {},
      metadata: { '_nats.req.level': '0' },
    });
  });

  it.each([
    ['subjects default to [name]', { name: 'A' }, { subjects: ['A'] }],
    ['empty subjects default to [name]', { name: 'A', subjects: [] }, { subjects: ['A'] }],
    ['0 limits become -1', { name: 'A', max_msgs: 0, max_bytes: 0, max_consumers: 0, max_msg_size: 0, max_msgs_per_subject: 0 }, { max_msgs: -1, max_bytes: -1, max_consumers: -1, max_msg_size: -1, max_msgs_per_subject: -1 }],
    ['replicas 0 → 1', { name: 'A', num_replicas: 0 }, { num_replicas: 1 }],
    ['window follows a smaller max_age', { name: 'A', max_age: 60_000_000_000 }, { duplicate_window: 60_000_000_000 }],
    ['window stays 2m under a larger max_age', { name: 'A', max_age: 600_000_000_000 }, { duplicate_window: 120_000_000_000 }],
    ['explicit window kept', { name: 'A', duplicate_window: 5_000_000_000 }, { duplicate_window: 5_000_000_000 }],
    ['memory storage', { name: 'A', storage: 'memory' }, { storage: 'memory' }],
    ['no_ack allows capturing >', { name: 'A', subjects: ['>'], no_ack: true }, { subjects: ['>'], no_ack: true }],
    ['$JS.EVENT subjects are allowed', { name: 'A', subjects: ['$JS.EVENT.ADVISORY.>'] }, { subjects: ['$JS.EVENT.ADVISORY.>'] }],
    ['metadata kept, with the required level', { name: 'A', metadata: { k: 'v' } }, { metadata: { k: 'v', '_nats.req.level': '0' } }],
    ['discard new per subject', { name: 'A', discard: 'new', max_msgs_per_subject: 1, discard_new_per_subject: true }, { discard_new_per_subject: true }],
  ])('%s', (_name, body, expected) => {
    expect(normalise(body)).toMatchObject(expected);
  });
});

/** nats-server 2.14's text for every refused stream name. */
const NAME_RULE = "stream name is required and can not contain '.', '*', '>', '\\', '/'";

describe('stream config validation', () => {
  it.each([
    ['bad retention enum', { name: 'A', retention: 'forever' }, 400, 10025, 'invalid JSON'],
    ['bad storage enum', { name: 'A', storage: 'disk' }, 400, 10025, 'invalid JSON'],
    ['wrong type', { name: 'A', max_msgs: 'ten' }, 400, 10025, 'invalid JSON'],
    ['subjects not strings', { name: 'A', subjects: [1] }, 400, 10025, 'invalid JSON'],
    ['empty name', { name: '' }, 500, 10052, NAME_RULE],
    ['dot in name', { name: 'a.b' }, 500, 10052, NAME_RULE],
    ['space in name', { name: 'a b' }, 500, 10052, NAME_RULE],
    ['slash in name', { name: 'a/b' }, 500, 10052, NAME_RULE],
    ['backslash in name', { name: 'a\\b' }, 500, 10052, NAME_RULE],
    ['NUL in name', { name: 'a\0b' }, 500, 10052, NAME_RULE],
    ['long name', { name: 'x'.repeat(256) }, 500, 10052, 'stream name is too long, maximum allowed is 255'],
    ['replicas > 5', { name: 'A', num_replicas: 6 }, 500, 10052, 'maximum replicas is 5'],
    ['tiny max_age', { name: 'A', max_age: 1_000 }, 500, 10052, 'max age needs to be >= 100ms'],
    ['negative window', { name: 'A', duplicate_window: -1 }, 500, 10052, 'duplicates window can not be negative'],
    ['window > max_age', { name: 'A', max_age: 1_000_000_000, duplicate_window: 2_000_000_000 }, 500, 10052, 'duplicates window can not be larger then max age'],
    ['tiny window', { name: 'A', duplicate_window: 1_000 }, 500, 10052, 'duplicates window needs to be >= 100ms'],
    ['rollup + deny_purge', { name: 'A', allow_rollup_hdrs: true, deny_purge: true }, 500, 10052, 'roll-ups require the purge permission'],
    ['per-subject discard needs discard new', { name: 'A', max_msgs_per_subject: 1, discard_new_per_subject: true }, 500, 10052, 'discard new per subject requires discard new policy to be set'],
    ['per-subject discard needs a limit', { name: 'A', discard: 'new', discard_new_per_subject: true }, 500, 10052, 'discard new per subject requires max msgs per subject > 0'],
    ['invalid subject', { name: 'A', subjects: ['a..b'] }, 500, 10052, 'invalid subject'],
    // nats-server 2.14 compares each subject with the later ones first: a duplicate is reported as an overlap.
    ['duplicate subjects', { name: 'A', subjects: ['a', 'a'] }, 500, 10052, 'subject "a" overlaps with "a"'],
    ['overlapping own subjects', { name: 'A', subjects: ['a.*', 'a.b'] }, 500, 10052, 'subject "a.*" overlaps with "a.b"'],
    ['the first subject with a later overlap, and its first one', { name: 'A', subjects: ['x', 'b.c', 'a.>', 'b.*', 'a.q', 'b.c'] }, 500, 10052, 'subject "b.c" overlaps with "b.*"'],
    ['an overlap before a later invalid subject', { name: 'A', subjects: ['q.*', 'q.r', 'a..b'] }, 500, 10052, 'subject "q.*" overlaps with "q.r"'],
    ['an invalid subject before a later overlap', { name: 'A', subjects: ['a..b', 'q.*', 'q.r'] }, 500, 10052, 'invalid subject'],
    ['a wildcard over the $JS API needs no_ack', { name: 'A', subjects: ['*.API.x'] }, 500, 10052, 'subjects that overlap with jetstream api require no-ack to be true'],
    ['$NRG needs no_ack', { name: 'A', subjects: ['$NRG.>'] }, 500, 10052, 'subjects that overlap with jetstream api require no-ack to be true'],
    ['> needs no_ack', { name: 'A', subjects: ['>'] }, 500, 10052, 'capturing all subjects requires no-ack to be true'],
    ['$JS API needs no_ack', { name: 'A', subjects: ['$JS.API.>'] }, 500, 10052, 'subjects that overlap with jetstream api require no-ack to be true'],
    ['$SYS needs no_ack', { name: 'A', subjects: ['$SYS.REQ.>'] }, 500, 10052, 'subjects that overlap with system api require no-ack to be true'],
  ])('%s', (_name, body, code, errCode, description) => {
    expect(errorOf(() => normalise(body))).toEqual({ code, errCode, description });
  });

  it('create refuses sealed and mirror_direct without a mirror', () => {
    expect(errorOf(() => checkCreateRequest(parseStreamConfigRequest({ name: 'A', sealed: true })))?.description).toBe(
      'stream configuration for create can not be sealed',
    );
    expect(errorOf(() => checkCreateRequest(parseStreamConfigRequest({ name: 'A', mirror_direct: true })))?.description).toBe(
      'stream has no mirror but does have mirror direct',
    );
  });

  it('parsing rejects non-objects', () => {
    expect(errorOf(() => parseStreamConfigRequest([]))?.errCode).toBe(10025);
    expect(errorOf(() => parseStreamConfigRequest('x'))?.errCode).toBe(10025);
  });
});

describe('stream update rules', () => {
  const base = normalise({ name: 'U', subjects: ['u.>'], deny_delete: true });
  it.each([
    ['storage', { storage: 'memory' }, 'stream configuration update can not change storage type'],
    ['max_consumers', { max_consumers: 5 }, 'stream configuration update can not change MaxConsumers'],
    ['retention to workqueue', { retention: 'workqueue' }, 'stream configuration update can not change retention policy to/from workqueue'],
    ['cancel deny_delete', { deny_delete: false }, 'stream configuration update can not cancel deny message deletes'],
  ])('refuses changing %s', (_name, change, description) => {
    const next = normalise({ ...base, ...change });
    expect(errorOf(() => checkStreamUpdate(base, next))).toEqual({ code: 500, errCode: 10052, description });
  });

  it('allows limits, subjects, retention limits→interest', () => {
    const next = normalise({ ...base, subjects: ['u.>', 'v'], max_msgs: 10, retention: 'interest', description: 'x' });
    expect(checkStreamUpdate(base, next)).toMatchObject({ subjects: ['u.>', 'v'], max_msgs: 10, retention: 'interest' });
  });

  it('sealing forces deny_delete, deny_purge, discard new, no max_age, no rollup', () => {
    const old = normalise({ name: 'U', max_age: 60_000_000_000, allow_rollup_hdrs: true });
    const sealed = checkStreamUpdate(old, normalise({ ...old, sealed: true }));
    expect(sealed).toMatchObject({ sealed: true, deny_delete: true, deny_purge: true, discard: 'new', max_age: 0, allow_rollup_hdrs: false });
    expect(errorOf(() => checkStreamUpdate(sealed, normalise({ ...sealed, sealed: false })))?.description).toBe(
      'stream configuration update can not unseal a sealed stream',
    );
  });

  it('identical configs compare equal after normalisation', () => {
    expect(sameStreamConfig(normalise({ name: 'A' }), normalise({ name: 'A', subjects: ['A'], max_msgs: 0 }))).toBe(true);
    expect(sameStreamConfig(normalise({ name: 'A' }), normalise({ name: 'A', max_msgs: 5 }))).toBe(false);
  });
});

describe('subject collisions', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.>', 'a.b.c', true],
    ['a.*', 'a.b.c', false],
    ['a.b', 'a.c', false],
    ['>', 'x', true],
    ['a.*.c', 'a.b.*', true],
    ['$O.ob1.M.>', '$O.ob1.M.>', true],
    ['$O.ob1.M.>', '$O.ob1.C.>', false],
  ])('%s vs %s → %s', (a, b, expected) => {
    expect(subjectsCollide(a, b)).toBe(expected);
    expect(subjectsCollide(b, a)).toBe(expected);
  });

  it('subset match', () => {
    expect(subjectIsSubsetOf('$JS.API.>', '$JS.>')).toBe(true);
    expect(subjectIsSubsetOf('$JS.EVENT.x', '$JS.EVENT.>')).toBe(true);
    expect(subjectIsSubsetOf('>', '$JS.>')).toBe(false);
    expect(subjectIsSubsetOf('a.*', 'a.b')).toBe(false);
  });
});
